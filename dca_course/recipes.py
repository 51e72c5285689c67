"""Recipes: how each model of the course is built, trained and evaluated from the command line.

A recipe turns ``(model name, data spec, profile)`` into a trained model and a metrics dict.
Profiles hold every size in one place: ``fast`` fits the CPU budgets of the notebooks and of
CI; ``full`` uses the papers' sizes (meant for a GPU).  Adding a model to the command line is
one subclass with ``@register_model``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from . import metrics
from .data.batching import Batch, collate, pad_sequences, lengths_to_mask
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
            result = metrics.summary_metrics(preds, [ex.summary_text() for ex in examples],
                                             [ex.source for ex in examples])
            result.update(metrics.fact_metrics(preds, examples))   # SynthNews: fact recall, hallucinations
            return result
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
class LMBatch(Batch):
    """``source <sep> target </s>`` sequences for the language model, shifted by one."""

    inputs: torch.Tensor      # (batch, len): tokens 0..n-2
    targets: torch.Tensor     # (batch, len): tokens 1..n-1
    mask: torch.Tensor        # (batch, len): True on the target part (what is scored)


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


# -- copying and coverage: CopyNet, the pointer-generator, SynthNews and CNN/DailyMail ----------
from .decoding import beam_search  # noqa: E402  (this section's own imports)
from .losses import coverage_loss  # noqa: E402
from .models.copynet import CopyNet  # noqa: E402
from .models.pointer_generator import PointerGenerator  # noqa: E402

# (train, valid, test) articles; ``synthnews:N`` sets the number of training articles.
SYNTHNEWS_SIZES = {"fast": (2000, 100, 300), "full": (50000, 1000, 2000)}
# How long a summary of each data set may be when decoding (See et al.: 35..120 on CNN/DM).
SUMMARY_DECODE = {"synthnews": dict(min_decode=20, max_decode=80),
                  "cnndm": dict(min_decode=35, max_decode=120)}


def _synthnews_spec(name: str, arg: str, profile: str, seed: int, long: bool) -> Dataset:
    """``synthnews[:N]`` and ``synthnews-long[:N]``: the profile's sizes, N training articles."""
    from .data.synthnews import load_synthnews

    n_train, n_valid, n_test = SYNTHNEWS_SIZES[profile]
    if arg:
        if not arg.isdigit() or int(arg) < 1:
            raise SpecError(f"{name} takes a number of training articles, got {arg!r}")
        n_train = int(arg)
    train, valid, test = load_synthnews(n_train, n_valid, n_test, seed=seed, long=long)
    return Dataset(f"{name}:{n_train}" if arg else name, "summaries", train, valid, test,
                   meta=dict(SUMMARY_DECODE["synthnews"]))


@register_data("synthnews", usage="synthnews[:N]", help="generated news articles and summaries (N to train on)")
def _synthnews(arg: str, profile: str, seed: int) -> Dataset:
    return _synthnews_spec("synthnews", arg, profile, seed, long=False)


# examples read per split under each profile (None: all); the fast profile reads the first lines
CNNDM_LIMITS = {"fast": {"train": 10000, "valid": 200, "test": 500},
                "full": {"train": None, "valid": None, "test": None}}


@register_data("cnndm", usage="cnndm:PATH", help="CNN/DailyMail from a folder (.story files or line files)")
def _cnndm(arg: str, profile: str, seed: int) -> Dataset:
    """Line files ``{train,val,test}.source`` (+ ``.target.sents.tsv`` or ``.target``; ``valid``
    also works for ``val``); a missing split is empty.  A folder of ``.story`` files has no
    splits: every 20th story (by file name) is held out for testing, the next for validation.
    Training articles are cut to 400 words and summaries to 100, as See et al. (2017) trained;
    validation and test references stay whole (the articles are cut when batched)."""
    import glob
    import os

    from .data.cnndm import load_cnndm, truncate

    if not arg:
        raise SpecError("cnndm needs a folder: cnndm:PATH")
    if not os.path.isdir(arg):
        raise SpecError(f"no such folder {arg!r}")
    limits = CNNDM_LIMITS[profile]
    splits = {}
    for name, files in (("train", ("train",)), ("valid", ("val", "valid")), ("test", ("test",))):
        splits[name] = []
        for split in files:
            if os.path.isfile(os.path.join(arg, f"{split}.source")):
                splits[name] = load_cnndm(arg, split, limit=limits[name])
                break
    if not any(splits.values()) and (glob.glob(os.path.join(arg, "*.story"))
                                     or glob.glob(os.path.join(arg, "stories", "*.story"))):
        stories = sorted(load_cnndm(arg), key=lambda ex: ex.id)
        splits = {"train": [ex for i, ex in enumerate(stories) if i % 20 not in (0, 1)],
                  "valid": [ex for i, ex in enumerate(stories) if i % 20 == 1],
                  "test": [ex for i, ex in enumerate(stories) if i % 20 == 0]}
        splits = {k: v[: limits[k]] if limits[k] else v for k, v in splits.items()}
    if not any(splits.values()):
        raise SpecError(f"no CNN/DailyMail data in {arg!r}: expected train/val/test .source files "
                        "or .story files")
    train = [truncate(ex, 400, 100) for ex in splits["train"]]
    return Dataset(f"cnndm:{arg}", "summaries", train, splits["valid"], splits["test"],
                   meta=dict(SUMMARY_DECODE["cnndm"]))


