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
from dca_course.losses import coverage_loss, teacher_forced_nll  # noqa: E402

__all__ = ["ROOT", "RESULTS", "repo_path", "cpu_name", "machine_speed", "write_json", "write_lines", "write_text",
           "write_report", "sync", "time_per_call", "StepTimer", "random_batches", "length_bucketed_batches"]


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
def repo_path(path) -> str:
    """``path`` as results store it: relative to the repository (``../shared/data/babi`` for a
    folder beside the checkout), never absolute, so that a results file names no home folder."""
    return Path(os.path.relpath(Path(path).expanduser().resolve(), ROOT)).as_posix()


def write_report(folder: Path, name: str, data, markdown: str) -> tuple[Path, Path]:
    """``folder/name.json`` (indented, sorted keys) and ``folder/name.md``, each written atomically."""
    return write_json(Path(folder) / f"{name}.json", data), write_text(Path(folder) / f"{name}.md", markdown)


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
        self.model = self.recipe.build_model(self.vocab).to(self.device).set_coverage(coverage)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.config.lr)
        self.model.train()

    def step(self, batch):
        """Forward with teacher forcing, NLL (+ coverage loss), backward, clipping, Adam: the
        recipe's training step (its loss without the ``.item()`` calls)."""
        out = self.model(batch, log_probs=False)
        loss = teacher_forced_nll(out, batch.tgt_out, batch.tgt_mask)
        if self.model.coverage:
            loss = loss + self.config.coverage_weight * coverage_loss(out["attn"], out["coverage"], batch.tgt_mask)
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
