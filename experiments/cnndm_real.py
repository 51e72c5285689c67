"""A small real-data check on CNN/DailyMail: the pointer-generator + coverage against lead-3.

    python experiments/cnndm_real.py ../shared/data/cnndm [--epochs 2] [--device cpu]
    python experiments/cnndm_real.py ../shared/data/cnndm --seeds 0 1 --input-feeding on off --jobs 4 --device cuda

Trains on lines 1-10,000 of ``test.source`` / ``test.target.sents.tsv`` (the only split the
sample folder holds) and evaluates on lines 10,001-11,490, next to lead-3 (the first three
sentences of each article) on the same lines.  **Not comparable with the papers' tables**:
they train on 287,226 training articles and test on all 11,490 test articles, and here the
model has never seen a training article, only other test articles, for minutes on a CPU.
It is a check that the whole pipeline (reader, 400/100 truncation, copying, coverage, beam
search, ROUGE) works on real news, and a measure of how far a CPU gets in bounded time.

With the full data set (the Hugging Face copy through ``python -m dca_course data download
cnndm --out DIR``, or ``.story`` folders), train on the real split instead:

    python -m dca_course train pointer-generator --coverage --data cnndm:DIR --profile full --device cuda

Results go to ``results/cnndm_real.{md,json}``.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
from pathlib import Path
import sys

import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import POINTER_GENERATOR_CODE, ROOT, command_line, write_report  # noqa: E402

import dca_course
from dca_course import metrics
from dca_course.data.cnndm import load_cnndm, truncate
from dca_course.recipes import PointerGeneratorConfig, PointerGeneratorRecipe
from dca_course.registry import Dataset
N_TRAIN, N_TEST = 10_000, 1_490
KEYS = ("rouge1", "rouge2", "rougeL", "rougeLsum", "repeated_trigrams", "novel_bigrams")


def lead3(examples) -> dict:
    """ROUGE of the first three sentences of each article (See et al.'s lead-3 baseline)."""
    preds = [[t for s in [s for p in ex.paragraphs for s in p][:3] for t in s] for ex in examples]
    return metrics.summary_metrics(preds, [ex.summary_text() for ex in examples], [ex.source for ex in examples])


def run_one(args, seed: int, input_feeding: bool) -> dict:
    """Train one pointer-generator + coverage (one seed, input feeding on or off) and score it."""
    dca_course.configure_process()      # a spawned worker: its own process, its own settings
    torch.set_num_threads(args.threads)
    device = dca_course.device(args.device)
    dca_course.seed_everything(seed)
    data = load_sample(args.folder, *args.lines)
    config = make_config(args, input_feeding)
    started = time.perf_counter()
    out_dir = ROOT / "runs" / "cnndm_real" / f"seed{seed}-feed{'on' if input_feeding else 'off'}"
    result = PointerGeneratorRecipe(config).train(data, device, out_dir, seed=seed, resume=False, progress=False)
    return {"seed": seed, "input_feeding": input_feeding, "device": device.type,
            "model": {k: round(result[k], 4) for k in KEYS}, "epochs_run": result["epochs"],
            "train_seconds": result["train_seconds"], "wall_seconds": round(time.perf_counter() - started, 1)}


def load_sample(folder: Path, n_train: int, n_test: int) -> Dataset:
    train = [truncate(ex, 400, 100) for ex in load_cnndm(folder, "test", limit=n_train)]
    test = load_cnndm(folder, "test", limit=n_test, start=n_train)   # whole references, as See et al.
    return Dataset("cnndm-sample", "summaries", train, [], test, meta=dict(min_decode=35, max_decode=120))


def make_config(args, input_feeding: bool) -> PointerGeneratorConfig:
    return PointerGeneratorConfig.from_profile(args.profile, {
        "coverage": True, "epochs": args.epochs, "vocab_size": args.vocab_size, "beam_size": args.beam_size,
        "input_feeding": input_feeding})


def _run_one(job):
    return run_one(*job)


def mean_spread(values: list[float]) -> tuple[float, float]:
    """The mean and half the range (max - min) / 2 of a few seeds' values."""
    return sum(values) / len(values), (max(values) - min(values)) / 2


def main(argv=None) -> dict:
    dca_course.configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder holding test.source and test.target(.sents.tsv)")
    parser.add_argument("--epochs", type=int, default=2, help="epochs without coverage (then one with it)")
    parser.add_argument("--vocab-size", type=int, default=20000)
    parser.add_argument("--profile", default="fast", choices=["fast", "full"])
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="one training run per seed (default: 0)")
    parser.add_argument("--input-feeding", nargs="+", choices=["on", "off"], default=["off"],
                        help="train with See et al.'s input feeding on, off, or both (default: the recipe's off)")
    parser.add_argument("--jobs", type=int, default=1, help="training runs at once, one process each")
    parser.add_argument("--lines", type=int, nargs=2, default=[N_TRAIN, N_TEST], metavar=("TRAIN", "TEST"),
                        help="articles to train on and to score (default: 10000 1490; fewer for a quick try)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--out", type=Path, default=ROOT / "results")
    args = parser.parse_args(argv)
    folder = args.folder
    if not (folder / "test.source").is_file():
        parser.error(f"{folder}: no test.source there")
    jobs = [(args, seed, feed == "on") for feed in args.input_feeding for seed in args.seeds]
    if args.jobs > 1 and len(jobs) > 1:
        # spawn, not fork: each process starts its own CUDA context
        with multiprocessing.get_context("spawn").Pool(min(args.jobs, len(jobs))) as pool:
            runs = pool.map(_run_one, jobs)
    else:
        runs = [run_one(*job) for job in jobs]
    baseline = lead3(load_cnndm(folder, "test", limit=args.lines[1], start=args.lines[0]))
    summary = {}
    for feed in args.input_feeding:
        mine = [r for r in runs if r["input_feeding"] == (feed == "on")]
        summary[f"input_feeding_{feed}"] = {k: dict(zip(("mean", "half_range"), mean_spread([r["model"][k] for r in mine])))
                                            for k in KEYS}
    config = make_config(args, args.input_feeding[0] == "on")
    n_train, n_test = args.lines
    out = {"device": runs[0]["device"], "threads": args.threads, "jobs": args.jobs, "train_lines": f"1-{n_train}",
           "test_lines": f"{n_train + 1}-{n_train + n_test}",
           "hparams": {k: getattr(config, k) for k in ("emb_size", "hidden_size", "vocab_size", "epochs",
                                                        "coverage_epochs", "batch_size", "lr", "beam_size")},
           "runs": runs, "summary": summary, "lead3": {k: round(baseline[k], 4) for k in KEYS},
           "note": "not comparable with published CNN/DailyMail results: trained on 10,000 test-set articles"}
    print(json.dumps(out, sort_keys=True))
    write_report(args.out, "cnndm_real", out, markdown(out, args), command=command_line(__file__, argv),
                 config=dict(vars(args), recipe=config.to_dict()),
                 measures=["experiments/cnndm_real.py", "dca_course/data/cnndm.py", *POINTER_GENERATOR_CODE])
    return out


