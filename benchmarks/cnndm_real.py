"""A small real-data check on CNN/DailyMail: the pointer-generator + coverage against lead-3.

    python benchmarks/cnndm_real.py ../shared/data/cnndm [--epochs 2] [--device cpu]

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

Results go to ``benchmarks/results/cnndm_real.{md,json}``.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
from common import POINTER_GENERATOR_CODE, ROOT, command_line, write_report

import dca_course
from dca_course import metrics
from dca_course.data.cnndm import load_cnndm, truncate
from dca_course.recipes import PointerGeneratorConfig, PointerGeneratorRecipe
from dca_course.registry import Dataset
N_TRAIN, N_TEST = 10_000, 1_490


def lead3(examples) -> dict:
    """ROUGE of the first three sentences of each article (See et al.'s lead-3 baseline)."""
    preds = [[t for s in [s for p in ex.paragraphs for s in p][:3] for t in s] for ex in examples]
    return metrics.summary_metrics(preds, [ex.summary_text() for ex in examples], [ex.source for ex in examples])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder holding test.source and test.target(.sents.tsv)")
    parser.add_argument("--epochs", type=int, default=2, help="epochs without coverage (then one with it)")
    parser.add_argument("--vocab-size", type=int, default=20000)
    parser.add_argument("--profile", default="fast", choices=["fast", "full"])
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = dca_course.device(args.device)
    dca_course.seed_everything(0)

    train = [truncate(ex, 400, 100) for ex in load_cnndm(args.folder, "test", limit=N_TRAIN)]
    test = load_cnndm(args.folder, "test", limit=N_TEST, start=N_TRAIN)   # whole references, as See et al.
    data = Dataset("cnndm-sample", "summaries", train, [], test, meta=dict(min_decode=35, max_decode=120))
    config = PointerGeneratorConfig.from_profile(args.profile, {
        "coverage": True, "epochs": args.epochs, "vocab_size": args.vocab_size, "beam_size": args.beam_size,
        })
    started = time.perf_counter()
    result = PointerGeneratorRecipe(config).train(data, device, ROOT / "runs" / "cnndm_real", seed=0, resume=False)
    wall = time.perf_counter() - started
    baseline = lead3(test)
    keys = ("rouge1", "rouge2", "rougeL", "rougeLsum", "repeated_trigrams", "novel_bigrams")
    out = {"device": device.type, "threads": args.threads, "train_lines": "1-10000", "test_lines": "10001-11490",
           "hparams": {k: getattr(config, k) for k in ("emb_size", "hidden_size", "vocab_size", "epochs",
                                                        "coverage_epochs", "batch_size", "lr", "beam_size")},
           "model": {k: round(result[k], 4) for k in keys}, "lead3": {k: round(baseline[k], 4) for k in keys},
           "epochs_run": result["epochs"], "train_seconds": result["train_seconds"], "wall_seconds": round(wall, 1),
           "note": "not comparable with published CNN/DailyMail results: trained on 10,000 test-set articles"}
    print(json.dumps(out, sort_keys=True))
    rows = [("pointer-generator + coverage", out["model"]), ("lead-3", out["lead3"])]
    table = "\n".join(f"| {name} | " + " | ".join(f"{r[k]:.2f}" for k in keys[:4]) + f" | {r['repeated_trigrams']:.3f} |"
                      for name, r in rows)
    write_report(args.out, "cnndm_real", out, (
        "# CNN/DailyMail, a small real-data check (not comparable with the papers)\n\n"
        f"On {device.type} "
        f"({os.cpu_count()} CPUs, {args.threads} thread): trained on lines 1-10,000 of the test split for "
        f"{out['epochs_run']} epochs ({out['train_seconds']:.0f} s), scored on lines 10,001-11,490.\n\n"
        "| system | R-1 | R-2 | R-L | R-Lsum | rep. 3-grams |\n|---|---:|---:|---:|---:|---:|\n" + table + "\n"),
        command=command_line(__file__, argv), config=dict(vars(args), recipe=config.to_dict()),
        measures=["benchmarks/cnndm_real.py", "dca_course/data/cnndm.py", *POINTER_GENERATOR_CODE])
    return out


if __name__ == "__main__":
    main()
