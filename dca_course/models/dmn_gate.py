"""The gate of the DMN's episodic memory (Kumar et al. 2016 section 2.3; Xiong et al. 2016 section
3.3): the feature vectors it scores each fact on, and its supervision by bAbI's supporting facts.
:mod:`dca_course.models.dmn` builds the model from these parts."""
from __future__ import annotations

import torch
import torch.nn.functional as F

GATE_FEATURES = ("dmn", "dmn+")


def dmn_features(c: torch.Tensor, m: torch.Tensor, q: torch.Tensor, W_b: torch.Tensor) -> torch.Tensor:
    """The feature vector z(c, m, q) of Kumar et al. section 2.3, its 9 parts in order.

    c (batch, facts, H); m, q (batch, H); W_b (H, H) -> (batch, facts, 7H + 2)::

        [c, m, q, c*q, c*m, |c-q|, |c-m|, c^T W_b q, c^T W_b m]
    """
    m_ = m.unsqueeze(1).expand_as(c)
    q_ = q.unsqueeze(1).expand_as(c)
    cWq = (c @ W_b * q_).sum(-1, keepdim=True)          # c^T W_b q: (batch, facts, 1)
    cWm = (c @ W_b * m_).sum(-1, keepdim=True)          # c^T W_b m
    return torch.cat([c, m_, q_, c * q_, c * m_, (c - q_).abs(), (c - m_).abs(), cWq, cWm], dim=-1)


def dmn_plus_features(c: torch.Tensor, m: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Xiong et al.'s shorter feature vector (DMN+, section 3.3): only comparisons, no raw vectors::

        [c*q, c*m, |c-q|, |c-m|]          c (batch, facts, H); m, q (batch, H) -> (batch, facts, 4H)
    """
    m_ = m.unsqueeze(1).expand_as(c)
    q_ = q.unsqueeze(1).expand_as(c)
    return torch.cat([c * q_, c * m_, (c - q_).abs(), (c - m_).abs()], dim=-1)


def gate_targets(supporting: torch.Tensor, passes: int, n_facts: int) -> torch.Tensor:
    """(batch, passes, facts) multi-hot targets of the gates: pass ``i`` the ``i``-th supporting
    fact, and the last pass every supporting fact left over when a question has more of them
    than there are passes (counting and lists need up to 8).  A row of zeros: not supervised.

    supporting (batch, n_sup) fact indices, -1 for none.
    """
    target = torch.zeros(supporting.size(0), passes, n_facts, device=supporting.device)
    for i in range(passes):
        cols = supporting[:, i:] if i == passes - 1 else supporting[:, i:i + 1]
        if cols.size(1):
            target[:, i].scatter_add_(1, cols.clamp_min(0), (cols >= 0).to(target.dtype))
    return target.clamp_max(1.0)


def gate_supervision_loss(scores: torch.Tensor, fact_mask: torch.Tensor, supporting: torch.Tensor,
                          variant: str = "dmn") -> torch.Tensor:
    """Cross-entropy of the gates against the supporting facts, mean over supervised passes.

    scores (batch, passes, facts): the gate logits before the sigmoid / softmax; fact_mask
    (batch, facts); supporting (batch, n_sup): the fact pass ``i`` should pick, -1 for none (the
    targets: :func:`gate_targets`).  ``"dmn"``: binary cross-entropy of each real fact's sigmoid
    gate against 1 (a supporting fact of the pass) or 0 (any other), summed over the facts;
    ``"dmn+"``: the cross-entropy of the softmax against the pass's targets, shared equally
    (``-log a_{supporting}`` for one).
    """
    target = gate_targets(supporting, scores.size(1), scores.size(2)).to(scores.dtype)
    supervised = target.sum(-1) > 0                                 # (batch, passes)
    if not supervised.any():
        return scores.sum() * 0.0
    mask = fact_mask.unsqueeze(1).expand_as(scores)                 # (batch, passes, facts)
    if variant == "dmn+":
        logp = torch.log_softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1)
        share = target / target.sum(-1, keepdim=True).clamp_min(1.0)
        nll = -(share * logp).sum(-1)
    else:
        bce = F.binary_cross_entropy_with_logits(scores, target, reduction="none")
        nll = (bce * mask.to(scores.dtype)).sum(-1)
    return nll[supervised].mean()