def _add_copying_arguments(parser) -> None:
    """Options of the copying recipes, added once to the ``train`` parser that all recipes share."""
    import argparse

    options = [
        ("--coverage", dict(action="store_true", default=None,
                            help="pointer-generator: add coverage (See et al. eqs. 10-13)")),
        ("--coverage-weight", dict(type=float, default=None, help="pointer-generator: lambda of eq. (13)")),
        ("--coverage-epochs", dict(type=int, default=None,
                                   help="pointer-generator --coverage: epochs of the final coverage phase "
                                        "after --epochs without it (0: coverage from the start)")),
        ("--no-pointer", dict(dest="pointer", action="store_false", default=None,
                              help="pointer-generator: the paper's baseline (no copying)")),
        ("--input-feeding", dict(action=argparse.BooleanOptionalAction, default=None,
                                 help="pointer-generator: feed the previous context to the decoder LSTM "
                                      "as See et al.'s code does (default off: the decoder LSTM then runs "
                                      "fused over the summary, faster to train, the same ROUGE)")),
        ("--max-src", dict(type=int, default=None, metavar="N",
                           help="source tokens a summariser reads (pointer-generator and CopyNet: the first "
                                "400, as See et al.; dca: 800, split among the agents, as Celikyilmaz et al.)")),
        ("--beam-size", dict(type=int, default=None, help="beam width for evaluation (1: greedy)")),
        ("--vocab-size", dict(type=int, default=None, help="vocabulary size (most frequent training words)")),
        ("--emb-size", dict(type=int, default=None, metavar="N", help="word embedding size")),
        ("--hidden-size", dict(type=int, default=None, metavar="N",
                               help="LSTM state size (per direction in the encoders)")),
        ("--max-decode", dict(type=int, default=None, help="longest output when decoding")),
        ("--min-decode", dict(type=int, default=None, help="shortest output when beam decoding")),
    ]
    for flag, kwargs in options:
        if flag not in parser._option_string_actions and "--no-" + flag[2:] not in parser._option_string_actions:
            parser.add_argument(flag, **kwargs)


def source_length_buckets(examples, batch_size: int, seed: int = 0) -> list:
    """The examples cut into groups of ``batch_size`` with similar source lengths (ties and
    equal lengths in a seeded random order)."""
    import random

    rng = random.Random(seed)
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i].source), rng.random()))
    return [[examples[i] for i in order[j: j + batch_size]] for j in range(0, len(order), batch_size)]


class CopyingRecipe(Recipe):
    """Shared by CopyNet and the pointer-generator: summaries, beam-search evaluation."""

    data_kinds = ("summaries", "pairs")
    data_meta: dict = {}

    @classmethod
    def add_arguments(cls, parser) -> None:
        _add_copying_arguments(parser)

    def check_data(self, data: Dataset) -> None:
        super().check_data(data)
        self.data_meta = dict(data.meta)        # decode lengths of this data set

    def _decode_len(self, key: str, default: int) -> int:
        value = self.hp.get(key)
        return int(value) if value is not None else int(self.data_meta.get(key, default))

    def predict(self, model, examples, vocab, device) -> list[list[str]]:
        """Beam search (``beam_size``; 1 = greedy) over batches of similar source lengths."""
        model.eval()
        order = sorted(range(len(examples)), key=lambda i: len(examples[i].source))
        preds: list = [None] * len(examples)
        step = self.hp.get("eval_batch_size", 64)
        max_len, min_len = self._decode_len("max_decode", 100), self._decode_len("min_decode", 0)
        for i in range(0, len(order), step):
            idx = order[i: i + step]
            batch = self.make_batch([examples[j] for j in idx], vocab).to(device)
            if self.hp.get("beam_size", 4) > 1:
                decoded = beam_search(model, batch, self.hp["beam_size"], max_len=max_len, min_len=min_len,
                                      length_penalty=self.hp.get("length_penalty", 1.0))
            else:
                decoded = greedy(model, batch, max_len)
            for j, ids, oovs in zip(idx, decoded.ids, batch.oovs):
                preds[j] = vocab.decode(ids, oovs)
        return preds

    def score(self, model, examples, vocab, device, kind: str) -> dict:
        preds = self.predict(model, examples, vocab, device)
        if kind != "summaries":
            return {"exact_match": metrics.exact_match(preds, [ex.target for ex in examples]),
                    "token_accuracy": metrics.token_accuracy(preds, [ex.target for ex in examples])}
        result = metrics.summary_metrics(preds, [ex.summary_text() for ex in examples],
                                         [ex.source for ex in examples])
        result.update(metrics.fact_metrics(preds, examples))
        words = set(vocab.itos)
        oov = [metrics.oov_entity_recall(p, ex.facts, words) for p, ex in zip(preds, examples) if ex.facts]
        oov = [r for r in oov if r is not None]
        if oov:
            result["oov_entity_recall"] = metrics.mean(oov)
        return result

    # training in phases (the pointer-generator's coverage phase) -------------------------------
    def phases(self) -> list:
        """``[(total epochs at the end of the phase, prepare(model)), ...]``: one phase by default."""
        return [(self.hp["epochs"], lambda model: None)]

    def train(self, data: Dataset, device, out_dir: Path, *, seed: int = 0, progress: bool = True,
              resume: bool = True, log=None) -> dict:
        self.check_data(data)
        if not data.train:
            raise SpecError(f"{data.spec} has no training examples")
        vocab = self.build_vocab(data)
        model = self.build_model(vocab).to(device)
        phases = self.phases()
        for _, prepare in phases:      # the configuration the model ends in is the one saved
            prepare(model)
        extra = {"recipe": self.name, "hparams": self.hp, "model_config": dict(model.config),
                 "vocab": vocab.to_list(), "data": data.spec, "seed": seed}
        started = time.perf_counter()
        history = None
        train_data, batch_size = data.train, self.hp["batch_size"]
        make_batch = lambda exs: self.make_batch(exs, vocab)    # noqa: E731
        if self.hp.get("bucket"):
            # batches of similar source lengths (less padding: about a third less work on
            # SynthNews); fit shuffles the order of these fixed batches every epoch
            train_data, batch_size = source_length_buckets(data.train, batch_size, seed), 1
            make_batch = lambda groups: self.make_batch(groups[0], vocab)   # noqa: E731
        for i, (epochs, prepare) in enumerate(phases):
            prepare(model)
            config = TrainConfig(epochs=epochs, batch_size=batch_size, lr=self.hp["lr"],
                                 clip=self.hp.get("clip", 1.0), seed=seed, eval_every=0, progress=progress,
                                 time_limit=self.hp.get("time_limit"))
            # a later phase always goes on from the checkpoint the previous phase wrote
            history = fit(model, train_data, make_batch=make_batch,
                          loss_fn=self.loss_fn, config=config, device=device, out_dir=out_dir,
                          resume=resume or i > 0, extra_state=extra, log=log)
        seconds = time.perf_counter() - started
        result = self.score(unwrap(model), data.test, vocab, device, data.kind)
        result.update(model=self.name, data=data.spec, split="test", epochs=len(history.epochs),
                      final_loss=history.last("loss"), train_seconds=round(seconds, 1))
        return result


