"""Speed benchmarks: scripts that time the course's code and store their figures in ``results/``
(``python benchmarks/NAME.py``; CONTRIBUTING.md, "Scripts").  ``benchmarks.timing`` holds what they share."""
