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
import random
import time

import torch

import dca_course
from dca_course.losses import coverage_loss, sequence_nll
from dca_course.recipes import PointerGeneratorRecipe, source_length_buckets


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def main(argv=None) -> dict:
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
    from dca_course.registry import Dataset

    train, _, _ = load_synthnews(args.articles, 1, 1, seed=args.seed)
    hp = PointerGeneratorRecipe.hparams(args.profile, {"batch_size": args.batch_size})
    recipe = PointerGeneratorRecipe(hp)
    vocab = recipe.build_vocab(Dataset("synthnews", "summaries", train, [], []))
    model = recipe.build_model(vocab).to(device).set_coverage(not args.no_coverage)
    optimizer = torch.optim.Adam(model.parameters(), lr=hp["lr"])
    B = hp["batch_size"]

    def step(batch):
        out = model(batch)
        loss = sequence_nll(out["log_probs"], batch.tgt_out, batch.tgt_mask)
        if model.coverage:
            loss = loss + hp["coverage_weight"] * coverage_loss(out["attn"], out["coverage"], batch.tgt_mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), hp.get("clip", 1.0))
        optimizer.step()

    def measure(groups):
        batches = [recipe.make_batch(g, vocab).to(device) for g in groups[: args.steps + 2]]
        for b in batches[:2]:
            step(b)
        _sync(device)
        start = time.perf_counter()
        tokens = 0
        for b in batches[2:]:
            step(b)
            tokens += int(b.tgt_mask.sum())
        _sync(device)
        return tokens / (time.perf_counter() - start)

    rng = random.Random(args.seed)
    shuffled = train[:]
    rng.shuffle(shuffled)
    random_groups = [shuffled[i: i + B] for i in range(0, len(shuffled) - B + 1, B)]
    bucketed = [g for g in source_length_buckets(train, B, args.seed) if len(g) == B]
    rng.shuffle(bucketed)
    model.train()
    plain = measure(random_groups)
    bucket = measure(bucketed)
    result = {"device": device.type, "profile": args.profile, "batch_size": B, "coverage": model.coverage,
              "hidden_size": hp["hidden_size"], "vocab": len(vocab), "steps": args.steps,
              "tokens_per_s_random_batches": round(plain, 1), "tokens_per_s_length_buckets": round(bucket, 1),
              "bucket_speedup": round(bucket / plain, 2)}
    print(f"pointer-generator{' + coverage' if model.coverage else ''}, {args.profile} profile, "
          f"batch {B}, {device.type}:")
    print(f"  random batches:          {plain:10.1f} target tokens/s")
    print(f"  similar-length batches:  {bucket:10.1f} target tokens/s  ({bucket / plain:.2f}x)")
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    main()
