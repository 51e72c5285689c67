"""What the speed benchmarks share: the timing of training steps and the batches they time.

Imported as ``benchmarks.timing`` after the script has put the repository root on ``sys.path``
(see :mod:`tools.provenance`).
"""
from __future__ import annotations

import random
import time

import torch


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
