"""Losses: negative log-likelihood over the (extended) vocabulary, and later coverage, cohesion and RL.

Every model returns log-probabilities over its output vocabulary: ``V`` columns for a model
that can only generate, ``V + n_oov`` for one that can copy (the extended vocabulary).
"""
from __future__ import annotations

import torch

from .data.vocab import extended_to_vocab

REDUCTIONS = ("token", "sequence")


def reduce_tokens(values: torch.Tensor, mask: torch.Tensor, reduction: str = "token") -> torch.Tensor:
    """Reduce per-token values (batch, steps) over the real tokens (``mask``) of a batch.

    ``"token"``: the mean over all real tokens of the batch, sum_{b,t} v_bt / #tokens (a long
    sequence weighs more, but the scale does not grow with length); ``"sequence"``: the sum over
    each sequence's tokens, averaged over the sequences, (1/B) sum_b sum_t v_bt (Paulus et al.
    2017's convention; the scale grows with length).  Both are (#tokens / B) apart: the mean
    length of the batch.
    """
    mask = mask.to(values.dtype)
    total = (values * mask).sum()
    if reduction == "token":
        return total / mask.sum().clamp_min(1.0)
    if reduction == "sequence":
        return total / max(values.size(0), 1)
    raise ValueError(f"unknown reduction {reduction!r}; choose from {', '.join(REDUCTIONS)}")


def sequence_nll(log_probs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor,
                 unk_id: int = 1, reduction: str = "token") -> torch.Tensor:
    """Mean over real target tokens of -log P(y*_t)  (See et al. 2017, eqs. 6-7).

    log_probs (batch, steps, width), targets (batch, steps) in extended ids, mask (batch, steps).
    A target id the model has no column for (an OOV word, for a model that cannot copy)
    counts as UNK: that is the best such a model can say.  ``reduction="sequence"`` gives the
    sum over each target's tokens averaged over the batch instead (see :func:`reduce_tokens`),
    the L_ML of Paulus et al. 2017, eq. (14), to mix with a summed RL loss.
    """
    width = log_probs.size(-1)
    targets = extended_to_vocab(targets, width, unk_id)
    nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)   # (batch, steps)
    return reduce_tokens(nll, mask, reduction)


# -- coverage (See et al. 2017, section 2.3): the pointer-generator's recipe and notebook 05's exercises --

def coverage_terms(attn: torch.Tensor, coverage: torch.Tensor) -> torch.Tensor:
    """See et al.'s eq. (12): covloss_t = sum_i min(a^t_i, c^t_i), one number per step.

    attn (..., src_len) the attention a^t, coverage (..., src_len) c^t = sum_{t' < t} a^{t'}
    (eq. 10), both as the pointer-generator returns them.  Returns (...): for one step (batch,),
    for all steps (batch, T)."""
    return torch.minimum(attn, coverage).sum(dim=-1)


