"""Additive attention (Bahdanau et al. 2015), masks, and coverage (See et al. 2017).

Bahdanau et al. 2015 ("Neural Machine Translation by Jointly Learning to Align and
Translate", section 3.1 and appendix A.1.2) score each encoder state h_j against the
decoder state s with a one-hidden-layer network, normalise the scores, and average:

    e_j = v^T tanh(W s + U h_j)                          (A.1.2; See et al. eq. 1)
    a_j = exp(e_j) / sum_k exp(e_k)                      (6)
    c   = sum_j a_j h_j                                  (5)

See et al. 2017 add a coverage term to the score, the attention the model has already
paid to each position, c^t = sum_{t' < t} a^{t'} (their eqs. 10-11):

    e_j = v^T tanh(W_h h_j + W_s s_t + w_c c^t_j + b_attn)

Padding must get no attention: :func:`masked_softmax` gives masked positions exactly 0.

This module is the definition, the equations as written.  A faster form of the same numbers, with
a hand-written backward pass, lives in :mod:`dca_course.fast.attention`; a model gets it from
:func:`dca_course.fast.accelerate`, and the tests hold both to the same values and gradients.
"""
from __future__ import annotations

import torch
from torch import nn


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax over ``dim`` where ``mask`` is True; masked positions get exactly 0.

    The masked scores are replaced by the most negative finite number, whose exponential
    underflows to an exact 0, so no NaN appears even in a row that is all padding (such a
    row - an empty agent in DCA - comes out all zeros).
    """
    mask = mask.to(torch.bool)
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=dim).masked_fill(~mask, 0.0)


class AdditiveAttention(nn.Module):
    """e_j = v^T tanh(W_h h_j + W_s s + [w_c c_j] + b); a = masked softmax(e); context = sum_j a_j h_j."""

    def __init__(self, query_size: int, key_size: int, attn_size: int, *, coverage: bool = False):
        super().__init__()
        self.W_h = nn.Linear(key_size, attn_size, bias=False)
        self.W_s = nn.Linear(query_size, attn_size, bias=True)   # its bias is b_attn
        self.w_c = nn.Linear(1, attn_size, bias=False) if coverage else None
        self.v = nn.Linear(attn_size, 1, bias=False)

    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """W_h h_j for every source position: computed once per sequence, not once per step."""
        return self.W_h(keys)

    def forward(self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor, *,
                projected_keys: torch.Tensor | None = None, coverage: torch.Tensor | None = None):
        """query (batch, query_size), keys (batch, src_len, key_size), mask (batch, src_len);
        ``projected_keys`` (W_h h_j) may come precomputed, ``coverage`` (batch, src_len) is c^t.

        Returns ``(context, weights)``: (batch, key_size) and (batch, src_len).
        """
        if coverage is not None and self.w_c is None:
            raise ValueError("coverage given to an attention built without coverage=True")
        feats = self.project_keys(keys) if projected_keys is None else projected_keys   # W_h h_j
        feats = feats + self.W_s(query).unsqueeze(1)                  # (batch, src_len, attn)
        if coverage is not None:
            feats = feats + self.w_c(coverage.unsqueeze(-1))          # See et al. eq. (11)
        scores = self.v(torch.tanh(feats)).squeeze(-1)                # e_j (A.1.2; See et al. eq. 1)
        weights = masked_softmax(scores, mask)                        # eq. (6), padding -> 0
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)    # eq. (5)
        return context, weights
