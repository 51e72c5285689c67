"""Copying and coverage: CopyNet and the pointer-generator, on SynthNews and CNN/DailyMail
(notebooks 04 and 05).  :class:`SummarizerRecipe` is also DCA's base: beam-search evaluation
and the summary scores."""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import ClassVar

from .. import metrics
from ..decoding import beam_search, greedy
from ..fast import accelerate
from ..losses import coverage_loss, nll_with_coverage, teacher_forced_nll
from ..models.copynet import CopyNet
from ..models.pointer_generator import PointerGenerator
from ..train import unwrap
from ..data.batching import collate
from .base import Recipe
from .config import RecipeConfig, knob, with_knobs
from .seq2seq import ENCODER_DECODER, pair_vocab

#: Decode lengths when neither the configuration nor the data set gives them.
DEFAULT_MAX_DECODE, DEFAULT_MIN_DECODE = 100, 0


#: The summarisers' own knobs (CopyNet, the pointer-generator, DCA), beside :data:`ENCODER_DECODER`.
SUMMARY = dict(
    beam_size=("int", 4, "beam width for evaluation (1: greedy)", {}),
    min_decode=("int | None", None, "shortest output when beam decoding (none: the data set's)", {}),
    eval_batch_size=("int", 64, "articles decoded together when evaluating", {}),
    length_penalty=("float", 1.0, "beam search ranks finished summaries by score / length ** this", {}),
    bucket=("bool", False, "train on fixed batches of similar source lengths (less padding), shuffled every "
                           "epoch", {}),
)
#: The summarisers' fast profile (changes to the knobs' defaults).
SUMMARY_FAST = dict(emb_size=64, hidden_size=64, vocab_size=2000, max_src=400, max_tgt=100, max_decode=None,
                    epochs=3, batch_size=16, clip=2.0)
SUMMARY_HELP = dict(max_decode="longest summary when decoding (none: the data set's)")


def summary_for_data(config, data):
    """The decode lengths left open (None) taken from the data set's ``meta`` (SynthNews:
    20..80 words, CNN/DailyMail: 35..120), else 100 and 0."""
    return replace(config, max_decode=_given(config.max_decode, data.meta.get("max_decode", DEFAULT_MAX_DECODE)),
                   min_decode=_given(config.min_decode, data.meta.get("min_decode", DEFAULT_MIN_DECODE)))


def _given(value, fallback) -> int:
    return int(value) if value is not None else int(fallback)


def source_length_buckets(examples, batch_size: int, seed: int = 0) -> list:
    """The examples cut into groups of ``batch_size`` with similar source lengths (ties and
    equal lengths in a seeded random order)."""
    rng = random.Random(seed)
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i].source), rng.random()))
    return [[examples[i] for i in order[j: j + batch_size]] for j in range(0, len(order), batch_size)]


class SummarizerRecipe(Recipe):
    """Shared by CopyNet, the pointer-generator and DCA: summaries, beam-search evaluation."""

    data_kinds = ("summaries", "pairs")
    refusal_reasons: dict = {}

    def build_vocab(self, data):
        return pair_vocab(data, self.config.vocab_size)

    def accelerated(self, model):
        return accelerate(model) if self.config.fast_path else model

    def make_batch(self, examples, vocab):
        return collate(examples, vocab, self.config.max_src, self.config.max_tgt)

    def decode_lengths(self) -> tuple[int, int]:
        """(longest, shortest) output: the configuration's, resolved by ``for_data`` when
        training starts; a recipe used before that (in a notebook) falls back to 100 and 0."""
        return (_given(self.config.max_decode, DEFAULT_MAX_DECODE),
                _given(self.config.min_decode, DEFAULT_MIN_DECODE))

    def batch_groups(self, train, seed):
        # batches of similar source lengths: about a third less work on SynthNews
        return source_length_buckets(train, self.config.batch_size, seed) if self.config.bucket else None

    def predict(self, model, examples, vocab, device, block_ngram_repeat: int = 0) -> list[list[str]]:
        """Beam search (``beam_size``; 1 = greedy) over batches of similar source lengths;
        with ``block_ngram_repeat=n`` > 0, no summary repeats an n-gram (beam search, even with one beam)."""
        model.eval()
        order = sorted(range(len(examples)), key=lambda i: len(examples[i].source))
        preds: list = [None] * len(examples)
        step, c = self.config.eval_batch_size, self.config
        max_len, min_len = self.decode_lengths()
        for i in range(0, len(order), step):
            idx = order[i: i + step]
            batch = self.make_batch([examples[j] for j in idx], vocab).to(device)
            if c.beam_size > 1 or block_ngram_repeat:
                decoded = beam_search(model, batch, c.beam_size, max_len=max_len, min_len=min_len,
                                      length_penalty=c.length_penalty, block_ngram_repeat=block_ngram_repeat)
            else:
                decoded = greedy(model, batch, max_len)
            for j, ids, oovs in zip(idx, decoded.ids, batch.oovs):
                preds[j] = vocab.decode(ids, oovs)
        return preds

    def score_predictions(self, preds, examples, vocab, kind: str) -> dict:
        result = super().score_predictions(preds, examples, vocab, kind)
        if kind != "summaries":
            return result
        words = set(vocab.itos)
        oov = [metrics.oov_entity_recall(p, ex.facts, words) for p, ex in zip(preds, examples) if ex.facts]
        oov = [r for r in oov if r is not None]
        if oov:
            result["oov_entity_recall"] = metrics.mean(oov)
        return result