def markdown(out: dict, args) -> str:
    row = lambda name, r: f"| {name} | " + " | ".join(f"{r[k]:.2f}" for k in KEYS[:4]) + f" | {r['repeated_trigrams']:.3f} |"
    lines = [row(f"PG + coverage, input feeding {'on' if r['input_feeding'] else 'off'}, seed {r['seed']} "
                 f"({r['epochs_run']} epochs, {r['train_seconds']:.0f} s)", r["model"]) for r in out["runs"]]
    for name, s in out["summary"].items():
        if len([r for r in out["runs"] if r["input_feeding"] == name.endswith("on")]) > 1:
            lines.append(f"| **mean, {name.replace('_', ' ')}** | "
                         + " | ".join(f"{s[k]['mean']:.2f} ± {s[k]['half_range']:.2f}" for k in KEYS[:4])
                         + f" | {s['repeated_trigrams']['mean']:.3f} |")
    lines.append(row("lead-3", out["lead3"]))
    return ("# CNN/DailyMail, a small real-data check (not comparable with the papers)\n\n"
            f"On {out['device']} ({os.cpu_count()} CPUs, {args.threads} thread per run, {args.jobs} run(s) at once): "
            f"each run trained on lines {out['train_lines']} of the test split and scored on lines {out['test_lines']} "
            "with beam search. "
            "± is half the range over the seeds.\n\n"
            "| system | R-1 | R-2 | R-L | R-Lsum | rep. 3-grams |\n|---|---:|---:|---:|---:|---:|\n"
            + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