_PAPER_SIZES = dict(emb_size=128, hidden_size=256, vocab_size=50000, max_src=400, max_tgt=100, beam_size=4)


@register_model("copynet")
class CopyNetRecipe(CopyingRecipe):
    """CopyNet (Gu et al. 2016): generate and copy modes in one softmax, selective read."""

    profiles = {
        "fast": dict(emb_size=64, hidden_size=64, attn_size=64, vocab_size=2000, max_src=400, max_tgt=100,
                     beam_size=4, epochs=3, batch_size=16, lr=3e-3, clip=2.0, bucket=True, max_decode=None,
                     min_decode=None),
        "full": dict(_PAPER_SIZES, attn_size=None, epochs=20, batch_size=16, lr=1e-3, clip=2.0, bucket=True,
                     max_decode=None, min_decode=None),
    }

    def build_model(self, vocab):
        return CopyNet(len(vocab), self.hp["emb_size"], self.hp["hidden_size"], attn_size=self.hp.get("attn_size"))

    def model_from_config(self, config):
        return CopyNet(**config)


@register_model("pointer-generator")
class PointerGeneratorRecipe(CopyingRecipe):
    """The pointer-generator (See et al. 2017); ``--coverage`` adds coverage for a final phase.

    Without input feeding by default (``--input-feeding`` adds it, as See et al.'s code has it):
    the paper's equations (1)-(4) do not need it, the decoder LSTM then runs as one fused call,
    and over seeds 0-2 on SynthNews both variants scored the same (R-2 44.3 without, 44.0 with,
    spread about 1.5 each; ``benchmarks/results/README.md``)."""

    profiles = {
        "fast": dict(emb_size=64, hidden_size=64, attn_size=64, vocab_size=2000, max_src=400, max_tgt=100,
                     beam_size=4, epochs=3, batch_size=16, lr=3e-3, clip=2.0, bucket=True, coverage=False,
                     coverage_weight=1.0, coverage_epochs=1, pointer=True, input_feeding=False, max_decode=None,
                     min_decode=None),
        "full": dict(_PAPER_SIZES, attn_size=None, epochs=20, batch_size=16, lr=1e-3, clip=2.0, bucket=True,
                     coverage=False, coverage_weight=1.0, coverage_epochs=1, pointer=True, input_feeding=False,
                     max_decode=None, min_decode=None),
    }

    def build_model(self, vocab):
        return PointerGenerator(len(vocab), self.hp["emb_size"], self.hp["hidden_size"],
                                attn_size=self.hp.get("attn_size"), coverage=False,
                                pointer=self.hp.get("pointer", True),
                                input_feeding=self.hp.get("input_feeding", False))

    def model_from_config(self, config):
        return PointerGenerator(**config)

    def phases(self):
        """Without coverage: one phase.  With it: ``epochs`` without coverage, then
        ``coverage_epochs`` more with it (the paper's short final phase), or coverage from the
        first step when ``coverage_epochs`` is 0."""
        epochs, extra = self.hp["epochs"], self.hp.get("coverage_epochs") or 0
        if not self.hp.get("coverage"):
            return [(epochs, lambda m: m.set_coverage(False))]
        if extra <= 0:
            return [(epochs, lambda m: m.set_coverage(True))]
        return [(epochs, lambda m: m.set_coverage(False)), (epochs + extra, lambda m: m.set_coverage(True))]

    def loss_fn(self, model, batch):
        out = model(batch)
        nll = sequence_nll(out["log_probs"], batch.tgt_out, batch.tgt_mask)
        cov = coverage_loss(out["attn"], out["coverage"], batch.tgt_mask)
        if not unwrap(model).coverage:
            return nll, {"nll": nll.item(), "cov_loss": cov.item()}
        loss = nll + self.hp.get("coverage_weight", 1.0) * cov                 # eq. (13)
        return loss, {"nll": nll.item(), "cov_loss": cov.item()}


# -- Deep Communicating Agents (Celikyilmaz et al. 2018), self-critical RL, semantic cohesion -----
from .data.agents import collate_agents  # noqa: E402  (this section's own imports)
from .decoding import sample as sample_decode  # noqa: E402
from .losses import (leave_one_out_baseline, mixed_loss, rouge_reward, self_critical_loss,  # noqa: E402
                     semantic_cohesion, sentence_advantages, sentence_returns)
from .models.dca import DCA  # noqa: E402


@register_data("synthnews-long", usage="synthnews-long[:N]",
               help="SynthNews with 12-paragraph, ~800-token articles, for DCA (N to train on)")
def _synthnews_long(arg: str, profile: str, seed: int) -> Dataset:
    return _synthnews_spec("synthnews-long", arg, profile, seed, long=True)


