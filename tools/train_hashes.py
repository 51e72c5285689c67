"""Hashes of short training runs, one per model, to show that a refactoring changed no number.

    OMP_NUM_THREADS=1 python tools/train_hashes.py > before.json    # on the old checkout
    OMP_NUM_THREADS=1 python tools/train_hashes.py --compare before.json

Each run trains through the command line (``python -m dca_course train ...``, in this process) on
data sets cut to a few examples, one thread, seed 0, then hashes the trained parameters (every
tensor of the checkpoint's ``model``, by name) and the outputs: the final metrics line and the
checkpoint's training history, with wall-clock seconds and the run folders left out.  Equal hashes before and after a
change mean the same parameters bit for bit and the same losses, metrics and decoded outputs.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

TINY = ["--epochs", "1", "--batch-size", "4", "--emb-size", "8", "--hidden-size", "8", "--seed", "0"]
SUMMARY = ["--beam-size", "2", "--max-decode", "8", "--vocab-size", "300"]
RUNS = {
    "seq2seq": ["seq2seq", "--data", "toy:dates"],
    "gru-lm": ["gru-lm", "--data", "toy:dates"],
    "dmn": ["dmn", "--data", "babi:1"],
    "dmn+extensions": ["dmn", "--data", "babi:2", "--variant", "dmn+", "--dmn-input", "fusion",
                       "--dmn-memory-update", "relu", "--gate-features", "dmn+", "--time-features", "--word-match",
                       "--dmn-episode-reads", "sentences", "--dropout", "0.1"],
    "copynet": ["copynet", "--data", "synthnews", *SUMMARY],
    "pointer-generator+coverage": ["pointer-generator", "--coverage", "--no-input-feeding", "--data", "synthnews", *SUMMARY],
    "pointer-generator+input-feeding": ["pointer-generator", "--input-feeding", "--data", "synthnews", *SUMMARY],
    "pointer-generator--no-pointer": ["pointer-generator", "--no-pointer", "--no-input-feeding", "--data", "synthnews", *SUMMARY],
    "dca": ["dca", "--data", "synthnews", *SUMMARY, "--agents", "2", "--cohesion", "0.5"],
    "dca+rl": ["dca", "--rl", "--init", "{dca}", "--data", "synthnews", *SUMMARY, "--agents", "2",
               "--rl-samples", "2"],
    "dca+rl+intermediate": ["dca", "--rl", "--init", "{dca}", "--data", "synthnews", *SUMMARY, "--agents", "2",
                            "--rl-samples", "2", "--intermediate-rewards", "--baseline", "greedy"],
}


def small_data():
    from dca_course.data import specs

    specs.TOY_SIZES["fast"] = (40, 4, 6)
    specs.SYNTHNEWS_SIZES["fast"] = (6, 2, 3)
    specs.BABI_SIZES["fast"] = (12, 4, 6)


def tensor_hash(obj, h) -> None:
    if isinstance(obj, torch.Tensor):
        h.update(str(obj.dtype).encode() + str(tuple(obj.shape)).encode())
        h.update(obj.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes() if obj.numel() else b"")
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            h.update(str(key).encode())
            tensor_hash(obj[key], h)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            tensor_hash(item, h)
    else:
        h.update(repr(obj).encode())


def without_seconds(obj):
    if isinstance(obj, dict):
        return {k: without_seconds(v) for k, v in obj.items() if "seconds" not in k and k not in ("elapsed", "out", "init")}
    if isinstance(obj, list):
        return [without_seconds(v) for v in obj]
    return obj


def run_all(names) -> dict:
    from dca_course.__main__ import main
    from dca_course.train import load_checkpoint

    small_data()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            folder = Path(tmp) / name
            argv = [a.format(dca=Path(tmp) / "dca") for a in RUNS[name]]
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
                code = main(["train", *argv, *TINY, "--limit-train", "6", "--device", "cpu", "--quiet",
                             "--out", str(folder)])
            if code != 0:
                raise SystemExit(f"{name}: exit {code}")
            metrics = without_seconds(json.loads(buf.getvalue().strip().splitlines()[-1]))
            state = load_checkpoint(folder / "last.pt")
            params = hashlib.sha256()
            tensor_hash(state["model"] or state.get("per_task"), params)
            outputs = hashlib.sha256(json.dumps([metrics, without_seconds(state.get("history"))],
                                                sort_keys=True, default=str).encode())
            out[name] = {"parameters": params.hexdigest()[:16], "outputs": outputs.hexdigest()[:16]}
            print(f"{name:34s} parameters {out[name]['parameters']}  outputs {out[name]['outputs']}",
                  file=sys.stderr, flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", type=Path, help="a stored output of this script: print the runs that differ")
    parser.add_argument("--runs", nargs="*", default=list(RUNS), choices=list(RUNS))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    names = list(args.runs)
    if any("{dca}" in a for n in names for a in RUNS[n]) and "dca" not in names:
        names.insert(0, "dca")
    result = run_all(names)
    print(json.dumps(result, indent=2, sort_keys=True))
    if args.compare:
        stored = json.loads(args.compare.read_text(encoding="utf-8"))
        differ = [n for n in result if stored.get(n) != result[n]]
        print(f"{len(result) - len(differ)} of {len(result)} runs identical" +
              (f"; DIFFERENT: {', '.join(differ)}" if differ else ""), file=sys.stderr)
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