#: CopyNet's and the pointer-generator's attention size.
ATTENTION = dict(attn_size=("int | None", 64, "attention size (none: the encoder's output size)", dict(metavar="N")))
COPYING_FAST = dict(SUMMARY_FAST, bucket=True)
COPYING_FULL = dict(emb_size=128, hidden_size=256, attn_size=None, vocab_size=50000, epochs=20, lr=1e-3)


@dataclass(frozen=True)
@with_knobs(ENCODER_DECODER, SUMMARY, ATTENTION, help=dict(
    SUMMARY_HELP, max_src="source tokens CopyNet reads (the first 400 in the fast and full profiles, as See et al.)"))
class CopyNetConfig(RecipeConfig):
    FAST: ClassVar[dict] = COPYING_FAST
    FULL: ClassVar[dict] = COPYING_FULL
    for_data = summary_for_data


class CopyNetRecipe(SummarizerRecipe):
    """CopyNet (Gu et al. 2016): generate and copy modes in one softmax, selective read."""

    name = "copynet"
    config_class = CopyNetConfig
    model_class = CopyNet

    def build_model(self, vocab):
        return CopyNet(len(vocab), self.config.emb_size, self.config.hidden_size, attn_size=self.config.attn_size)


@dataclass(frozen=True)
@with_knobs(ENCODER_DECODER, SUMMARY, ATTENTION, help=dict(
    SUMMARY_HELP, hidden_size="LSTM state size (per direction in the encoder)",
    max_src="source tokens the pointer-generator reads (the first 400 in the fast and full profiles, as See et al.)"))
class PointerGeneratorConfig(RecipeConfig):
    coverage: bool = knob(False, "add coverage (See et al. eqs. 10-13)")
    coverage_weight: float = knob(1.0, "lambda of eq. (13)")
    coverage_epochs: int = knob(1, "with --coverage: epochs of the final coverage phase after --epochs "
                                   "without it (0: coverage from the start)")
    pointer: bool = knob(True, "copy from the source (--no-pointer: the paper's baseline)")
    input_feeding: bool = knob(True, "feed the previous context to the decoder LSTM, as See et al.'s code does "
                                     "(--no-input-feeding: the decoder LSTM runs fused over the summary, faster to "
                                     "train; lower ROUGE on real news: results/cnndm_real.md)")

    FAST: ClassVar[dict] = COPYING_FAST
    FULL: ClassVar[dict] = COPYING_FULL
    for_data = summary_for_data


class PointerGeneratorRecipe(SummarizerRecipe):
    """The pointer-generator (See et al. 2017); ``--coverage`` adds coverage for a final phase.

    With input feeding by default, as See et al.'s code has it (``--no-input-feeding`` leaves it out;
    the paper's equations (1)-(4) do not need it, and without it the decoder LSTM runs as one fused
    call). The two scored alike on SynthNews; on real CNN/DailyMail lines input feeding scored
    higher by more than the seeds' spread (``results/cnndm_real.md``)."""

    name = "pointer-generator"
    config_class = PointerGeneratorConfig
    model_class = PointerGenerator

    def build_model(self, vocab):
        c = self.config
        return PointerGenerator(len(vocab), c.emb_size, c.hidden_size, attn_size=c.attn_size, coverage=False,
                                pointer=c.pointer, input_feeding=c.input_feeding)

    def phases(self):
        """Without coverage: one phase.  With it: ``epochs`` without coverage, then
        ``coverage_epochs`` more with it (the paper's short final phase), or coverage from the
        first step when ``coverage_epochs`` is 0."""
        epochs, extra = self.config.epochs, self.config.coverage_epochs or 0
        if not self.config.coverage:
            return [(epochs, lambda m: m.set_coverage(False))]
        if extra <= 0:
            return [(epochs, lambda m: m.set_coverage(True))]
        return [(epochs, lambda m: m.set_coverage(False)), (epochs + extra, lambda m: m.set_coverage(True))]

    def loss(self, model, batch):
        """(the training loss, its NLL, its coverage loss) as tensors: eq. (13) with coverage on,
        the NLL alone without (the benchmarks time this, the one definition of the loss)."""
        out = model(batch, log_probs=False)           # the loss reads log P(y*_t) alone
        nll = teacher_forced_nll(out, batch.tgt_out, batch.tgt_mask)
        cov = coverage_loss(out["attn"], out["coverage"], batch.tgt_mask)            # eq. (12), also logged
        if not unwrap(model).coverage:
            return nll, nll, cov
        return nll_with_coverage(nll, cov, self.config.coverage_weight), nll, cov     # eq. (13)

    def loss_fn(self, model, batch):
        loss, nll, cov = self.loss(model, batch)
        return loss, {"nll": nll.item(), "cov_loss": cov.item()}
