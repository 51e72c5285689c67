"""Recipes: how each model of the course is built, trained and evaluated from the command line.

A recipe turns ``(model name, data spec, profile)`` into a trained model and a metrics dict.
Profiles hold every size in one place: ``fast`` fits the CPU budgets of the notebooks and of
CI; ``full`` uses the papers' sizes (meant for a GPU).  Adding a model to the command line is
one subclass with ``@register_model``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from . import metrics
from .data.batching import collate, pad_sequences, lengths_to_mask
from .data.toy import load_toy
from .data.vocab import Vocab
from .decoding import greedy
from .losses import sequence_nll
from .models.gru_lm import SEP, GRULanguageModel
from .models.seq2seq import Seq2Seq
from .registry import Dataset, SpecError, register_data, register_model
from .train import TrainConfig, dist_info, fit, load_checkpoint, unwrap, write_json

# -- data specs --------------------------------------------------------------------------------
TOY_SIZES = {"fast": (6000, 200, 500), "full": (50000, 1000, 2000)}


@register_data("toy", usage="toy:dates | toy:reverse", help="generated date normalisation / string reversal")
def _toy(arg: str, profile: str, seed: int) -> Dataset:
    if arg not in ("dates", "reverse"):
        raise SpecError(f"unknown toy task {arg!r}")
    train, valid, test = load_toy(arg, *TOY_SIZES[profile], seed=seed)
    return Dataset(f"toy:{arg}", "pairs", train, valid, test)


# -- the base recipe ---------------------------------------------------------------------------
class Recipe:
    """Build, train and evaluate one model.  Subclasses set ``profiles`` and the hooks."""

    name = ""
    data_kinds: tuple = ("pairs", "summaries")
    profiles: dict = {}

    def __init__(self, hparams: dict):
        self.hp = dict(hparams)

    @classmethod
    def add_arguments(cls, parser) -> None:
        """Model-specific command-line options (none by default)."""

    @classmethod
    def hparams(cls, profile: str, overrides: dict) -> dict:
        if profile not in cls.profiles:
            raise SpecError(f"unknown profile {profile!r}; choose from {', '.join(cls.profiles)}")
        hp = dict(cls.profiles[profile])
        hp.update({k: v for k, v in overrides.items() if v is not None})
        return hp

    def check_data(self, data: Dataset) -> None:
        if data.kind not in self.data_kinds:
            raise SpecError(f"model {self.name!r} does not train on {data.spec!r} ({data.kind}); "
                            f"it takes data of kind {', '.join(self.data_kinds)}")

    # subclasses
    def build_vocab(self, data: Dataset) -> Vocab:
        return Vocab.build([ex.source + ex.target for ex in data.train], max_size=self.hp.get("vocab_size"))

    def build_model(self, vocab: Vocab) -> torch.nn.Module:
        raise NotImplementedError

    def make_batch(self, examples, vocab):
        return collate(examples, vocab, self.hp.get("max_src"), self.hp.get("max_tgt"))

    def loss_fn(self, model, batch):
        out = model(batch)
        loss = sequence_nll(out["log_probs"], batch.tgt_out, batch.tgt_mask)
        return loss, {}

    def predict(self, model, examples, vocab, device) -> list[list[str]]:
        """Greedy outputs, as tokens, for ``examples``."""
        model.eval()
        preds = []
        for i in range(0, len(examples), 128):
            batch = self.make_batch(examples[i: i + 128], vocab).to(device)
            decoded = greedy(model, batch, self.hp.get("max_decode", 50))
            preds += [vocab.decode(ids, oovs) for ids, oovs in zip(decoded.ids, batch.oovs)]
        return preds

    def score(self, model, examples, vocab, device, kind: str) -> dict:
        preds = self.predict(model, examples, vocab, device)
        if kind == "summaries":
            return metrics.summary_metrics(preds, [ex.summary_text() for ex in examples],
                                           [ex.source for ex in examples])
        return {"exact_match": metrics.exact_match(preds, [ex.target for ex in examples]),
                "token_accuracy": metrics.token_accuracy(preds, [ex.target for ex in examples])}

    # the two commands
    def train(self, data: Dataset, device, out_dir: Path, *, seed: int = 0, progress: bool = True,
              resume: bool = True, log=None) -> dict:
        self.check_data(data)
        vocab = self.build_vocab(data)
        model = self.build_model(vocab).to(device)
        config = TrainConfig(epochs=self.hp["epochs"], batch_size=self.hp["batch_size"], lr=self.hp["lr"],
                             clip=self.hp.get("clip", 1.0), seed=seed, eval_every=0, progress=progress,
                             time_limit=self.hp.get("time_limit"))
        extra = {"recipe": self.name, "hparams": self.hp, "model_config": model.config,
                 "vocab": vocab.to_list(), "data": data.spec, "seed": seed}
        started = time.perf_counter()
        history = fit(model, data.train, make_batch=lambda exs: self.make_batch(exs, vocab),
                      loss_fn=self.loss_fn, config=config, device=device, out_dir=out_dir, resume=resume,
                      extra_state=extra, log=log)
        seconds = time.perf_counter() - started
        if not dist_info().is_main:   # under torchrun, rank 0 alone evaluates and reports
            return {}
        result = self.score(unwrap(model), data.test, vocab, device, data.kind)
        result.update(model=self.name, data=data.spec, split="test", epochs=len(history.epochs),
                      final_loss=history.last("loss"), train_seconds=round(seconds, 1))
        return result

    @classmethod
    def restore(cls, state: dict, device):
        recipe = cls(state["hparams"])
        vocab = Vocab.from_list(state["vocab"])
        model = recipe.model_from_config(state["model_config"]).to(device)
        model.load_state_dict(state["model"])
        return recipe, model, vocab

    def model_from_config(self, config: dict):
        raise NotImplementedError

    def evaluate(self, model, vocab, data: Dataset, split: str, device) -> dict:
        result = self.score(model, data.split(split), vocab, device, data.kind)
        result.update(model=self.name, data=data.spec, split=split)
        return result


# -- models ------------------------------------------------------------------------------------
@register_model("seq2seq")
class Seq2SeqRecipe(Recipe):
    """Bahdanau attention encoder-decoder (notebook 02)."""

    profiles = {
        "fast": dict(emb_size=32, hidden_size=64, epochs=4, batch_size=64, lr=3e-3, vocab_size=None,
                     max_src=None, max_tgt=None, max_decode=12),
        "full": dict(emb_size=128, hidden_size=256, epochs=10, batch_size=64, lr=1e-3, vocab_size=None,
                     max_src=None, max_tgt=None, max_decode=12),
    }

    def build_model(self, vocab):
        return Seq2Seq(len(vocab), self.hp["emb_size"], self.hp["hidden_size"])

    def model_from_config(self, config):
        return Seq2Seq(**config)


@dataclass
class LMBatch:
    """``source <sep> target </s>`` sequences for the language model, shifted by one."""

    inputs: torch.Tensor      # (batch, len): tokens 0..n-2
    targets: torch.Tensor     # (batch, len): tokens 1..n-1
    mask: torch.Tensor        # (batch, len): True on the target part (what is scored)

    def to(self, device):
        return LMBatch(self.inputs.to(device), self.targets.to(device), self.mask.to(device))


def lm_sequences(examples, vocab: Vocab):
    """Token ids of ``source <sep> target </s>`` and the index where the target starts."""
    seqs, starts = [], []
    for ex in examples:
        ids = vocab.encode(ex.source + [SEP]) + vocab.encode(ex.target) + [vocab.eos_id]
        seqs.append(ids)
        starts.append(len(ex.source) + 1)
    return seqs, starts


@register_model("gru-lm")
class GRULMRecipe(Recipe):
    """A GRU language model over ``source <sep> target`` (notebook 01): no attention, one state."""

    data_kinds = ("pairs",)
    profiles = {
        "fast": dict(emb_size=32, hidden_size=128, epochs=6, batch_size=64, lr=3e-3, scratch=False, max_decode=12),
        "full": dict(emb_size=64, hidden_size=512, epochs=20, batch_size=64, lr=1e-3, scratch=False, max_decode=12),
    }

    def build_vocab(self, data):
        return Vocab([SEP] + Vocab.build([ex.source + ex.target for ex in data.train]).itos[4:])

    def build_model(self, vocab):
        return GRULanguageModel(len(vocab), self.hp["emb_size"], self.hp["hidden_size"], scratch=self.hp["scratch"])

    def model_from_config(self, config):
        return GRULanguageModel(**config)

    def make_batch(self, examples, vocab):
        seqs, starts = lm_sequences(examples, vocab)
        ids = pad_sequences(seqs, vocab.pad_id)
        lengths = torch.tensor([len(s) for s in seqs])
        positions = torch.arange(ids.size(1) - 1)[None, :]
        # Score only the target part: predicting the source would be guessing a random date.
        mask = (positions >= (torch.tensor(starts)[:, None] - 1)) & lengths_to_mask(lengths - 1, ids.size(1) - 1)
        return LMBatch(ids[:, :-1], ids[:, 1:], mask)

    def loss_fn(self, model, batch):
        log_probs, _ = model(batch.inputs)
        return sequence_nll(log_probs, batch.targets, batch.mask), {}

    def predict(self, model, examples, vocab, device):
        model.eval()
        by_len: dict[int, list[int]] = {}
        for i, ex in enumerate(examples):   # equal-length prompts decode together, no padding inside
            by_len.setdefault(len(ex.source), []).append(i)
        preds = [None] * len(examples)
        for idx in by_len.values():
            prompts = torch.tensor([vocab.encode(examples[i].source + [SEP]) for i in idx], device=device)
            for i, ids in zip(idx, model.complete(prompts, self.hp.get("max_decode", 50))):
                preds[i] = vocab.decode(ids)
        return preds

    def score(self, model, examples, vocab, device, kind):
        result = super().score(model, examples, vocab, device, kind)
        with torch.no_grad():
            batch = self.make_batch(examples, vocab).to(device)
            nll = float(self.loss_fn(model, batch)[0])
        result["perplexity"] = math.exp(nll)
        return result


def save_metrics(out_dir: Path, result: dict) -> None:
    write_json(Path(out_dir) / "metrics.json", result)


def load_run(out_dir: Path, device):
    """The recipe, model and vocabulary saved in a run folder's ``last.pt``."""
    from .registry import get_model

    state = load_checkpoint(Path(out_dir) / "last.pt", map_location=device)
    recipe_cls = get_model(state["recipe"])
    recipe, model, vocab = recipe_cls.restore(state, device)
    return recipe, model, vocab, state
