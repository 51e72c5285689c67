"""Course upkeep: the notebooks' claims and times, the results' status and provenance, the GPU and
browser checks, the README's pictures (``python tools/NAME.py``; CONTRIBUTING.md, "Scripts").
``tools.provenance`` holds what the scripts of ``experiments/``, ``benchmarks/`` and ``tools/`` share."""
