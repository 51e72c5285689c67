"""What the benchmark scripts share: where things are, the machine they ran on, how results are
written, and the timing of training steps.

The scripts run as ``python benchmarks/NAME.py``.  Python puts a script's own folder first on
``sys.path``, so ``from common import ...`` finds this file with no path manipulation.  What one
script used to import from another lives here now; the one module still imported by a script
is ``notebook_times``, which owns the measured notebook-time table that ``notebook_claims``
updates (imported the same way, as a plain module of this folder).

This module puts the repository root on ``sys.path`` (the one path line of the benchmarks), so
that a script measures the ``dca_course`` of the checkout it lives in, installed or not.
Import it before ``dca_course``.
"""
from __future__ import annotations

import json
import os
import platform
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from dca_course.io import write_json, write_lines, write_text  # noqa: E402  (re-exported for the scripts)

__all__ = ["ROOT", "RESULTS", "repo_path", "cpu_name", "machine_speed", "write_json", "write_lines", "write_text",
           "write_report", "write_result_json", "provenance", "command_line", "machine", "generated_by", "sync", "time_per_call", "StepTimer", "random_batches", "length_bucketed_batches"]


# -- the machine -----------------------------------------------------------------------------------
def cpu_name() -> str:
    """The processor's name where the system gives one (often empty on Linux), else the architecture."""
    return platform.processor() or platform.machine()


