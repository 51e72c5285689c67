"""Solutions to notebook 03's exercises (try them first: each check names the likely mistake)."""
import torch

from dca_course.exercises import check_dmn_features, check_episode


def features(c, m, q, W_b):
    """03.1: z(c, m, q) = [c, m, q, c*q, c*m, |c-q|, |c-m|, c^T W_b q, c^T W_b m], per fact."""
    m = m.unsqueeze(1).expand_as(c)                       # (batch, facts, H)
    q = q.unsqueeze(1).expand_as(c)
    cWq = ((c @ W_b) * q).sum(-1, keepdim=True)           # (batch, facts, 1)
    cWm = ((c @ W_b) * m).sum(-1, keepdim=True)
    return torch.cat([c, m, q, c * q, c * m, (c - q).abs(), (c - m).abs(), cWq, cWm], dim=-1)


def episode(cell, facts, gates):
    """03.2: h_t = g_t GRU(c_t, h_{t-1}) + (1 - g_t) h_{t-1} over the facts in order; e = the last h."""
    h = facts.new_zeros(facts.size(0), cell.hidden_size)  # h_0 = 0
    for t in range(facts.size(1)):
        g = gates[:, t].unsqueeze(-1)                     # (batch, 1)
        h = g * cell(facts[:, t], h) + (1 - g) * h
    return h                                              # e^i = h_{T_C}


SOLUTIONS = {
    "03.1": (features, check_dmn_features),
    "03.2": (episode, check_episode),
}
