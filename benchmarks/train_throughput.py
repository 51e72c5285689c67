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


def time_per_call(run, items, device) -> float:
    """Mean seconds per call of ``run`` over ``items[2:]``, after ``items[:2]`` as warm-up."""
    for item in items[:2]:
        run(item)
    _sync(device)
    start = time.perf_counter()
    for item in items[2:]:
        run(item)
    _sync(device)
    return (time.perf_counter() - start) / max(1, len(items) - 2)


class StepTimer:
    """One pointer-generator (+ coverage) and its optimizer, to time full training steps."""

    def __init__(self, train, profile="fast", overrides=None, coverage=True, device=None):
        from dca_course.registry import Dataset

        self.device = device or dca_course.device()
        self.hp = PointerGeneratorRecipe.hparams(profile, overrides or {})
        self.recipe = PointerGeneratorRecipe(self.hp)
        self.vocab = self.recipe.build_vocab(Dataset("synthnews", "summaries", train, [], []))
        self.model = self.recipe.build_model(self.vocab).to(self.device).set_coverage(coverage)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.hp["lr"])
        self.model.train()

    def step(self, batch):
        """Forward with teacher forcing, NLL (+ coverage loss), backward, clipping, Adam."""
        out = self.model(batch)
        loss = sequence_nll(out["log_probs"], batch.tgt_out, batch.tgt_mask)
        if self.model.coverage:
            loss = loss + self.hp["coverage_weight"] * coverage_loss(out["attn"], out["coverage"], batch.tgt_mask)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.hp.get("clip", 1.0))
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
    """Full batches of similar source lengths, in a seeded random order (the ``bucket`` option)."""
    groups = [g for g in source_length_buckets(examples, batch_size, seed) if len(g) == batch_size]
    random.Random(seed).shuffle(groups)
    return groups


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

    train, _, _ = load_synthnews(args.articles, 1, 1, seed=args.seed)
    timer = StepTimer(train, args.profile, {"batch_size": args.batch_size}, not args.no_coverage, device)
    B, hp = timer.hp["batch_size"], timer.hp
    plain = timer.tokens_per_second(random_batches(train, B, args.seed), args.steps)
    bucket = timer.tokens_per_second(length_bucketed_batches(train, B, args.seed), args.steps)
    result = {"device": device.type, "profile": args.profile, "batch_size": B, "coverage": timer.model.coverage,
              "hidden_size": hp["hidden_size"], "vocab": len(timer.vocab), "steps": args.steps,
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