def _add_dca_arguments(parser) -> None:
    """Options of the DCA recipe, added once to the ``train`` parser that all recipes share."""
    _add_copying_arguments(parser)          # --beam-size, --vocab-size, --max-decode, --min-decode
    options = [
        ("--agents", dict(type=int, default=None, metavar="N", help="dca: number of agents (the paper: 3)")),
        ("--context-layers", dict(type=int, default=None, metavar="K", help="dca: contextual encoder layers")),
        ("--rl", dict(action="store_true", default=None,
                      help="dca: self-critical RL mixed with MLE (--gamma); best with --init")),
        ("--gamma", dict(type=float, default=None,
                         help="dca --rl: weight of the RL loss in the mixed loss (default 0.9984; 0: the "
                              "control, the same steps with MLE alone)")),
        ("--cohesion", dict(type=float, default=None, metavar="LAMBDA",
                            help="dca: weight of the semantic cohesion loss (0: off)")),
        ("--init", dict(type=str, default=None, metavar="DIR",
                        help="dca: start from the weights (and vocabulary) of a dca run folder, e.g. an MLE run")),
        ("--reward", dict(default=None, choices=["rouge1", "rouge2", "rougeL", "rougeLsum"],
                          help="dca --rl: the ROUGE F1 used as reward (default rougeL)")),
        ("--intermediate-rewards", dict(action="store_true", default=None,
                                        help="dca --rl: sentence-level (intermediate) rewards")),
        ("--rl-samples", dict(type=int, default=None, metavar="K",
                              help="dca --rl: summaries sampled per article, each judged against the baseline")),
        ("--baseline", dict(default=None, choices=["greedy", "loo"],
                            help="dca --rl: the reward baseline: the mean reward of the article's other "
                                 "samples (loo, Kool et al. 2019, default; needs --rl-samples >= 2) or the "
                                 "greedy summary's (greedy, Rennie et al. 2017, the DCA paper's)")),
        ("--loss-reduction", dict(default=None, choices=["token", "sequence", "legacy"],
                                  help="dca --rl: L_RL and L_MLE both as means over tokens (token, default), "
                                       "both as sums over each summary's tokens (sequence, Paulus et al.), "
                                       "or summed L_RL with per-token L_MLE (legacy: before the fix)")),
    ]
    for flag, kwargs in options:
        if flag not in parser._option_string_actions and "--no-" + flag[2:] not in parser._option_string_actions:
            parser.add_argument(flag, **kwargs)


