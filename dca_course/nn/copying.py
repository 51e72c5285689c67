"""Copying over the extended vocabulary: what the pointer-generator (See et al. 2017), CopyNet
(Gu et al. 2016) and DCA (Celikyilmaz et al. 2018) share.

A copying model writes words from a distribution over the *extended vocabulary*: the V words
of the vocabulary, then the example's own out-of-vocabulary source words, ids V, V+1, ...
(:mod:`dca_course.data.vocab`, which also maps them back: :func:`~dca_course.data.vocab.extended_to_vocab`).
This module holds the pieces every such model needs:

* :func:`oov_slots`: which OOV columns exist for which example (the width of the extended
  vocabulary, kept in a decoding state);
* the final distribution of See et al.'s eq. (9) (which DCA's eq. 14 repeats per agent, and
  whose last step, :func:`gen_plus_copy`, CopyNet's eqs. 4-5 share),

      P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i,

  as written (:func:`final_distribution`; its floored log-probability with a hand-written backward
  pass, the same numbers faster, is :func:`dca_course.fast.copying.log_final_distribution`);
* :func:`safe_log`, the floored log of all of them.

Coverage's loss (See et al.'s eqs. 12-13) is a loss, and lives with the others in :mod:`dca_course.losses`.
"""
from __future__ import annotations

import torch


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
