"""Training throughput of the pointer-generator with coverage, in target tokens per second.

    python benchmarks/train_throughput.py [--profile fast|full] [--batch-size N] [--steps 10]
                                          [--no-coverage] [--device cpu|cuda]

Times full training steps (forward with teacher forcing, NLL + coverage loss, backward,
clipping, Adam) on SynthNews batches, counting only real (not padding) target tokens, with
batches drawn at random and with batches of similar source lengths (what the recipe's
``bucket`` option does).  Prints tokens per second for both and their ratio, then one line of
JSON.  The model sizes come from the recipe's profile (``full``: the paper's 128/256, 50k
vocabulary, 400/100 tokens).  The device comes from ``dca_course.device()``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from benchmarks.timing import StepTimer, length_bucketed_batches, random_batches  # noqa: E402

import dca_course


def main(argv=None) -> dict:
    dca_course.configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="fast", choices=["fast", "full"])
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--steps", type=int, default=10, help="timed steps (after 2 warm-up steps)")
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--no-coverage", action="store_true")
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads (default 1: a second thread on a busy 2-core machine waits at every op)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = dca_course.device(args.device)
    dca_course.seed_everything(args.seed)

    from dca_course.data.synthnews import load_synthnews

    train, _, _ = load_synthnews(args.articles, 1, 1, seed=args.seed)
    timer = StepTimer(train, args.profile, {"batch_size": args.batch_size}, not args.no_coverage, device)
    B, config = timer.config.batch_size, timer.config
    plain = timer.tokens_per_second(random_batches(train, B, args.seed), args.steps)
    bucket = timer.tokens_per_second(length_bucketed_batches(train, B, args.seed), args.steps)
    result = {"device": device.type, "profile": args.profile, "batch_size": B, "coverage": timer.model.coverage,
              "hidden_size": config.hidden_size, "vocab": len(timer.vocab), "steps": args.steps,
              "tokens_per_s_random_batches": round(plain, 1), "tokens_per_s_length_buckets": round(bucket, 1),
              "bucket_speedup": round(bucket / plain, 2)}
    print(f"pointer-generator{' + coverage' if timer.model.coverage else ''}, {args.profile} profile, "
          f"batch {B}, {device.type}:")
    print(f"  random batches:          {plain:10.1f} target tokens/s")
    print(f"  similar-length batches:  {bucket:10.1f} target tokens/s  ({bucket / plain:.2f}x)")
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    main()