@register_model("dca")
class DCARecipe(CopyingRecipe):
    """Deep Communicating Agents: MLE (+ semantic cohesion), then ``--rl --init DIR`` for the
    mixed self-critical objective; evaluated with beam search like the pointer-generator.

    With ``--rl`` the profile's ``rl_epochs``, ``rl_lr`` and ``rl_batch_size`` replace ``epochs``,
    ``lr`` and ``batch_size`` unless ``--epochs``/``--lr``/``--batch-size`` are given, and RL reads
    the first ``rl_train`` training articles only (all with ``None``).  The RL batch is small
    because every one of its articles is sampled ``rl_samples`` times with the graph kept over
    every decoding step: 32 articles x 4 samples took 11 GB on a CPU, 8 x 4 about 4 GB.  The RL loss samples and decodes greedily outside
    ``model(...)``, so ``--rl`` is meant for one process (not ``torchrun``).

    ``loss_reduction`` says how the two terms of the mixed loss are reduced (see
    :func:`dca_course.losses.mixed_loss`): ``token`` (default) both per-token means, ``sequence``
    both sums over tokens averaged over the summaries (Paulus et al.), ``legacy`` the summed
    L_RL with the per-token L_MLE of earlier versions (the MLE term's weight then shrinks with
    the summaries' length; ``--loss-reduction legacy --gamma 0.97 --baseline greedy`` is the
    old default).  ``gamma`` 0.9984 (Paulus et al.'s) leaves the MLE term ~7% of the mixed
    gradient with ``token``.  ``baseline``: ``loo`` (default), the leave-one-out mean reward of
    the article's other ``rl_samples`` samples (Kool et al. 2019), or ``greedy``, the greedy
    summary's reward (Rennie et al. 2017, the DCA paper's).  On notebook 07's model the
    leave-one-out baseline halved the variance of the RL gradient estimate against the greedy
    one, is beaten by half of the samples (the greedy one by about a third) and needs no greedy
    decoding; ``benchmarks/rl_diagnostics.py`` measures both (``benchmarks/results/rl_diagnostics.md``).
    """

    data_kinds = ("summaries",)
    profiles = {
        "fast": dict(emb_size=64, hidden_size=64, context_layers=1, agents=3, vocab_size=2000, max_src=800,
                     max_tgt=100, beam_size=4, epochs=6, batch_size=16, lr=3e-3, clip=2.0, rl=False,
                     rl_epochs=1, rl_lr=1e-4, rl_batch_size=8, rl_train=400, gamma=0.9984, cohesion=0.0,
                     reward="rougeL", intermediate_rewards=False, rl_samples=4, baseline="loo",
                     loss_reduction="token", init=None, max_decode=None, min_decode=None),
        "full": dict(emb_size=128, hidden_size=256, context_layers=2, agents=3, vocab_size=50000, max_src=800,
                     max_tgt=100, beam_size=4, epochs=20, batch_size=16, lr=1e-3, clip=2.0, rl=False,
                     rl_epochs=5, rl_lr=1e-4, rl_batch_size=8, rl_train=None, gamma=0.9984, cohesion=0.0,
                     reward="rougeL", intermediate_rewards=False, rl_samples=4, baseline="loo",
                     loss_reduction="token", init=None, max_decode=None, min_decode=None),
    }

    def __init__(self, hparams: dict):
        super().__init__(hparams)
        self._init_ckpt = None
        self._vocab = None

    @classmethod
    def add_arguments(cls, parser) -> None:
        _add_dca_arguments(parser)

    @classmethod
    def hparams(cls, profile: str, overrides: dict) -> dict:
        hp = super().hparams(profile, overrides)
        if hp.get("baseline", "greedy") == "loo" and int(hp.get("rl_samples") or 1) < 2:
            raise SpecError("--baseline loo (the default) needs --rl-samples K with K >= 2 (each sample is "
                            "judged against the mean of the article's other samples); with one sample per "
                            "article pass --baseline greedy")
        if hp.get("rl"):
            if overrides.get("epochs") is None:
                hp["epochs"] = hp["rl_epochs"]
            if overrides.get("lr") is None:
                hp["lr"] = hp["rl_lr"]
            if overrides.get("batch_size") is None:
                hp["batch_size"] = hp["rl_batch_size"]
        return hp

    # -- starting from another run ---------------------------------------------------------------
    def init_checkpoint(self):
        """The checkpoint of ``--init DIR`` (a run folder or a ``.pt`` file), or None."""
        if not self.hp.get("init"):
            return None
        if self._init_ckpt is None:
            path = Path(self.hp["init"])
            state = load_checkpoint(path / "last.pt" if path.is_dir() else path)
            if state.get("recipe") != self.name:
                raise SpecError(f"--init {path}: a {state.get('recipe')!r} run, not a {self.name!r} run")
            agents = state.get("hparams", {}).get("agents")
            if agents is not None and agents != self.hp["agents"]:
                raise SpecError(f"--init {path} was trained with {agents} agents; pass --agents {agents}")
            self._init_ckpt = state
        return self._init_ckpt

    def build_vocab(self, data: Dataset) -> Vocab:
        state = self.init_checkpoint()
        self._vocab = Vocab.from_list(state["vocab"]) if state else super().build_vocab(data)
        return self._vocab

    def build_model(self, vocab):
        state = self.init_checkpoint()
        if state:
            model = DCA(**state["model_config"])
            model.load_state_dict(state["model"])
            return model
        return DCA(len(vocab), self.hp["emb_size"], self.hp["hidden_size"],
                   context_layers=self.hp["context_layers"])

    def model_from_config(self, config):
        return DCA(**config)

    def make_batch(self, examples, vocab):
        return collate_agents(examples, vocab, self.hp["agents"], self.hp.get("max_src"), self.hp.get("max_tgt"))

    def train(self, data: Dataset, device, out_dir: Path, **kwargs) -> dict:
        init = self.hp.get("init")
        if init:
            init_dir = Path(init) if Path(init).is_dir() else Path(init).parent
            if Path(out_dir).resolve() == init_dir.resolve():
                raise SpecError(f"--init {init}: give the new run its own --out folder")
        if self.hp.get("rl") and self.hp.get("rl_train"):
            data = replace(data, train=data.train[: self.hp["rl_train"]])
        return super().train(data, device, out_dir, **kwargs)

    # -- losses ----------------------------------------------------------------------------------
    def reductions(self) -> tuple[str, str]:
        """(reduction of L_RL, reduction of L_MLE) for ``loss_reduction``."""
        kind = self.hp.get("loss_reduction") or "token"
        if kind == "legacy":
            return "sequence", "token"
        if kind not in ("token", "sequence"):
            raise SpecError(f"unknown loss_reduction {kind!r}; choose token, sequence or legacy")
        return kind, kind

    def mle_loss(self, model, batch, reduction: str = "token"):
        """L_MLE (+ lam * semantic cohesion) and its stats; ``nll`` is always the per-token mean."""
        out = model(batch)
        nll = sequence_nll(out["log_probs"], batch.tgt_out, batch.tgt_mask)
        stats = {"nll": nll.item()}
        loss = nll if reduction == "token" else sequence_nll(out["log_probs"], batch.tgt_out, batch.tgt_mask,
                                                             reduction=reduction)
        lam = self.hp.get("cohesion") or 0.0
        if lam:
            sem = semantic_cohesion(out["s"], batch.tgt_sent_end, batch.tgt_mask)
            loss = loss + lam * sem
            stats["cohesion"] = sem.item()
        if reduction != "token" or lam:
            stats["mle_loss"] = loss.item()
        return loss, stats

    def loss_fn(self, model, batch):
        """MLE (+ lam * semantic cohesion); with ``rl``: gamma * L_RL + (1 - gamma) * that, both
        terms reduced alike (``loss_reduction``)."""
        if not self.hp.get("rl"):
            return self.mle_loss(model, batch)
        rl_red, mle_red = self.reductions()
        loss, stats = self.mle_loss(model, batch, mle_red)
        if self.hp.get("gamma") == 0:     # the control: the same steps with L_MLE alone (nothing sampled)
            return loss, stats
        rl, rl_stats = self.rl_loss(unwrap(model), batch)
        stats.update(rl_stats)
        return mixed_loss(rl, loss, self.hp.get("gamma", 0.9984)), stats

    def rl_draw(self, model, batch, greedy_baseline: bool = True) -> dict:
        """Sample ``rl_samples`` summaries of every article (with their graph) and score them.

        Returns a dict: ``k``; ``lp``, ``mask`` (k * batch, steps), the log-probability of every
        sampled word (the final </s> included) and True at those steps, rows in the order of
        ``list(batch.examples) * k``; ``samples`` (token lists), ``refs`` (reference texts),
        ``r_sample`` (k * batch,) their rewards; with ``greedy_baseline`` also ``greedy`` and
        ``r_greedy`` (k * batch,), the article's greedy summary and its reward, repeated k times.
        The greedy summary is decoded in eval mode (no dropout: what the model would output at
        test time), the samples in the mode the model is in (training: the policy trained)."""
        vocab, kind = self._vocab, self.hp.get("reward") or "rougeL"
        max_len = self._decode_len("max_decode", 100)
        k = max(int(self.hp.get("rl_samples") or 1), 1)
        out = {"k": k}
        if greedy_baseline:
            was_training = model.training
            model.eval()
            try:
                baseline = greedy(model, batch, max_len)                  # y^, no gradient
            finally:
                model.train(was_training)
            # strip=False keeps one token per id, so per-word rewards line up with the log-probs
            g_once = [vocab.decode(ids, oovs, strip=False) for ids, oovs in zip(baseline.ids, batch.oovs)]
            out["greedy"] = g_once * k                                    # drawn_from repeats the batch k times
            out["r_greedy"] = [rouge_reward(g, ex.summary_text(), kind) for g, ex in zip(g_once, batch.examples)] * k
        drawn_from = batch if k == 1 else self.make_batch(list(batch.examples) * k, self._vocab).to(batch.src.device)
        drawn = sample_decode(model, drawn_from, max_len, grad=True)      # y~, with its graph
        out["refs"] = [ex.summary_text() for ex in drawn_from.examples]
        out["samples"] = [vocab.decode(ids, oovs, strip=False) for ids, oovs in zip(drawn.ids, drawn_from.oovs)]
        lp = drawn.log_probs                                              # (k * batch, steps), </s> included
        steps = lp.size(1)
        out["lp"] = lp
        out["mask"] = lengths_to_mask([min(len(ids) + 1, steps) for ids in drawn.ids], steps).to(lp.device)
        out["r_sample"] = [rouge_reward(s, ref, kind) for s, ref in zip(out["samples"], out["refs"])]
        return out

    def rl_advantages(self, draw: dict, baseline: str = "greedy") -> torch.Tensor:
        """Advantages of the samples of :meth:`rl_draw` against ``baseline`` (``greedy`` or
        ``loo``): (k * batch,) r(y~) - b, or with ``intermediate_rewards`` (k * batch, steps)
        per-word sentence returns less the baseline's return from the same sentence."""
        lp, k = draw["lp"], draw["k"]
        if not self.hp.get("intermediate_rewards"):
            r_s = torch.tensor(draw["r_sample"], dtype=torch.float64)
            base = (torch.tensor(draw["r_greedy"], dtype=torch.float64) if baseline == "greedy"
                    else leave_one_out_baseline(r_s, k))
            return (r_s - base).to(lp.dtype).to(lp.device)
        kind, steps = self.hp.get("reward") or "rougeL", lp.size(1)
        adv = torch.zeros(lp.shape, dtype=lp.dtype)
        if baseline == "greedy":
            for b, (s, g, ref) in enumerate(zip(draw["samples"], draw["greedy"], draw["refs"])):
                row = sentence_advantages(s, g, ref, kind)[:steps]
                adv[b, : len(row)] = torch.tensor(row, dtype=lp.dtype)
            return adv.to(lp.device)
        # leave-one-out, sentence by sentence: sentence q of a sample against the mean return
        # from sentence q of the article's other samples (0 where one has no sentence q)
        returns = [sentence_returns(s, ref, kind) for s, ref in zip(draw["samples"], draw["refs"])]
        width = max(max(len(g) for g in returns), 1)
        table = torch.zeros(len(returns), width, dtype=torch.float64)
        for b, g in enumerate(returns):
            table[b, : len(g)] = torch.tensor(g, dtype=torch.float64)
        base = leave_one_out_baseline(table, k)
        for b, s in enumerate(draw["samples"]):
            base_b = base[b, : len(returns[b])].tolist() or [0.0]
            g_b = returns[b] or [0.0]
            row = sentence_advantages(s, None, "", kind, sample_returns=g_b, baseline_returns=base_b)[:steps]
            adv[b, : len(row)] = torch.tensor(row, dtype=lp.dtype)
        return adv.to(lp.device)

    def rl_loss(self, model, batch):
        """Self-critical loss of ``rl_samples`` sampled summaries per article, each against the
        baseline (``loo``: the mean reward of the article's other samples; ``greedy``: the
        article's greedy summary, decoded in eval mode), rewards ROUGE, reduced as
        ``loss_reduction`` says.  More samples per article give the gradient
        both better and worse summaries than the baseline to learn from, not mostly worse ones.

        Stats: ``rl_loss``, ``reward_sample``, ``reward_greedy`` (greedy baseline only),
        ``adv_positive`` (the fraction of samples that beat their baseline) and ``entropy``
        (-log p of the sampled words, per word: an estimate of the policy's entropy)."""
        k = max(int(self.hp.get("rl_samples") or 1), 1)
        baseline = self.hp.get("baseline") or ("loo" if k >= 2 else "greedy")
        if baseline not in ("greedy", "loo"):
            raise SpecError(f"unknown baseline {baseline!r}; choose greedy or loo")
        if baseline == "loo" and k < 2:
            raise SpecError("the leave-one-out baseline needs rl_samples >= 2")
        rl_red, _ = self.reductions()
        draw = self.rl_draw(model, batch, greedy_baseline=baseline == "greedy")
        adv = self.rl_advantages(draw, baseline)
        lp, mask = draw["lp"], draw["mask"]
        loss = self_critical_loss(lp, mask, adv, 0.0, reduction=rl_red)
        per_sample = adv if adv.dim() == 1 else adv[:, 0]       # with intermediate rewards: the first word's
        stats = {"rl_loss": loss.item(), "reward_sample": metrics.mean(draw["r_sample"]),
                 "adv_positive": float((per_sample > 0).double().mean()),
                 "entropy": float(-(lp.detach() * mask).sum() / mask.sum().clamp_min(1))}
        if "r_greedy" in draw:
            stats["reward_greedy"] = metrics.mean(draw["r_greedy"])
        return loss, stats