def machine_speed() -> float | None:
    """Milliseconds of one `lstm_limit.py --profile fast` training step here: the machine's speed."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lstm_limit.py"), "--steps", "10",
                           "--articles", "200"], capture_output=True, text=True, cwd=ROOT)
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            return round(json.loads(line)["model_step_ms"], 1)
    return None


# -- results ---------------------------------------------------------------------------------------
#: The code a result measures (repository paths), for its provenance's ``measures``.
TRAINING_CODE = ["dca_course/nn", "dca_course/losses.py", "dca_course/decoding.py", "dca_course/train.py",
                 "dca_course/recipes/base.py", "dca_course/recipes/config.py", "dca_course/data/batching.py",
                 "dca_course/data/vocab.py", "dca_course/metrics.py"]
POINTER_GENERATOR_CODE = TRAINING_CODE + ["dca_course/models/pointer_generator.py", "dca_course/recipes/copying.py",
                                          "dca_course/data/synthnews", "dca_course/fast"]
SUMMARIZER_CODE = POINTER_GENERATOR_CODE + ["dca_course/models/copynet.py", "dca_course/models/dca.py",
                                            "dca_course/recipes/dca.py", "dca_course/data/agents.py"]
DMN_CODE = TRAINING_CODE + ["dca_course/models/dmn.py", "dca_course/models/dmn_gate.py", "dca_course/models/extensions",
                            "dca_course/models/dmn_eval.py", "dca_course/recipes/dmn.py", "dca_course/data/babi"]


def repo_path(path) -> str:
    """``path`` as results store it: relative to the repository (``../shared/data/babi`` for a
    folder beside the checkout), never absolute, so that a results file names no home folder."""
    return Path(os.path.relpath(Path(path).expanduser().resolve(), ROOT)).as_posix()


def git_commit() -> tuple[str | None, bool]:
    """(HEAD's commit, whether the checkout has uncommitted changes to tracked files); (None, False)
    outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=ROOT, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None, False
    return head.stdout.strip(), bool(dirty.stdout.strip())


def command_line(script: str, argv=None) -> str:
    """``python benchmarks/SCRIPT.py ARGS`` as it was run (``argv``: the arguments, default
    ``sys.argv[1:]``), absolute paths made relative to the repository (see :func:`repo_path`)."""
    args = sys.argv[1:] if argv is None else list(argv)
    shown = [repo_path(a) if os.path.isabs(a) else a for a in map(str, args)]
    return " ".join(["python", f"benchmarks/{Path(script).name}", *(shlex.quote(a) for a in shown)])


def machine() -> dict:
    """What the run ran on: processor, cores, torch's threads, the OS, Python, PyTorch, and the GPU."""
    return {"cpu": cpu_name(), "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "system": platform.system(), "python": platform.python_version(), "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def provenance(command: str, config: dict | None, measures: list[str]) -> dict:
    """What made a result: the commit (and whether the checkout had changes), the command, the
    full configuration, the machine, the date, and ``measures``: the repository paths whose code
    the result measures (``make results-status`` lists a result older than their last change)."""
    commit, dirty = git_commit()
    return {"commit": commit, "uncommitted_changes": dirty, "command": command,
            "config": _relative(json.loads(json.dumps(config, default=str))) if config is not None else None,
            "machine": machine(), "date": time.strftime("%Y-%m-%d", time.gmtime()), "measures": list(measures)}


def _relative(obj):
    """Absolute paths in a configuration made relative to the repository."""
    if isinstance(obj, dict):
        return {k: _relative(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_relative(v) for v in obj]
    return repo_path(obj) if isinstance(obj, str) and os.path.isabs(obj) else obj


def generated_by(command: str, notes: str | None = None) -> str:
    """The line a generated Markdown file starts with (after its title)."""
    line = f"Generated by `{command}`; do not edit: a new run rewrites this file."
    if notes:
        line += f" Hand-written notes on it: [{notes}]({notes})."
    return line


def with_generated_line(markdown: str, command: str, notes: str | None = None) -> str:
    """``markdown`` with :func:`generated_by`'s line after its ``# title`` (or first)."""
    lines = markdown.split("\n")
    at = 2 if lines and lines[0].startswith("# ") else 0
    return "\n".join(lines[:at] + [generated_by(command, notes), ""] + lines[at:])


def write_result_json(path: Path, data: dict, *, command: str, config: dict | None, measures: list[str]) -> Path:
    """``data`` with its ``provenance`` (:func:`provenance`) as indented JSON, atomically."""
    return write_json(path, dict(data, provenance=provenance(command, config, measures)))


def write_report(folder: Path, name: str, data, markdown: str, *, command: str, config: dict | None,
                 measures: list[str]) -> tuple[Path, Path]:
    """``folder/name.json`` (with its provenance) and ``folder/name.md`` (with its "Generated by"
    line), each written atomically.  Hand-written notes live in ``name_notes.md`` beside them,
    which no script writes; the Markdown links it when it is there."""
    folder = Path(folder)
    notes = f"{name}_notes.md" if (folder / f"{name}_notes.md").is_file() else None
    return (write_result_json(folder / f"{name}.json", data, command=command, config=config, measures=measures),
            write_text(folder / f"{name}.md", with_generated_line(markdown, command, notes)))


# -- timing training steps -------------------------------------------------------------------------
def sync(device) -> None:
    """Wait for the GPU's queued work, so that a timer stops when the work is done."""
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_per_call(run, items, device) -> float:
    """Mean seconds per call of ``run`` over ``items[2:]``, after ``items[:2]`` as warm-up."""
    for item in items[:2]:
        run(item)
    sync(device)
    start = time.perf_counter()
    for item in items[2:]:
        run(item)
    sync(device)
    return (time.perf_counter() - start) / max(1, len(items) - 2)


class StepTimer:
    """One pointer-generator (+ coverage) and its optimizer, to time full training steps."""

    def __init__(self, train, profile="fast", overrides=None, coverage=True, device=None):
        import dca_course
        from dca_course.recipes import PointerGeneratorConfig, PointerGeneratorRecipe
        from dca_course.registry import Dataset

        self.device = device or dca_course.device()
        self.config = PointerGeneratorConfig.from_profile(profile, overrides or {})
        self.recipe = PointerGeneratorRecipe(self.config)
        self.vocab = self.recipe.build_vocab(Dataset("synthnews", "summaries", train, [], []))
        # the recipe's model as it trains: fast unless the overrides turn fast_path off
        self.model = self.recipe.accelerated(self.recipe.build_model(self.vocab)).to(self.device).set_coverage(coverage)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.config.lr)
        self.model.train()

    def step(self, batch):
        """Forward with teacher forcing, NLL (+ coverage loss), backward, clipping, Adam: the
        recipe's training step (its loss without the ``.item()`` calls)."""
        loss = self.recipe.loss(self.model, batch)[0]          # the recipe's loss, without its .item() calls
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip)
        self.optimizer.step()

    def tokens_per_second(self, groups, steps, include_batching=False):
        """Real target tokens per second over ``steps`` steps after 2 warm-up steps.  With
        ``include_batching`` the time also counts turning examples into tensors (what a
        toolkit that batches on the fly reports)."""
        make = lambda g: self.recipe.make_batch(g, self.vocab).to(self.device)   # noqa: E731
        groups = groups[: steps + 2]
        batches = [make(g) for g in groups]
        tokens = sum(int(b.tgt_mask.sum()) for b in batches[2:])
        if include_batching:
            seconds = time_per_call(lambda g: self.step(make(g)), groups, self.device)
        else:
            seconds = time_per_call(self.step, batches, self.device)
        return tokens / (seconds * (len(batches) - 2))


def random_batches(examples, batch_size, seed=0):
    """Full batches of examples in a seeded random order."""
    shuffled = examples[:]
    random.Random(seed).shuffle(shuffled)
    return [shuffled[i: i + batch_size] for i in range(0, len(shuffled) - batch_size + 1, batch_size)]


def length_bucketed_batches(examples, batch_size, seed=0):
    """Full batches of similar source lengths, in a seeded random order (the recipe's ``bucket`` option)."""
    from dca_course.recipes import source_length_buckets

    groups = [g for g in source_length_buckets(examples, batch_size, seed) if len(g) == batch_size]
    random.Random(seed).shuffle(groups)
    return groups
