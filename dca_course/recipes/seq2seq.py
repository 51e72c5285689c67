"""The toy-task recipes: the attention encoder-decoder (notebook 02) and the GRU language model
(notebook 01)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from ..data.batching import Batch, collate, lengths_to_mask, pad_sequences
from ..data.vocab import Vocab
from ..decoding import greedy
from ..fast import accelerate
from ..losses import sequence_nll
from ..models.gru_lm import SEP, GRULanguageModel
from ..models.seq2seq import Seq2Seq
from .base import Recipe
from .config import RecipeConfig, knob, with_knobs

#: The encoder-decoders' knobs: seq2seq's, and the summarisers' (recipes/copying.py, recipes/dca.py),
#: each ``name=(type, default, help, extras)`` (see :func:`~dca_course.recipes.config.with_knobs`).
ENCODER_DECODER = dict(
    emb_size=("int", 32, "word embedding size", dict(metavar="N")),
    hidden_size=("int", 64, "GRU state size (per direction in the encoder)", dict(metavar="N")),
    vocab_size=("int | None", None, "vocabulary size (most frequent training words; none: all)", {}),
    max_src=("int | None", None, "source tokens the model reads (none: all)", dict(metavar="N")),
    max_tgt=("int | None", None, "target tokens trained on (the rest is cut)", dict(metavar="N")),
    max_decode=("int | None", 12, "longest output when decoding", {}),
    fast_path=("bool", True, "train and decode with the fast forms of the attention and the output layers "
                             "(hand-written backward passes): the values of the model's code as written, faster; "
                             "on by default; --no-fast-path runs that code", {}),
)


@dataclass(frozen=True)
@with_knobs(ENCODER_DECODER)
class Seq2SeqConfig(RecipeConfig):
    FULL: ClassVar[dict] = dict(emb_size=128, hidden_size=256, epochs=10, lr=1e-3)


def pair_vocab(data, max_size: int | None) -> Vocab:
    """The ``max_size`` most frequent words of the training sources and targets (all with None)."""
    return Vocab.build([ex.source + ex.target for ex in data.train], max_size=max_size)


class Seq2SeqRecipe(Recipe):
    """Bahdanau attention encoder-decoder (notebook 02)."""

    name = "seq2seq"
    config_class = Seq2SeqConfig
    model_class = Seq2Seq
    # Summaries are refused rather than sized from the data: `pointer-generator --no-pointer` is
    # that sized attention encoder-decoder already (README, "Which model for which data").
    data_kinds = ("pairs",)
    refusal_reasons = {"summaries": "it is sized for the toy tasks (12 output tokens, every word in its "
                                    "vocabulary, whole articles)"}

    def build_vocab(self, data):
        return pair_vocab(data, self.config.vocab_size)

    def build_model(self, vocab):
        return Seq2Seq(len(vocab), self.config.emb_size, self.config.hidden_size)

    def accelerated(self, model):
        return accelerate(model) if self.config.fast_path else model

    def make_batch(self, examples, vocab):
        return collate(examples, vocab, self.config.max_src, self.config.max_tgt)

    def predict(self, model, examples, vocab, device) -> list[list[str]]:
        """Greedy outputs, as tokens, for ``examples``."""
        model.eval()
        preds = []
        for i in range(0, len(examples), 128):
            batch = self.make_batch(examples[i: i + 128], vocab).to(device)
            decoded = greedy(model, batch, self.config.max_decode)
            preds += [vocab.decode(ids, oovs) for ids, oovs in zip(decoded.ids, batch.oovs)]
        return preds


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


@dataclass(frozen=True)
class GRULMConfig(RecipeConfig):
    emb_size: int = knob(32, "word embedding size", metavar="N")
    hidden_size: int = knob(128, "GRU state size", metavar="N")
    scratch: bool = knob(False, "the course's GRU written in Python (slow, with its gates) instead of torch.nn.GRU")
    max_decode: int | None = knob(12, "longest completion when decoding")

    FAST: ClassVar[dict] = dict(epochs=6)
    FULL: ClassVar[dict] = dict(emb_size=64, hidden_size=512, epochs=20, lr=1e-3)


class GRULMRecipe(Recipe):
    """A GRU language model over ``source <sep> target`` (notebook 01): no attention, one state."""

    name = "gru-lm"
    config_class = GRULMConfig
    model_class = GRULanguageModel
    data_kinds = ("pairs",)

    def build_vocab(self, data):
        return Vocab([SEP] + Vocab.build([ex.source + ex.target for ex in data.train]).itos[4:])

    def build_model(self, vocab):
        return GRULanguageModel(len(vocab), self.config.emb_size, self.config.hidden_size,
                                scratch=self.config.scratch)

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
            for i, ids in zip(idx, model.complete(prompts, self.config.max_decode)):
                preds[i] = vocab.decode(ids)
        return preds

    def score(self, model, examples, vocab, device, kind):
        result = super().score(model, examples, vocab, device, kind)
        with torch.no_grad():
            batch = self.make_batch(examples, vocab).to(device)
            nll = float(self.loss_fn(model, batch)[0])
        result["perplexity"] = math.exp(nll)
        return result