# -- Dynamic Memory Networks on bAbI (notebook 03) ----------------------------------------------
from .data import babi as _babi                                              # noqa: E402
from .models.dmn import (DMN, answer_mode_for, babi_vocab, dmn_loss, evaluate_dmn,   # noqa: E402
                         length_buckets, make_dmn_batch)

#: Generated bAbI sizes per profile: questions to train on, to validate on, to test on.
BABI_SIZES = {"fast": (1000, 200, 1000), "full": (10000, 1000, 1000)}


def _babi_tasks(text: str, valid: list[int], where: str) -> list[int]:
    choices = ", ".join(str(t) for t in valid)
    if text == "all":
        return list(valid)
    if not text.isdigit() or int(text) not in valid:
        raise SpecError(f"unknown bAbI task {text!r} for {where}; choose one of {choices} or 'all'")
    return [int(text)]


@register_data("babi", usage="babi:TASK | babi:PATH:TASK",
               help="bAbI QA: generated (TASK 1,2,3,6,7,8,11,15 or all), or a v1.2 folder holding en/ (1-20 or all)")
def _babi_spec(arg: str, profile: str, seed: int) -> Dataset:
    if not arg:
        raise SpecError("bAbI needs a task: babi:1, babi:all, or babi:PATH:TASK for a v1.2 folder")
    path, sep, task_text = arg.rpartition(":")
    train, valid, test = [], [], []
    if not sep:  # generated
        tasks = _babi_tasks(task_text, sorted(_babi.GENERATED_TASKS), "generated data")
        n_train, n_valid, n_test = BABI_SIZES[profile]
        for t in tasks:
            tr, te = _babi.load_generated(t, n_train, n_test, seed)
            train += tr
            test += te
            valid += _babi.generate_examples(t, n_valid, seed=f"{seed}:valid")
        source = "generated"
    else:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise SpecError(f"no bAbI folder at {path!r}: give a folder holding en/ or en-10k/ "
                            "(or the qaN_*_train.txt files themselves)")
        tasks = _babi_tasks(task_text, sorted(_babi.TASK_NAMES), f"the folder {path}")
        for t in tasks:
            try:
                train += _babi.load_task(folder, t, "train")
                test += _babi.load_task(folder, t, "test")
            except FileNotFoundError as exc:
                raise SpecError(str(exc)) from None
        source = str(folder)   # the release has no validation split: valid stays empty
    spec = f"babi:{arg}"
    return Dataset(spec, "babi", train, valid, test,
                   meta={"tasks": tasks, "task": task_text, "source": source})


