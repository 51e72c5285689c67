"""The shipped checkpoint of a 3-agent DCA on SynthNews-long (notebook 06 looks inside it).

    python benchmarks/dca_checkpoint.py make RUN_DIR     # slim RUN_DIR/last.pt into data/checkpoints/, with its JSON
    python benchmarks/dca_checkpoint.py check            # recompute the stored check values (tests do the same)
    python benchmarks/dca_checkpoint.py inspect [--pg400 RUN]   # what it shows: agent attention, late facts, messages

``make`` keeps what ``dca_course.recipes.load_run`` needs (the weights, the configs, the vocabulary; no
optimizer state), so ``python -m dca_course evaluate data/checkpoints/dca3-synthnews-long`` works on it,
and writes ``checkpoint.json`` beside it: the command, the configs, the commit and machine it was trained
on, its metrics on the whole test split (the run's own ``metrics.json``) and check values on a fixed
small set (the first 16 test articles): the teacher-forced loss and the greedy summaries, which
``tests/test_dca_checkpoint.py`` recomputes on the CPU and compares.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from common import RESULTS, ROOT, write_json, write_text

import torch  # noqa: E402

from dca_course.data.synthnews import load_synthnews, slot_contexts  # noqa: E402
from dca_course.decoding import greedy  # noqa: E402
from dca_course.losses import sequence_nll  # noqa: E402
from dca_course.metrics import fact_metrics, misattribution  # noqa: E402
from dca_course.recipes import load_run  # noqa: E402
from dca_course.train import save_checkpoint  # noqa: E402

FOLDER = ROOT / "data" / "checkpoints" / "dca3-synthnews-long"
COMMAND = ("python -m dca_course train dca --agents 3 --data synthnews-long --profile fast --device cpu --seed 0 "
           "--out runs/ckpt-dca3-fast-s0")
PG400_COMMAND = ("python -m dca_course train pointer-generator --coverage --epochs 5 --coverage-epochs 1 --max-src 400 "
                 "--data synthnews-long --profile fast --device cpu --seed 0")
N_CHECK = 16                     # the fixed set: the first 16 test articles of synthnews-long, seed 0
KEEP = ("model", "recipe", "hparams", "model_config", "vocab", "data", "seed", "epoch", "history")


def check_set():
    """The first N_CHECK test articles of the checkpoint's data (the test split has its own random stream)."""
    return load_synthnews(0, 0, N_CHECK, seed=0, long=True)[2]


@torch.no_grad()
def check_values(folder: Path = FOLDER) -> dict:
    """On the CPU: the teacher-forced loss and the greedy summaries of the fixed set, and their fact scores."""
    recipe, model, vocab, _ = load_run(folder, "cpu")
    model.eval()
    examples = check_set()
    batch = recipe.make_batch(examples, vocab)
    loss = sequence_nll(model(batch)["log_probs"], batch.tgt_out, batch.tgt_mask).item()
    max_len, _ = recipe.decode_lengths()
    decoded = greedy(model, batch, max_len)
    preds = [vocab.decode(ids, oovs) for ids, oovs in zip(decoded.ids, batch.oovs)]
    return {"articles": N_CHECK, "teacher_forced_nll": loss, "greedy_summaries": [" ".join(p) for p in preds],
            **{f"greedy_{k}": v for k, v in {**fact_metrics(preds, examples),
                                             **misattribution(preds, examples, slot_contexts)}.items()}}


def make(run: Path) -> None:
    state = torch.load(run / "last.pt", map_location="cpu", weights_only=True)
    FOLDER.mkdir(parents=True, exist_ok=True)
    save_checkpoint(FOLDER / "last.pt", {k: state[k] for k in KEEP if k in state})
    metrics = json.loads((run / "metrics.json").read_text())
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    info = {
        "what": "a 3-agent DCA (Celikyilmaz et al. 2018) trained on SynthNews-long by the command line, fast profile",
        "command": COMMAND, "trained_at_commit": os.environ.get("TRAINED_AT", commit), "made_at_commit": commit,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, OMP_NUM_THREADS=1",
        "torch": torch.__version__, "hparams": state["hparams"], "model_config": state["model_config"],
        "parameters": sum(t.numel() for t in state["model"].values()),
        "file": {"name": "last.pt", "bytes": (FOLDER / "last.pt").stat().st_size,
                 "sha256": hashlib.sha256((FOLDER / "last.pt").read_bytes()).hexdigest()},
        "test_metrics": metrics, "check": check_values(FOLDER),
    }
    write_json(FOLDER / "checkpoint.json", info)
    print(json.dumps({k: info[k] for k in ("file", "parameters")}, indent=1))


def check() -> int:
    stored = json.loads((FOLDER / "checkpoint.json").read_text())["check"]
    now = check_values(FOLDER)
    same = (abs(now["teacher_forced_nll"] - stored["teacher_forced_nll"]) <= 1e-5 * stored["teacher_forced_nll"]
            and now["greedy_summaries"] == stored["greedy_summaries"])
    print(json.dumps({k: (now[k], stored[k]) for k in now if k != "greedy_summaries"}, indent=1))
    print("the same as stored:", same)
    return 0 if same else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("make").add_argument("run", type=Path)
    sub.add_parser("check")
    sub.add_parser("inspect").add_argument("--pg400", type=Path, default=None,
                                           help=f"a run folder of `{PG400_COMMAND}`, to compare")
    args = parser.parse_args(argv)
    if args.command == "make":
        make(args.run)
        return 0
    if args.command == "check":
        return check()
    import contextlib
    import io

    from dca_checkpoint_inspect import inspect   # what the checkpoint shows (a longer script, beside this one)
    with contextlib.redirect_stdout(io.StringIO()) as report:
        inspect(FOLDER, args.pg400)
    print(report.getvalue())
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    pg = f" --pg400 RUN` (RUN: a run of `{PG400_COMMAND}`)" if args.pg400 else "`"
    write_text(RESULTS / "dca_checkpoint_inspect.md",
               f"# What the shipped 3-agent DCA shows\n\nProduced by `python benchmarks/dca_checkpoint.py inspect{pg} "
               f"at commit {commit[:10]} on {platform.machine()}, {os.cpu_count()} CPUs, from "
               f"`data/checkpoints/dca3-synthnews-long`.\n\n```\n{report.getvalue().strip()}\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
