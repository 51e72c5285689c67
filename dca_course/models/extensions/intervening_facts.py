"""How many facts the gate would pick lie between a fact and where the previous pass read: the
course's addition, in neither DMN paper.

Hook: **a second look** of the gate (:class:`~dca_course.models.extensions.hooks.DMNExtension`).
Pass i scores the facts twice with the same gate G.  The first look gives this feature as zeros:
every fact is scored as if nothing relevant lay between it and ``p^{i-1}``, the place the previous
pass read (:func:`~dca_course.models.extensions.time_features.read_position`; ``p^0``: after the last
fact).  Its gates g^{i,1}, each divided by the largest, say how close each fact comes to the gate's
top pick on its content (a ratio, because DMN+'s softmax scores have no level of their own: only
their differences are trained).  The second look appends, for every fact, the sum of those ratios
over the facts strictly between it and ``p^{i-1}``::

    r_t = g^{i,1}_t / max_u g^{i,1}_u      (the first look's gates; no gradient through them)
    b^i_t = sum_u r_u [t < u < p^{i-1}] + sum_u r_u [p^{i-1} < u < t]
    z^i_t = [z(c_t, m^{i-1}, q); ...; b^i_t]  ->  s^i_t, the pass's gates and their supervision

"The last move of John before the one the previous pass found" (bAbI task 3), "the latest place of
the football" (task 2, from ``p^0``), "the last person mentioned before 'he'" (task 13) all ask for
the relevant fact with no relevant fact between it and a point: b = 0.  The time features say how
far a fact lies from that point in facts; they cannot say whether another fact of the same kind
lies closer, which is where the DMN+'s third pass in task 3 goes wrong (``results/babi_real_1k_notes.md``).
"""
from __future__ import annotations

import torch

from .hooks import DMNExtension
from .time_features import fact_indices, previous_place


def intervening_mass(r: torch.Tensor, t: torch.Tensor, where: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """b_t = sum_u r_u [u strictly between t and ``where``]: (batch, facts, 1), zero at padded facts.

    r (batch, facts) the first look's relevance, t (batch, facts) the facts' indices, where
    (batch, 1) the previous pass's place p^{i-1}, mask (batch, facts).
    """
    r = r * mask.to(r.dtype)
    u, tt, p = t.unsqueeze(1), t.unsqueeze(2), where.unsqueeze(2)        # (b, 1, F), (b, F, 1), (b, 1, 1)
    between = ((tt < u) & (u < p)) | ((p < u) & (u < tt))               # (batch, facts t, facts u)
    b = (between.to(r.dtype) * r.unsqueeze(1)).sum(-1)
    return (b * mask.to(r.dtype)).unsqueeze(-1)


class InterveningFacts(DMNExtension):
    """:func:`intervening_mass` of the gate's first look, appended to z for its second look."""

    name = "intervening_facts"
    gate_width = 1

    def begin(self, model, batch, c):
        return fact_indices(c), batch.fact_mask

    def gate_features(self, reading, prev_gates):
        t, _ = reading
        return t.new_zeros(*t.shape, 1)              # the first look: nothing between

    def second_look(self, reading, prev_gates, first_gates):
        t, mask = reading
        g = first_gates.detach()
        r = g / g.max(1, keepdim=True).values.clamp_min(1e-12)
        return intervening_mass(r, t, previous_place(prev_gates, t, mask), mask)