def coverage_loss(attn: torch.Tensor, coverage: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """See et al. 2017, eq. (12): sum_i min(a^t_i, c^t_i), averaged over real target tokens.

    attn (batch, steps, src_len): the attention a^t of each step; coverage (batch, steps,
    src_len): c^t = sum_{t' < t} a^{t'} (eq. 10), the attention paid *before* step t; mask
    (batch, steps): True at real target positions.  The total loss of eq. (13) is
    :func:`nll_with_coverage`.
    """
    return reduce_tokens(coverage_terms(attn, coverage), mask, "token")   # the terms: (batch, steps)


def nll_with_coverage(nll: torch.Tensor, cov_loss: torch.Tensor, lam: float) -> torch.Tensor:
    """See et al. 2017, eq. (13): loss = -log P(w*_t) + lambda sum_i min(a^t_i, c^t_i), both
    averaged over the real target tokens: ``nll`` from :func:`sequence_nll` (or
    :func:`teacher_forced_nll`), ``cov_loss`` from :func:`coverage_loss`."""
    return nll + lam * cov_loss


# -- Deep Communicating Agents: semantic cohesion, self-critical RL, the mixed loss ----------------
# Celikyilmaz et al. 2018, section 3; self-critical sequence training (Rennie et al. 2017); the
# mixed objective of Paulus et al. 2017.

SENTENCE_ENDERS = (".", "!", "?")


def semantic_cohesion(states: torch.Tensor, sent_end: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """L_SEM = sum_{q=2}^{Q} cos(s'_q, s'_{q-1}), averaged over the batch (DCA section 3).

    states (batch, steps, H): the decoder states s_t; sent_end (batch, steps): True at the steps
    whose output ends a sentence (s'_q is the state that emits the q-th sentence's ".");
    ``mask`` (batch, steps) restricts them to real positions.  A summary with fewer than two
    sentences adds 0.

    Sign: the term is *added* to the loss that is minimised, ``L_MLE + lam * L_SEM``, as in the
    paper.  Minimising the cosine of consecutive sentence-end states pushes them apart, which
    is the paper's aim: a sentence should not repeat the one before it.  (Subtracting it would
    reward sentences that say the same thing.)
    """
    ends = sent_end.to(torch.bool)
    if mask is not None:
        ends = ends & mask.to(torch.bool)
    # the end states of each row in order: sentence-end steps first (a stable sort keeps order)
    order = torch.argsort((~ends).to(torch.int8), dim=1, stable=True)
    picked = states.gather(1, order.unsqueeze(-1).expand(-1, -1, states.size(-1)))    # (batch, steps, H)
    count = ends.sum(dim=1, keepdim=True)                                               # Q per row
    cos = torch.nn.functional.cosine_similarity(picked[:, 1:], picked[:, :-1], dim=-1)  # (batch, steps-1)
    pair = torch.arange(1, states.size(1), device=states.device).unsqueeze(0) < count  # q = 2..Q
    return (cos * pair.to(cos.dtype)).sum(dim=1).mean()


def self_critical_loss(sample_log_probs: torch.Tensor, sample_mask: torch.Tensor,
                       sample_reward, greedy_reward, reduction: str = "sequence") -> torch.Tensor:
    """Self-critical policy gradient (Rennie et al. 2017; Paulus et al. 2017; DCA section 3):

        L_RL = -(r(y~) - r(y^)) sum_t log p(y~_t | y~_<t, x),  averaged over the batch,

    y~ sampled from the model, y^ its greedy output (the baseline).  Minimising it makes a sample
    that beats the greedy output more likely and one that loses to it less likely.

    sample_log_probs, sample_mask (batch, steps): log p of each sampled word (the final </s>
    included) and True at those steps.  The rewards are numbers: (batch,) for one reward per
    summary, or (batch, steps) per-word returns (the intermediate rewards, see
    :func:`sentence_advantages`); either side may be a float.  They carry no gradient.
    ``greedy_reward`` is any baseline: the greedy summary's reward, or
    :func:`leave_one_out_baseline` of the samples' rewards.

    ``reduction``: ``"sequence"`` (default, the equation above: a sum over each sample's words,
    averaged over the samples) or ``"token"`` (the mean over all sampled words of the batch).
    Mix it with an MLE term reduced the same way (:func:`sequence_nll`), see :func:`mixed_loss`.
    """
    lp = sample_log_probs
    r_s = torch.as_tensor(sample_reward, dtype=lp.dtype, device=lp.device)
    r_g = torch.as_tensor(greedy_reward, dtype=lp.dtype, device=lp.device)
    adv = (r_s - r_g).detach()
    if adv.dim() == 1:
        adv = adv.unsqueeze(1)                                   # one reward for every word
    return reduce_tokens(-adv * lp, sample_mask, reduction)


def leave_one_out_baseline(rewards, k: int) -> torch.Tensor:
    """The leave-one-out baseline of Kool et al. 2019 ("Buy 4 REINFORCE samples, get a baseline
    for free!"): with k >= 2 samples of every article, the baseline of a sample is the mean
    reward of the article's k - 1 *other* samples,

        b_i = (1 / (k - 1)) sum_{j != i} r_j = (k r_mean - r_i) / (k - 1),

    so r_i - b_i = k / (k - 1) (r_i - r_mean).  It does not depend on the sample it judges (the
    gradient stays unbiased), needs no greedy decoding, and, unlike the greedy baseline, is
    passed by about half of the samples whatever the model's temperature.

    ``rewards``: (k * batch, ...) in the order of ``list(examples) * k`` (the batch repeated k
    times: row j * batch + b is sample j of article b), as :class:`DCARecipe.rl_loss` draws
    them; trailing dimensions (per-sentence returns) are averaged element by element.  Returns
    a float tensor of the same shape.
    """
    if k < 2:
        raise ValueError(f"the leave-one-out baseline needs k >= 2 samples per article, got k={k}")
    r = torch.as_tensor(rewards)
    r = r if r.is_floating_point() else r.double()
    if r.size(0) % k:
        raise ValueError(f"{r.size(0)} rewards are not k={k} samples of each article")
    grouped = r.reshape(k, r.size(0) // k, *r.shape[1:])           # (k, batch, ...)
    base = (grouped.sum(0, keepdim=True) - grouped) / (k - 1)
    return base.reshape(r.shape)


def mixed_loss(rl_loss: torch.Tensor, mle_loss: torch.Tensor, gamma: float) -> torch.Tensor:
    """L_MIXED = gamma L_RL + (1 - gamma) L_MLE (Paulus et al. 2017, eq. 16; DCA section 3, the
    mixed loss of its self-critical training).

    L_RL is Paulus et al.'s eq. (15) (:func:`self_critical_loss`), L_MLE their eq. (14)
    (:func:`sequence_nll`); written per token,

        L_RL  = -(1/N~) sum_{b,t} A_b log p(y~_bt | y~_b,<t, x_b)     A_b = r(y~_b) - baseline_b
        L_MLE = -(1/N*) sum_{b,t} log p(y*_bt | y*_b,<t, x_b)

    with N~, N* the numbers of sampled and of reference tokens (``reduction="token"``), or both
    the number of sequences (``reduction="sequence"``: Paulus et al.'s sums over tokens).
    **Both terms must be reduced the same way.**  Then a token weighs gamma |A| in the first
    and (1 - gamma) in the second whatever the summaries' lengths, and the MLE term's share of
    the mixed gradient is

        (1 - gamma) ||g_MLE|| / (gamma ||g_RL||)       (g: the gradients of the two terms)

    ``experiments/rl_diagnostics.py`` measured, per token, ||g_MLE|| / ||g_RL|| ~ 39 for
    notebook 07's DCA on SynthNews-long (||g_RL|| ~ 0.034, ||g_MLE|| ~ 1.3; |A| ~ 0.05, and
    the samples' gradients partly cancel); so the MLE share is ~7% at gamma = 0.9984 (Paulus
    et al.'s value, the recipe's default), ~4% at 0.999 and ~100% at 0.97, where 40 steps
    lowered the validation ROUGE-L as much as MLE alone did (results in
    ``results/rl_diagnostics.md``).  Sums over tokens (``"sequence"``) give the same
    shares as per-token means when samples and references are about as long; only the overall
    scale (x the mean length) differs, which Adam mostly ignores but gradient clipping does not.

    Mixing a *summed* L_RL with a *per-token* L_MLE (the ``legacy`` configuration that
    ``experiments/rl_diagnostics.py`` measures) multiplies the RL side by the mean sample length T: a share of
    (1 - gamma) ||g_MLE|| / (gamma T ||g_RL||), measured ~3.5% at gamma = 0.97 with T ~ 36 words,
    halving whenever the summaries double in length.

    This function only weighs: pass it terms reduced alike (``DCARecipe.loss_fn`` does).
    """
    return gamma * rl_loss + (1.0 - gamma) * mle_loss


_SCORERS: dict = {}          # one rouge-score scorer per ROUGE type (building one is slow)


def _rouge_scorer(kind: str):
    if kind not in _SCORERS:
        from rouge_score import rouge_scorer
        _SCORERS[kind] = rouge_scorer.RougeScorer([kind], use_stemmer=True)
    return _SCORERS[kind]


def rouge_reward(pred_tokens, ref_text: str, kind: str = "rougeL") -> float:
    """The reward r(y): ROUGE F1 in [0, 1] of a token list against a reference text, computed
    by rouge-score with the Porter stemmer (as :mod:`dca_course.metrics` does, without the x100).

    ``kind`` is a rouge-score type: ``rougeL`` by default, the longest common subsequence of the
    two texts each read as one sequence of words, which is not the papers' ROUGE-L (the DCA
    paper's reward and the figures the papers report are the summary-level ROUGE-L, a union of
    longest common subsequences sentence by sentence: rouge-score's ``rougeLsum``); or
    ``rouge1``, ``rouge2``, ``rougeLsum``.  The prediction is given one sentence a line, so
    ``rougeLsum`` sees its sentences; ``ref_text`` should hold the reference's sentences on
    separate lines.
    """
    from .metrics import sentences_to_text

    return float(_rouge_scorer(kind).score(ref_text, sentences_to_text(pred_tokens))[kind].fmeasure)


def sentence_spans(tokens, enders=SENTENCE_ENDERS) -> list[tuple[int, int]]:
    """(start, end) token spans of the sentences of ``tokens`` (a trailing unfinished one included)."""
    spans, start = [], 0
    for i, tok in enumerate(tokens):
        if tok in enders:
            spans.append((start, i + 1))
            start = i + 1
    if start < len(tokens):
        spans.append((start, len(tokens)))
    return spans


def prefix_rewards(pred_tokens, ref_text: str, kind: str = "rougeL") -> list[float]:
    """[r(first q sentences) for q = 0 .. Q], with r(no sentence) = 0."""
    spans = sentence_spans(pred_tokens)
    return [0.0] + [rouge_reward(pred_tokens[:end], ref_text, kind) for _, end in spans]


def intermediate_rewards(pred_tokens, ref_text: str, kind: str = "rougeL") -> list[float]:
    """The DCA paper's sentence-level rewards: r(y_q) = r([y_1..y_q]) - r([y_1..y_{q-1}]), what
    sentence q adds to the summary's score.  They sum to r(y)."""
    pre = prefix_rewards(pred_tokens, ref_text, kind)
    return [b - a for a, b in zip(pre[:-1], pre[1:])]


def _returns(deltas: list, discount: float) -> list[float]:
    """G_q = sum_{q' >= q} discount^(q' - q) deltas[q'] for every q."""
    out, g = [], 0.0
    for d in reversed(deltas):
        g = d + discount * g
        out.append(g)
    return out[::-1]


def sentence_returns(tokens, ref_text: str, kind: str = "rougeL", discount: float = 1.0) -> list[float]:
    """[G_q for every sentence q of ``tokens``], G_q = sum_{q' >= q} discount^(q' - q) r(y_q'),
    over the intermediate rewards of :func:`intermediate_rewards` (empty for an empty summary)."""
    return _returns(intermediate_rewards(tokens, ref_text, kind), discount)


def sentence_advantages(sample_tokens, greedy_tokens, ref_text: str, kind: str = "rougeL",
                        discount: float = 1.0, *, sample_returns=None, baseline_returns=None) -> list[float]:
    """Per-word advantages with intermediate (sentence-level) rewards, one for each sampled word
    and one for the final </s> (which belongs to the last sentence).

    A word of sentence q is credited with the return of its sentence, G_q = sum_{q' >= q}
    discount^(q' - q) r(y~_q') over the intermediate rewards of :func:`intermediate_rewards`,
    less the greedy baseline's return from its own sentence q (0 once the greedy summary has
    no sentence q).  ``discount=1`` (default) credits a sentence with everything the summary
    gains from it on (the undiscounted reward to go; then a one-sentence summary gets the plain
    self-critical advantage r(y~) - r(y^)); ``discount=0`` with its own gain only.  Pass the
    result, padded to (batch, steps), as ``sample_reward`` of :func:`self_critical_loss` with
    ``greedy_reward=0``.

    ``sample_returns`` / ``baseline_returns``: the per-sentence returns, when already computed
    (:func:`sentence_returns`), or for another baseline than a greedy summary (the leave-one-out
    mean of the other samples' returns); ``greedy_tokens`` and ``ref_text`` are then not read.
    """
    g_s = sample_returns if sample_returns is not None else sentence_returns(sample_tokens, ref_text, kind, discount)
    g_s = list(g_s) or [0.0]
    g_g = baseline_returns if baseline_returns is not None else sentence_returns(greedy_tokens, ref_text, kind,
                                                                                 discount)
    base = lambda q: g_g[q] if q < len(g_g) else 0.0         # noqa: E731
    spans = sentence_spans(sample_tokens) or [(0, 0)]
    out = []
    for q, (start, end) in enumerate(spans):         # q: 0-based sentence index
        out.extend([g_s[q] - base(q)] * (end - start))
    q_last = len(spans) - 1
    out.append(g_s[q_last] - base(q_last))
    return out


def teacher_forced_nll(out: dict, targets: torch.Tensor, mask: torch.Tensor, unk_id: int = 1,
                       reduction: str = "token") -> torch.Tensor:
    """:func:`sequence_nll` of a teacher-forced model's output ``out``: the same number, read from
    ``out["target_log_probs"]`` (batch, steps), log P(y*_t), where the model gives it (the
    pointer-generator's and DCA's ``model(batch, log_probs=False)``, far cheaper forward and
    backward than all of log P), else from ``out["log_probs"]``."""
    picked = out.get("target_log_probs")
    if picked is None:
        return sequence_nll(out["log_probs"], targets, mask, unk_id, reduction)
    return reduce_tokens(-picked, mask, reduction)
