"""The facts' place in time, for the DMN's gate: the course's addition, in neither DMN paper.

Hook: **extra gate features** (:class:`~dca_course.models.extensions.hooks.DMNExtension`).  Three
numbers per fact appended to z(c, m, q): how recent the fact is, and how far before or after
``p^{i-1} = sum_t g^{i-1}_t t``, where the previous pass read (``p^0``: after the last fact)::

    z^i_t = [z(c_t, m^{i-1}, q);  (N - 1 - t,  max(p^{i-1} - t, 0),  max(t - p^{i-1}, 0)) / TIME_SCALE]

The content features z cannot say which of three "john went to ..." facts is the latest, or the
last one before the fact the previous pass found; bAbI tasks 2 and 3 ask exactly that.
"""
from __future__ import annotations

import torch

from .hooks import DMNExtension

TIME_FEATURES = ("recency", "before", "after")
TIME_SCALE = 10.0     # facts: a distance of 10 facts is 1.0


def time_features(t: torch.Tensor, where: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The order of events, for the gate (an option of this course, not in either paper).

    t (batch, facts): each fact's index in the story; where (batch, 1): the place the previous
    pass read, ``p^{i-1} = sum_t g^{i-1}_t t`` (``p^0``: the question, one after the last fact);
    mask (batch, facts).  Returns (batch, facts, 3), distances in units of ``TIME_SCALE`` facts,
    zero at padded facts::

        [ (N - 1 - t),  max(p^{i-1} - t, 0),  max(t - p^{i-1}, 0) ] / TIME_SCALE

    (recency, how far before the previous pass's fact, how far after it).
    """
    n = mask.sum(1, keepdim=True).to(t.dtype)
    feats = torch.stack([n - 1 - t, (where - t).clamp_min(0), (t - where).clamp_min(0)], dim=-1)
    return feats * mask.unsqueeze(-1).to(t.dtype) / TIME_SCALE


def read_position(g: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``p^i = sum_t g^i_t t``: where a pass read, (batch, 1), from its gates g (batch, facts) and the
    facts' indices t.  Detached: the next pass reads the place, it does not train the gates
    (their supervision does)."""
    g = g.detach()
    return (g * t).sum(1, keepdim=True) / g.sum(1, keepdim=True).clamp_min(1e-6)


def previous_place(prev_gates: torch.Tensor | None, t: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """p^{i-1}, (batch, 1): where the previous pass read (:func:`read_position`), or ``p^0``, one
    after the last fact, in the first pass (``prev_gates`` None)."""
    if prev_gates is None:
        return mask.sum(1, keepdim=True).to(t.dtype)
    return read_position(prev_gates, t)


def fact_indices(c: torch.Tensor) -> torch.Tensor:
    """Each fact's index in the story, (batch, facts), in c's dtype and device."""
    return torch.arange(c.size(1), device=c.device, dtype=c.dtype).expand(c.size(0), -1)


class TimeFeatures(DMNExtension):
    """:func:`time_features` appended to the gate's z every pass, measured from p^{i-1}."""

    name = "time_features"
    gate_width = len(TIME_FEATURES)

    def begin(self, model, batch, c):
        return fact_indices(c), batch.fact_mask

    def gate_features(self, reading, prev_gates):
        t, mask = reading
        return time_features(t, previous_place(prev_gates, t, mask), mask)
