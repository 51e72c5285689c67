"""Losses: negative log-likelihood over the (extended) vocabulary, and later coverage, cohesion and RL.

Every model returns log-probabilities over its output vocabulary: ``V`` columns for a model
that can only generate, ``V + n_oov`` for one that can copy (the extended vocabulary).
"""
from __future__ import annotations

import torch


def sequence_nll(log_probs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor,
                 unk_id: int = 1) -> torch.Tensor:
    """Mean over real target tokens of -log P(y*_t)  (See et al. 2017, eqs. 6-7).

    log_probs (batch, steps, width), targets (batch, steps) in extended ids, mask (batch, steps).
    A target id the model has no column for (an OOV word, for a model that cannot copy)
    counts as UNK: that is the best such a model can say.
    """
    width = log_probs.size(-1)
    targets = torch.where(targets >= width, torch.full_like(targets, unk_id), targets)
    nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)   # (batch, steps)
    mask = mask.to(nll.dtype)
    return (nll * mask).sum() / mask.sum().clamp_min(1.0)
