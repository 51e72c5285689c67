"""Copying over the extended vocabulary: what the pointer-generator (See et al. 2017), CopyNet
(Gu et al. 2016) and DCA (Celikyilmaz et al. 2018) share.

A copying model writes words from a distribution over the *extended vocabulary*: the V words
of the vocabulary, then the example's own out-of-vocabulary source words, ids V, V+1, ...
(:mod:`dca_course.data.vocab`).  This module holds the pieces every such model needs:

* :func:`extended_to_vocab`: extended ids -> ids an embedding of V rows can read (ids >= V
  become UNK).  The one place that mapping is written; the data pipeline, the decoders, the
  losses and the models all call it;
* :func:`oov_slots`: which OOV columns exist for which example (the width of the extended
  vocabulary, kept in a decoding state);
* the final distribution of See et al.'s eq. (9) (which DCA's eq. 14 repeats per agent, and
  whose last step, :func:`gen_plus_copy`, CopyNet's eqs. 4-5 share),

      P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i,

  as written (:func:`final_distribution`) and as the floored log-probability a training step
  needs, with a hand-written backward pass (:func:`log_gen_copy`, :func:`log_final_distribution`);
* :func:`safe_log`, the floored log of all of them;
* :func:`coverage_terms`, See et al.'s eq. (12) at every step, which the model reports and
  :func:`dca_course.losses.coverage_loss` averages.
"""
from __future__ import annotations

import torch

from .attention import using_reference_code


def extended_to_vocab(ids: torch.Tensor, vocab_size: int, unk_id: int = 1) -> torch.Tensor:
    """Extended ids -> ids in the fixed vocabulary: every id >= ``vocab_size`` becomes ``unk_id``,
    every other id stays.  An embedding table has V rows, so a copied OOV word is read back as UNK
    (a copying model that must know *which* OOV word it wrote, CopyNet's selective read, keeps
    the extended ids beside this)."""
    return torch.where(ids >= vocab_size, torch.full_like(ids, unk_id), ids)


def oov_slots(batch) -> torch.Tensor:
    """(batch, n_oov) bool: True where example b has an i-th OOV word.

    Kept in the decoding state: its width tells ``step`` how wide the extended vocabulary is
    (V + n_oov) without a host sync, and it is batch-first, so beam search reorders it like
    everything else.
    """
    n_oov = batch.n_oov
    counts = torch.tensor([len(o) for o in batch.oovs], device=batch.src.device)
    return torch.arange(n_oov, device=batch.src.device)[None, :] < counts[:, None]


def safe_log(p: torch.Tensor) -> torch.Tensor:
    """log p with p floored at the smallest normal float: a word no mode can produce (a
    column of the extended vocabulary this example does not use) gets a very negative but
    finite log-probability, so no NaN comes from 0 * -inf in a later entropy or RL term."""
    return torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))