def _add_dmn_arguments(parser) -> None:
    """Options of the dmn recipe, added once to the ``train`` parser that all recipes share."""
    import argparse

    options = [
        (("--variant", "--dmn-variant"), dict(dest="dmn_variant", choices=["dmn", "dmn+"], default=None,
                                              help="dmn: sigmoid gates + gated GRU (Kumar et al.) or softmax "
                                                   "attention + attention-GRU (DMN+, Xiong et al.)")),
        (("--gate-supervision",),
         dict(dest="gate_supervision", action=argparse.BooleanOptionalAction, default=None,
              help="dmn: add the cross-entropy of the gates against the supporting facts (default on)")),
        (("--passes", "--dmn-passes"), dict(dest="dmn_passes", type=int, default=None, metavar="N",
                                            help="dmn: passes of the episodic memory (T_M); 0: one per "
                                                 "supporting fact of a training question, at most 3")),
        (("--input-module", "--dmn-input"), dict(dest="input_module", choices=["gru", "fusion"], default=None,
                                                 help="dmn: a GRU over the story's words (Kumar et al.) or "
                                                      "DMN+'s positional encoding + bidirectional fusion GRU")),
        (("--memory-update", "--dmn-memory-update"),
         dict(dest="memory_update", choices=["gru", "relu"], default=None,
              help="dmn: m^i = GRU(e^i, m^{i-1}) (Kumar et al.) or ReLU(W[m; e; q] + b) (DMN+)")),
        (("--time-limit",), dict(dest="time_limit", type=float, default=None, metavar="SECONDS",
                                 help="stop training after the epoch that crosses this many seconds "
                                      "(dmn: per bAbI task)")),
    ]
    taken = parser._option_string_actions
    for flags, kwargs in options:
        if kwargs.get("action") is argparse.BooleanOptionalAction:  # it adds the --no- form itself
            if flags[0] not in taken and "--no-" + flags[0][2:] not in taken:
                parser.add_argument(flags[0], **kwargs)
            continue
        free = [f for f in flags if f not in taken]   # another recipe may own a flag already
        if free:
            parser.add_argument(*free, **kwargs)


