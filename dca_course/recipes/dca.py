"""Deep Communicating Agents (Celikyilmaz et al. 2018): MLE with semantic cohesion, then
self-critical RL (notebooks 06 and 07)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import torch

from .. import metrics
from ..data.agents import collate_agents
from ..data.batching import lengths_to_mask
from ..data.dataset import Dataset, SpecError
from ..data.vocab import Vocab
from ..decoding import greedy
from ..decoding import sample as sample_decode
from ..losses import (leave_one_out_baseline, mixed_loss, rouge_reward, self_critical_loss, semantic_cohesion,
                      sentence_advantages, sentence_returns, teacher_forced_nll)
from ..models.dca import DCA
from ..models.extensions import ExtendedDCA, VocabTanh
from ..train import load_checkpoint, unwrap
from .config import RecipeConfig, knob, with_knobs
from .copying import SUMMARY, SUMMARY_FAST, SUMMARY_HELP, SummarizerRecipe, summary_for_data
from .seq2seq import ENCODER_DECODER


@dataclass(frozen=True)
@with_knobs(ENCODER_DECODER, SUMMARY, help=dict(
    SUMMARY_HELP, hidden_size="LSTM state size of the agents' encoders and the decoder",
    max_src="source tokens DCA reads, split among the agents (800 in the fast profile, as Celikyilmaz et al.)"))
class DCAConfig(RecipeConfig):
    agents: int = knob(3, "number of agents (the paper: 3)", metavar="N")
    context_layers: int = knob(1, "contextual encoder layers", metavar="K")
    vocab_mlp: str = knob("linear", "the 'MLP' of eqs. (11)-(12): two linear maps (linear, as See et al.'s eq. (4)) "
                                    "or with a tanh between them", choices=("linear", "tanh"))
    cohesion: float = knob(0.0, "weight of the semantic cohesion loss (0: off)", metavar="LAMBDA")
    init: str | None = knob(None, "start from the weights (and vocabulary) of a dca run folder, e.g. an MLE run",
                            metavar="DIR")
    rl: bool = knob(False, "self-critical RL mixed with MLE (--gamma); best with --init")
    rl_epochs: int = knob(1, "with --rl: the epochs, unless --epochs is given")
    rl_lr: float = knob(1e-4, "with --rl: the learning rate, unless --lr is given")
    rl_batch_size: int = knob(8, "with --rl: the batch size, unless --batch-size is given (each article is "
                                 "sampled rl_samples times with its graph kept: memory)")
    rl_train: int | None = knob(400, "with --rl: train on the first N training articles only (none: all)",
                                metavar="N")
    gamma: float = knob(0.9984, "with --rl: weight of the RL loss in the mixed loss (0: the control, the same "
                                "steps with MLE alone)")
    reward: str = knob("rougeL", "with --rl: the ROUGE F1 used as reward",
                       choices=("rouge1", "rouge2", "rougeL", "rougeLsum"))
    intermediate_rewards: bool = knob(False, "with --rl: sentence-level (intermediate) rewards")
    reward_discount: float = knob(1.0, "with --intermediate-rewards: a word of sentence q is credited with "
                                       "sum_{q' >= q} d^(q'-q) r(y_q'); 1 (default): the reward to go, 0: the "
                                       "sentence's own gain (the DCA paper's eq. (16), as we read it)",
                                  metavar="D")
    rl_samples: int = knob(4, "with --rl: summaries sampled per article, each judged against the baseline",
                           metavar="K")
    baseline: str = knob("loo", "with --rl: the reward baseline: the mean reward of the article's other samples "
                                "(loo, Kool et al. 2019; needs --rl-samples >= 2) or the greedy summary's "
                                "(greedy, Rennie et al. 2017, the DCA paper's)", choices=("greedy", "loo"))
    loss_reduction: str = knob("token", "with --rl: L_RL and L_MLE both as means over tokens (token), or both as "
                                        "sums over each summary's tokens (sequence, Paulus et al.)",
                               choices=("token", "sequence"))

    FAST: ClassVar[dict] = dict(SUMMARY_FAST, max_src=800, epochs=6)
    FULL: ClassVar[dict] = dict(emb_size=128, hidden_size=256, context_layers=2, vocab_size=50000, epochs=20,
                                lr=1e-3, rl_epochs=5, rl_train=None)

    for_data = summary_for_data

    def __post_init__(self):
        if self.rl and self.baseline == "loo" and int(self.rl_samples or 1) < 2:
            raise SpecError("--baseline loo (the default) needs --rl-samples K with K >= 2 (each sample is "
                            "judged against the mean of the article's other samples); with one sample per "
                            "article pass --baseline greedy")

    @classmethod
    def implied_overrides(cls, base, given: dict) -> dict:
        """With ``rl``, ``rl_epochs``/``rl_lr``/``rl_batch_size`` replace ``epochs``/``lr``/
        ``batch_size`` unless those are given."""
        implied = dict(given)
        if given.get("rl", base.rl):
            rl_values = {"epochs": "rl_epochs", "lr": "rl_lr", "batch_size": "rl_batch_size"}
            for knob_name, rl_name in rl_values.items():
                implied.setdefault(knob_name, given.get(rl_name, getattr(base, rl_name)))
        return implied


class DCARecipe(SummarizerRecipe):
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
    both sums over tokens averaged over the summaries (Paulus et al.): the two terms are reduced
    alike, so that ``gamma`` alone sets their weights.  ``gamma`` 0.9984 (Paulus et al.'s) leaves the MLE term ~7% of the mixed
    gradient with ``token``.  ``baseline``: ``loo`` (default), the leave-one-out mean reward of
    the article's other ``rl_samples`` samples (Kool et al. 2019), or ``greedy``, the greedy
    summary's reward (Rennie et al. 2017, the DCA paper's).  On notebook 07's model the
    leave-one-out baseline halved the variance of the RL gradient estimate against the greedy
    one, is beaten by half of the samples (the greedy one by about a third) and needs no greedy
    decoding; ``experiments/rl_diagnostics.py`` measures both (``results/rl_diagnostics.md``).
    """

    name = "dca"
    config_class = DCAConfig
    model_class = DCA
    extended_class = ExtendedDCA
    data_kinds = ("summaries",)
    refusal_reasons = {"pairs": "its agents each read some paragraphs of an article"}

    def __init__(self, config):
        super().__init__(config)
        self._init_ckpt = None
        self._vocab = None

    # -- starting from another run ---------------------------------------------------------------
    def init_checkpoint(self):
        """The checkpoint of ``--init DIR`` (a run folder or a ``.pt`` file), or None."""
        if not self.config.init:
            return None
        if self._init_ckpt is None:
            path = Path(self.config.init)
            state = load_checkpoint(path / "last.pt" if path.is_dir() else path)
            if state.get("recipe") != self.name:
                raise SpecError(f"--init {path}: a {state.get('recipe')!r} run, not a {self.name!r} run")
            agents = state.get("hparams", {}).get("agents")
            if agents is not None and agents != self.config.agents:
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
            model = self.model_from_config(state["model_config"])
            model.load_state_dict(state["model"])
            return model
        # the paper's DCA; ExtendedDCA for the course's tanh in the vocabulary MLP
        cls, more = (ExtendedDCA, dict(extensions=[VocabTanh()])) if self.config.vocab_mlp == "tanh" else (DCA, {})
        return cls(len(vocab), self.config.emb_size, self.config.hidden_size,
                   context_layers=self.config.context_layers, **more)

    def make_batch(self, examples, vocab):
        return collate_agents(examples, vocab, self.config.agents, self.config.max_src, self.config.max_tgt)

    def train(self, data: Dataset, device, out_dir: Path, **kwargs) -> dict:
        init = self.config.init
        if init:
            init_dir = Path(init) if Path(init).is_dir() else Path(init).parent
            if Path(out_dir).resolve() == init_dir.resolve():
                raise SpecError(f"--init {init}: give the new run its own --out folder")
        return super().train(data, device, out_dir, **kwargs)

    def training_data(self, data: Dataset) -> Dataset:
        if self.config.rl and self.config.rl_train:
            return replace(data, train=data.train[: self.config.rl_train])
        return data

    # -- losses ----------------------------------------------------------------------------------
    def reductions(self) -> tuple[str, str]:
        """(reduction of L_RL, reduction of L_MLE) for ``loss_reduction``."""
        kind = self.config.loss_reduction
        if kind not in ("token", "sequence"):
            raise SpecError(f"unknown loss_reduction {kind!r}; choose token or sequence")
        return kind, kind

    def mle_loss(self, model, batch, reduction: str = "token"):
        """L_MLE (+ lam * semantic cohesion) and its stats; ``nll`` is always the per-token mean."""
        out = model(batch, log_probs=False)           # the loss reads log P(y*_t) alone
        nll = teacher_forced_nll(out, batch.tgt_out, batch.tgt_mask)
        stats = {"nll": nll.item()}
        loss = nll if reduction == "token" else teacher_forced_nll(out, batch.tgt_out, batch.tgt_mask,
                                                                   reduction=reduction)
        lam = self.config.cohesion
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
        if not self.config.rl:
            return self.mle_loss(model, batch)
        rl_red, mle_red = self.reductions()
        loss, stats = self.mle_loss(model, batch, mle_red)
        if self.config.gamma == 0:     # the control: the same steps with L_MLE alone (nothing sampled)
            return loss, stats
        rl, rl_stats = self.rl_loss(unwrap(model), batch)
        stats.update(rl_stats)
        return mixed_loss(rl, loss, self.config.gamma), stats

    def rl_draw(self, model, batch, greedy_baseline: bool = True) -> dict:
        """Sample ``rl_samples`` summaries of every article (with their graph) and score them.

        Returns a dict: ``k``; ``lp``, ``mask`` (k * batch, steps), the log-probability of every
        sampled word (the final </s> included) and True at those steps, rows in the order of
        ``list(batch.examples) * k``; ``samples`` (token lists), ``refs`` (reference texts),
        ``r_sample`` (k * batch,) their rewards; with ``greedy_baseline`` also ``greedy`` and
        ``r_greedy`` (k * batch,), the article's greedy summary and its reward, repeated k times.
        The greedy summary is decoded in eval mode (no dropout: what the model would output at
        test time), the samples in the mode the model is in (training: the policy trained)."""
        vocab, kind = self._vocab, self.config.reward
        max_len = self.decode_lengths()[0]
        k = max(self.config.rl_samples, 1)
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
        per-word sentence returns less the baseline's return from the same sentence.

        A sentence's return is G_q = sum_{q' >= q} d^(q' - q) r(y_q') over the intermediate
        rewards r(y_q) = r(y_1..q) - r(y_1..q-1), d = ``reward_discount``.  The DCA paper
        (Celikyilmaz et al. 2018, "intermediate rewards", eq. (16)) defines r(y_q) and rewards a
        sentence for the increase in ROUGE it contributes, writing no sum over later sentences:
        as we read it, d = 0.  The default d = 1 (each sentence credited with everything the
        summary gains from it on; a one-sentence summary gets the plain r(y~) - r(y^)) is what
        this course's stored RL results were made with."""
        lp, k = draw["lp"], draw["k"]
        if not self.config.intermediate_rewards:
            r_s = torch.tensor(draw["r_sample"], dtype=torch.float64)
            base = (torch.tensor(draw["r_greedy"], dtype=torch.float64) if baseline == "greedy"
                    else leave_one_out_baseline(r_s, k))
            return (r_s - base).to(lp.dtype).to(lp.device)
        kind, steps, discount = self.config.reward, lp.size(1), self.config.reward_discount
        adv = torch.zeros(lp.shape, dtype=lp.dtype)
        if baseline == "greedy":
            for b, (s, g, ref) in enumerate(zip(draw["samples"], draw["greedy"], draw["refs"])):
                row = sentence_advantages(s, g, ref, kind, discount)[:steps]
                adv[b, : len(row)] = torch.tensor(row, dtype=lp.dtype)
            return adv.to(lp.device)
        # leave-one-out, sentence by sentence: sentence q of a sample against the mean return
        # from sentence q of the article's other samples (0 where one has no sentence q)
        returns = [sentence_returns(s, ref, kind, discount) for s, ref in zip(draw["samples"], draw["refs"])]
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
        k = max(self.config.rl_samples, 1)
        baseline = self.config.baseline
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


