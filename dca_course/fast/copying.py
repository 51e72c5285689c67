"""The extended-vocabulary distribution of :mod:`dca_course.nn.copying`, computed faster: log P of
See et al.'s eq. (9) (and of DCA's eqs. 14-15) with its backward pass written out, and log P(y*) of
the reference words alone for a training loss.  The same numbers as the equations as written
(``safe_log(final_distribution(...))``), bit for bit where ``tests/test_fast_paths.py`` says so.
"""
from __future__ import annotations

import torch

from ..nn.copying import source_index


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

    :func:`dca_course.nn.copying.final_distribution` and :func:`~dca_course.nn.copying.safe_log` are the
    definition it is tested against.
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
    (:func:`log_final_distribution`) and of DCA (:func:`log_mixed_distribution`).

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
    src_len), src_ext as for :func:`~dca_course.nn.copying.final_distribution`.  The same numbers as
    ``safe_log(final_distribution(softmax(logits), attn, p_gen, src_ext, n_oov))``, computed with far
    fewer passes over the extended vocabulary (:class:`_LogFinalDistribution`).  With ``target``
    (batch, ...) (extended ids of the reference words), returns ``(log P, log P(target))`` as :func:`log_gen_copy` does
    (``full=False``: ``(None, log P(target))``)."""
    return log_gen_copy(logits, p_gen, (1.0 - p_gen) * attn, source_index(src_ext, attn), n_oov, target, full)


def log_mixed_distribution(logits: torch.Tensor, gen: torch.Tensor, copy: torch.Tensor, src_ext: torch.Tensor,
                           n_oov: int, target: torch.Tensor | None = None, full: bool = True):
    """log P of DCA's eqs. (14)-(15) with the sum over agents taken first, floored as ``safe_log`` does:

        P(w) = sum_a g_a P^a(w) = (sum_a g_a p_a) P_voc(w) + sum_{(a, i): w_{a,i} = w} g_a (1 - p_a) l_{a,i}

    logits (batch, ..., V) (P_voc = softmax(logits)), gen = sum_a g_a p_a (batch, ..., 1), copy =
    g_a (1 - p_a) l_{a,i} (batch, ..., agents, len), src_ext (batch, agents, len).  The same numbers as
    :func:`~dca_course.models.dca.mix_agents` over :func:`~dca_course.nn.copying.final_distribution`,
    without the agents x extended-vocabulary tensor: one distribution, as a pointer-generator over all
    the agents' words.  ``target``, ``full``: also (or only) log P of the reference words, as
    :func:`log_gen_copy` gives it."""
    flat = copy.flatten(-2)                                                       # (batch, ..., agents * len)
    return log_gen_copy(logits, gen, flat, source_index(src_ext.flatten(1), flat), n_oov, target, full)