def source_index(src_ext: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """The extended id of every source position, shaped like ``like`` (batch, ..., src_len) for a
    ``scatter_add`` into the extended vocabulary: src_ext (batch, src_len) with the dimensions
    after the batch's that it lacks (the steps, which all share one source) inserted and expanded."""
    missing = like.dim() - src_ext.dim()
    return src_ext.view(src_ext.shape[:1] + (1,) * missing + src_ext.shape[1:]).expand_as(like)


def final_distribution(p_vocab: torch.Tensor, attn: torch.Tensor, p_gen: torch.Tensor,
                       src_ext: torch.Tensor, n_oov: int) -> torch.Tensor:
    """See et al.'s eq. (9): P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i.

    p_vocab (batch, V), attn (batch, src_len) (zero at padding), p_gen (batch, 1),
    src_ext (batch, src_len) extended ids of the source.  Returns (batch, V + n_oov).
    The same for all steps at once, or for agents (DCA's eq. 14): p_vocab (batch, ..., V), attn
    (batch, ..., src_len), p_gen (batch, ..., 1); src_ext may lack the dimensions right after the
    batch's (the steps), which it has in common for every step.

    The sum over positions is one ``scatter_add``: a word found at several positions gets the
    sum of their attention, and an OOV source word, which P_vocab cannot name, gets only that.
    """
    return gen_plus_copy(p_gen * p_vocab, (1.0 - p_gen) * attn, src_ext, n_oov)


def gen_plus_copy(gen: torch.Tensor, copy: torch.Tensor, src_ext: torch.Tensor, n_oov: int) -> torch.Tensor:
    """P(w) = gen(w) + sum_{i: w_i = w} copy_i over the extended vocabulary: gen (batch, ..., V)
    fills the vocabulary's columns (the OOV columns start at zero), and the copy mass of every
    source position, copy (batch, ..., src_len), is added to the column of its word (one
    ``scatter_add`` over the extended ids src_ext, as for :func:`source_index`).  Returns
    (batch, ..., V + n_oov).  The last step of See et al.'s eq. (9) and of CopyNet's eqs. (4)-(5)."""
    out = torch.cat([gen, gen.new_zeros(gen.shape[:-1] + (n_oov,))], dim=-1)  # (batch, ..., V + n_oov)
    return out.scatter_add(-1, source_index(src_ext, copy), copy)


class _LogFinalDistribution(torch.autograd.Function):
    """log P for P(w) = gen softmax(logits)(w) + sum_{i: w_i = w} copy_i (eq. 9 with gen = p_gen and
    copy_i = (1 - p_gen) a_i; DCA's eqs. 14-15 with the sum over agents taken first), with its
    backward pass written out; and, given the reference words y*, also log P(y*), the terms of
    the training loss (See et al.'s eq. 6).

    The extended-vocabulary distribution is the largest tensor of a training step (batch x T x
    (V + OOVs)); autograd would write it, or a gradient of its size, some fifteen times
    (softmax, the product with p_gen, the zero columns, the scatter, the clamp, the log, and
    each one's backward).  Here: P = gen softmax(l) + copy, log P = log max(P, tiny), and

        g_P    = g / P  (0 where P <= tiny, as the clamp's gradient is)
        g_l    = gen (t - softmax(l) sum t),   t = g_P[:V] softmax(l)     (softmax)
        g_gen  = sum t,                        g_copy_i = g_P[w_i]

    When only log P(y*) is used (the training loss), g is zero but in the column of y*, so g_P
    and t are too, and the backward pass computes those few numbers instead of reading and
    writing (batch, T, V + OOVs) tensors of zeros (:meth:`_target_only_backward`): the same
    arithmetic on the same numbers, so the same gradients, bit for bit.  With ``full=False`` the
    forward pass too computes P at the targets alone (:func:`target_probability`), and log P is
    not returned.

    :func:`log_final_distribution_reference` is the definition it is tested against.
    """

    @staticmethod
    def forward(ctx, logits, gen, copy, index, n_oov: int, target, full: bool):
        V = logits.size(-1)
        tiny = torch.finfo(logits.dtype).tiny
        p_vocab = torch.softmax(logits, dim=-1)                                  # eq. (4)
        ctx.set_materialize_grads(False)
        ctx.full = full
        if not full:                       # log P(y*) alone: P at the targets' columns only
            P_y = target_probability(p_vocab, gen, copy, index, target)
            ctx.save_for_backward(p_vocab, P_y, gen, index, target)
            return None, torch.clamp_min(P_y, tiny).log_()
        P = logits.new_empty(logits.shape[:-1] + (V + n_oov,))
        torch.mul(p_vocab, gen, out=P[..., :V])
        P[..., V:].zero_()
        P.scatter_add_(-1, index, copy)                                          # eq. (9)
        log_p = torch.clamp_min(P, tiny).log_()
        picked = log_p.gather(-1, target) if target is not None else log_p.new_empty(0)
        ctx.save_for_backward(p_vocab, P, gen, index, target)
        return log_p, picked

    @staticmethod
    def backward(ctx, g, g_picked):
        p_vocab, P, gen, index, target = ctx.saved_tensors
        if g is None and g_picked is None:
            return None, None, None, None, None, None, None
        if g is None:
            P_y = P.gather(-1, target) if ctx.full else P                        # saved as P(y*) alone
            return _LogFinalDistribution._target_only_backward(p_vocab, P_y, gen, index, target, g_picked)
        if g_picked is not None:                              # both used: the picked terms join g
            g = g.scatter_add(-1, target, g_picked)
        V = p_vocab.size(-1)
        g_P = torch.where(P > torch.finfo(P.dtype).tiny, g / P, torch.zeros((), dtype=g.dtype, device=g.device))
        g_copy = g_P.gather(-1, index)                                           # g_P[w_i]
        t = g_P[..., :V] * p_vocab
        sum_t = t.sum(-1, keepdim=True)
        g_logits = t.addcmul_(p_vocab, sum_t, value=-1.0).mul_(gen)
        return g_logits, sum_t, g_copy, None, None, None, None

    @staticmethod
    def _target_only_backward(p_vocab, P_y, gen, index, target, g_picked):
        """The backward pass above for g = 0 but g[y*] = g_picked: g_P, t and g_copy are zero but
        in the column of y*, sum t = t[y*], and g_l = gen (t - softmax(l) t[y*]).  Each number is
        computed as above (0 / P = +0, x + 0 = x), so the gradients are the same bits."""
        V = p_vocab.size(-1)
        zero = torch.zeros((), dtype=P_y.dtype, device=P_y.device)
        g_y = g_picked + 0.0                           # as the gather's backward writes it (-0 -> +0)
        gP_y = torch.where(P_y > torch.finfo(P_y.dtype).tiny, g_y / P_y, zero)   # g_P[y*]
        g_copy = torch.where(index == target, gP_y, zero)                       # g_P[w_i]
        in_vocab = target < V                                                   # an OOV y* has no t
        column = torch.where(in_vocab, target, torch.zeros_like(target))
        t_y = torch.where(in_vocab, gP_y * p_vocab.gather(-1, column), zero)   # t[y*]
        t = torch.zeros_like(p_vocab).scatter_(-1, column, t_y)
        sum_t = t_y + 0.0                                                       # sum t: t[y*] + zeros
        g_logits = t.addcmul_(p_vocab, sum_t, value=-1.0).mul_(gen)
        return g_logits, sum_t, g_copy, None, None, None, None


def target_probability(p_vocab: torch.Tensor, gen: torch.Tensor, copy: torch.Tensor, index: torch.Tensor,
                       target: torch.Tensor) -> torch.Tensor:
    """P(y*) of eq. (9) for target columns ``target`` (batch, ..., 1), computed as the full P is
    (:class:`_LogFinalDistribution`), so to the same bits: gen P_vocab(y*) (0 for an OOV word),
    then the copy mass of every source position holding y*, added in position order as
    ``scatter_add_`` adds it (here into a column of its own, the other positions into another)."""
    V = p_vocab.size(-1)
    in_vocab = target < V
    column = torch.where(in_vocab, target, torch.zeros_like(target))
    zero = torch.zeros((), dtype=gen.dtype, device=gen.device)
    gen_y = torch.where(in_vocab, p_vocab.gather(-1, column) * gen, zero)     # P(y*) before the copies
    sums = torch.cat([gen_y, torch.zeros_like(gen_y)], dim=-1)                  # (batch, ..., 2): y*, the rest
    return sums.scatter_add_(-1, (index != target).long(), copy)[..., :1]


def log_gen_copy(logits: torch.Tensor, gen: torch.Tensor, copy: torch.Tensor, index: torch.Tensor,
                 n_oov: int, target: torch.Tensor | None = None, full: bool = True):
    """log P for P(w) = gen softmax(logits)(w) + sum_{i: index_i = w} copy_i over the extended
    vocabulary, floored as :func:`safe_log` does: logits (batch, ..., V), gen (batch, ..., 1), copy
    and index (batch, ..., positions).  The one hand-written distribution of the pointer-generator
    (:func:`log_final_distribution`) and of DCA (:func:`~dca_course.models.dca.log_mixed_distribution`).

    With ``target`` (batch, ...) extended ids (below V + n_oov), returns ``(log P, log P(target))``,
    the second (batch, ...): a loss that reads only it gets its gradient at a fraction of the cost
    (see :class:`_LogFinalDistribution`); ``full=False`` skips log P itself (returned as None)."""
    if target is None and not full:
        raise ValueError("full=False leaves nothing to compute without a target")
    index_t = None if target is None else target.unsqueeze(-1)
    log_p, picked = _LogFinalDistribution.apply(logits, gen, copy, index, n_oov, index_t, full)
    return log_p if target is None else (log_p, picked.squeeze(-1))


def log_final_distribution(logits: torch.Tensor, p_gen: torch.Tensor, attn: torch.Tensor,
                           src_ext: torch.Tensor, n_oov: int, target: torch.Tensor | None = None,
                           full: bool = True):
    """log P(w) of eq. (9), P = p_gen softmax(logits) + (1 - p_gen) sum_{i: w_i = w} a_i, floored
    as :func:`safe_log` does.  logits (batch, ..., V), p_gen (batch, ..., 1), attn (batch, ...,
    src_len), src_ext as for :func:`final_distribution`.  The same numbers as
    :func:`log_final_distribution_reference`, computed with far fewer passes over the
    extended vocabulary (:class:`_LogFinalDistribution`).  With ``target`` (batch, ...) (extended
    ids of the reference words), returns ``(log P, log P(target))`` as :func:`log_gen_copy` does
    (``full=False``: ``(None, log P(target))``)."""
    if using_reference_code():
        log_p = log_final_distribution_reference(logits, p_gen, attn, src_ext, n_oov)
        return log_p if target is None else (log_p, log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1))
    return log_gen_copy(logits, p_gen, (1.0 - p_gen) * attn, source_index(src_ext, attn), n_oov, target, full)


def log_final_distribution_reference(logits, p_gen, attn, src_ext, n_oov):
    """The definition: See et al.'s eqs. (4) and (9) as written, then :func:`safe_log`."""
    return safe_log(final_distribution(torch.softmax(logits, dim=-1), attn, p_gen, src_ext, n_oov))


def coverage_terms(attn: torch.Tensor, coverage: torch.Tensor) -> torch.Tensor:
    """See et al.'s eq. (12): covloss_t = sum_i min(a^t_i, c^t_i), one number per step.

    attn (..., src_len) the attention a^t, coverage (..., src_len) c^t = sum_{t' < t} a^{t'}
    (eq. 10).  Returns (...): for one step (batch,), for all steps (batch, T).  The model reports
    these terms; :func:`dca_course.losses.coverage_loss` averages them over the real tokens."""
    return torch.minimum(attn, coverage).sum(dim=-1)