@register_model("dmn")
class DMNRecipe(Recipe):
    """Dynamic Memory Network on bAbI (notebook 03): one model per task; ``babi:all`` trains
    each task in turn and reports ``per_task`` accuracies and their ``mean_accuracy``."""

    data_kinds = ("babi",)
    profiles = {
        "fast": dict(profile="fast", emb_size=64, hidden_size=64, dmn_passes=0, dmn_variant="dmn",
                     input_module="gru", memory_update="gru", gate_supervision=True, gate_weight=1.0, answer="auto",
                     dropout=0.0, epochs=4, batch_size=16, lr=3e-3, clip=5.0, max_facts=50, time_limit=None,
                     cpu_threads=1),
        "full": dict(profile="full", emb_size=80, hidden_size=80, dmn_passes=0, dmn_variant="dmn",
                     input_module="gru", memory_update="gru", gate_supervision=True, gate_weight=1.0, answer="auto",
                     dropout=0.1, epochs=30, batch_size=32, lr=2e-3, clip=5.0, max_facts=50, time_limit=None,
                     cpu_threads=1),
    }

    @classmethod
    def add_arguments(cls, parser) -> None:
        _add_dmn_arguments(parser)

    # model
    def build_vocab(self, data):
        return babi_vocab(data.train)

    def build_model(self, vocab, answer: str = "word", passes: int | None = None):
        hp = self.hp
        return DMN(len(vocab), hp["emb_size"], hp["hidden_size"], passes=passes or hp["dmn_passes"] or 3,
                   variant=hp["dmn_variant"], answer=answer, input_module=hp["input_module"],
                   memory_update=hp["memory_update"], dropout=hp["dropout"], pad_id=vocab.pad_id,
                   bos_id=vocab.bos_id, eos_id=vocab.eos_id)

    def model_from_config(self, config):
        return DMN(**config)

    def make_batch(self, examples, vocab):
        return make_dmn_batch(examples, vocab, max_facts=self.hp["max_facts"])

    def loss_fn(self, model, batch):
        return dmn_loss(model, batch, gate_supervision=self.hp["gate_supervision"],
                        gate_weight=self.hp["gate_weight"], variant=self.hp["dmn_variant"])

    def score(self, model, examples, vocab, device, kind="babi") -> dict:
        return evaluate_dmn(model, examples, vocab, max_facts=self.hp["max_facts"], device=device)

    # one task
    def _train_task(self, train, test, spec, device, out_dir, *, seed, progress, resume, log):
        vocab = babi_vocab(train)
        answer = self.hp["answer"] if self.hp["answer"] != "auto" else answer_mode_for(train)
        # passes 0 = one pass per supporting fact of the most demanding training question, at most 3
        passes = self.hp["dmn_passes"] or min(3, max(len(ex.supporting) for ex in train))
        model = self.build_model(vocab, answer, passes).to(device)
        config = TrainConfig(epochs=self.hp["epochs"], batch_size=1, lr=self.hp["lr"], clip=self.hp["clip"],
                             seed=seed, eval_every=0, progress=progress, time_limit=self.hp.get("time_limit"))
        extra = {"recipe": self.name, "hparams": self.hp, "model_config": model.config,
                 "vocab": vocab.to_list(), "data": spec, "seed": seed}
        buckets = length_buckets(train, self.hp["batch_size"], max_facts=self.hp["max_facts"], seed=seed)
        started = time.perf_counter()
        # Each "example" handed to fit is a bucket of similar-length stories: fit shuffles the
        # buckets every epoch (and shares them out among processes under torchrun).
        history = fit(model, buckets, make_batch=lambda chunk: self.make_batch(chunk[0], vocab),
                      loss_fn=self.loss_fn, config=config, device=device, out_dir=out_dir, resume=resume,
                      extra_state=extra, log=log)
        seconds = time.perf_counter() - started
        result = {}
        if dist_info().is_main:
            result = self.score(unwrap(model), test, vocab, device)
            result.update(epochs=len(history.epochs), final_loss=history.last("loss"), passes=model.passes,
                          answer_module=answer, train_seconds=round(seconds, 1))
        return result, model, vocab

    def train(self, data, device, out_dir, *, seed=0, progress=True, resume=True, log=None) -> dict:
        self.check_data(data)
        out_dir = Path(out_dir)
        threads = torch.get_num_threads()
        if torch.device(device).type == "cpu" and self.hp.get("cpu_threads"):
            # The DMN takes many small steps (one per fact and pass): a second thread saves
            # little, and on a busy machine waiting for it makes every step many times slower.
            torch.set_num_threads(self.hp["cpu_threads"])
        try:
            return self._train(data, out_dir, device, seed=seed, progress=progress, resume=resume, log=log)
        finally:
            torch.set_num_threads(threads)

    def _train(self, data, out_dir, device, *, seed, progress, resume, log) -> dict:
        common = dict(model=self.name, data=data.spec, split="test", variant=self.hp["dmn_variant"],
                      gate_supervision=self.hp["gate_supervision"], input_module=self.hp["input_module"],
                      memory_update=self.hp.get("memory_update", "gru"))
        tasks = data.meta.get("tasks") or sorted({ex.task for ex in data.train})
        if len(tasks) == 1 and data.meta.get("task") != "all":
            result, _, _ = self._train_task(data.train, data.test, data.spec, device, out_dir, seed=seed,
                                            progress=progress, resume=resume, log=log)
            if result:
                result.update(common, task=tasks[0])
            return result
        return self._train_all(data, tasks, device, out_dir, common, seed=seed, progress=progress,
                               resume=resume, log=log)

    # every task in turn
    def _train_all(self, data, tasks, device, out_dir, common, *, seed, progress, resume, log) -> dict:
        import sys

        from tqdm.auto import tqdm

        from .train import save_checkpoint

        main = dist_info().is_main
        per_task, saved = {}, {}
        started = time.perf_counter()
        bar = tqdm(tasks, desc="bAbI tasks", disable=not (progress and main))
        for t in bar:
            bar.set_postfix(task=t)
            train = [ex for ex in data.train if ex.task == t]
            test = [ex for ex in data.test if ex.task == t]
            result, model, vocab = self._train_task(
                train, test, data.spec, device, out_dir / f"task{t:02d}", seed=seed,
                progress=progress, resume=resume, log=(lambda msg, t=t: log(f"task {t}: {msg}")) if log else None)
            if main:
                per_task[t] = result
                model = unwrap(model)
                saved[t] = {"model": model.state_dict(), "model_config": model.config, "vocab": vocab.to_list()}
        if not main:
            return {}
        seconds = time.perf_counter() - started
        accs = {str(t): round(r["accuracy"], 4) for t, r in per_task.items()}
        mean = sum(r["accuracy"] for r in per_task.values()) / len(per_task)
        lines = [f"{'task':>4}  {'name':<28} {'accuracy':>8}  {'sup. facts':>10}  {'epochs':>6}  {'seconds':>7}"]
        for t, r in per_task.items():
            name = _babi.TASK_NAMES.get(t, "").split("_", 1)[-1]
            lines.append(f"{t:>4}  {name:<28} {100 * r['accuracy']:>7.1f}%  "
                         f"{100 * r['supporting_fact_accuracy']:>9.1f}%  {r['epochs']:>6}  {r['train_seconds']:>7.1f}")
        lines.append(f"{'mean':>4}  {'':<28} {100 * mean:>7.1f}%")
        print("\n".join(lines), file=sys.stderr, flush=True)
        # One checkpoint holding every task's model, so that `evaluate DIR` works for the run.
        save_checkpoint(out_dir / "last.pt", {"model": {}, "per_task": saved, "recipe": self.name,
                                             "hparams": self.hp, "data": data.spec, "seed": seed})
        result = dict(common, per_task=accs, mean_accuracy=round(mean, 4),
                      failed_tasks=[t for t, r in per_task.items() if r["accuracy"] < 0.95],
                      supporting_fact_accuracy={str(t): round(r["supporting_fact_accuracy"], 4)
                                                for t, r in per_task.items()},
                      train_seconds=round(seconds, 1))
        return result

    # evaluate DIR
    @classmethod
    def restore(cls, state, device):
        from .data.vocab import Vocab

        recipe = cls(state["hparams"])
        if "per_task" not in state:
            return super().restore(state, device)
        models, vocabs = torch.nn.ModuleDict(), {}
        for t, saved in state["per_task"].items():
            model = recipe.model_from_config(saved["model_config"]).to(device)
            model.load_state_dict(saved["model"])
            models[str(t)], vocabs[int(t)] = model, Vocab.from_list(saved["vocab"])
        return recipe, models, vocabs

    def evaluate(self, model, vocab, data, split, device) -> dict:
        examples = data.split(split)
        if not examples:
            raise SpecError(f"{data.spec} has no {split!r} split (the bAbI release has train and test only)")
        result = dict(model=self.name, data=data.spec, split=split)
        if isinstance(model, torch.nn.ModuleDict):
            per_task = {}
            for t in sorted({ex.task for ex in examples}):
                if str(t) not in model:
                    raise SpecError(f"this run has no model for bAbI task {t}; it holds tasks {', '.join(model)}")
                exs = [ex for ex in examples if ex.task == t]
                per_task[str(t)] = round(self.score(model[str(t)], exs, vocab[t], device)["accuracy"], 4)
            result.update(per_task=per_task, mean_accuracy=round(sum(per_task.values()) / len(per_task), 4))
            return result
        if len({ex.task for ex in examples}) > 1:
            raise SpecError(f"this run trained one bAbI task; evaluate it on that task, not {data.spec!r}")
        result.update(self.score(model, examples, vocab, device))
        return result
