"""Solutions to notebook 01's exercises (try them first: each check names the likely mistake)."""
import math

import torch
from torch import nn

from dca_course.exercises import check_gru_cell, check_perplexity


class PaperGRUCell(nn.Module):
    """01.2: eqs. (5)-(8) of Cho et al. (2014), the reset gate applied to h before the product with U."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        H = hidden_size
        self.weight_ih = nn.Parameter(torch.empty(3 * H, input_size))   # [W_r; W_z; W]
        self.weight_hh = nn.Parameter(torch.empty(3 * H, H))            # [U_r; U_z; U]
        self.bias_ih = nn.Parameter(torch.empty(3 * H))
        self.bias_hh = nn.Parameter(torch.empty(3 * H))
        for p in self.parameters():
            nn.init.uniform_(p, -1 / math.sqrt(H), 1 / math.sqrt(H))

    def forward(self, x, h):
        i_r, i_z, i_n = (x @ self.weight_ih.T + self.bias_ih).chunk(3, dim=1)
        U_r, U_z, U_n = self.weight_hh.chunk(3, dim=0)
        b_r, b_z, b_n = self.bias_hh.chunk(3, dim=0)
        r = torch.sigmoid(i_r + h @ U_r.T + b_r)                 # (5)
        z = torch.sigmoid(i_z + h @ U_z.T + b_z)                 # (6)
        n = torch.tanh(i_n + (r * h) @ U_n.T + b_n)              # (8): reset, then multiply by U
        return z * h + (1 - z) * n                               # (7)


def perplexity(log_probs, targets, mask):
    """01.1: e to the mean negative log-likelihood of the scored tokens."""
    nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)   # (batch, len)
    mask = mask.to(nll.dtype)
    return math.exp(((nll * mask).sum() / mask.sum()).item())


def _check_paper_cell(cell_cls):
    return check_gru_cell(cell_cls, reset_after=False)


_check_paper_cell.__name__ = "check_gru_cell"

SOLUTIONS = {
    "01.1": (perplexity, check_perplexity),
    "01.2": (PaperGRUCell, _check_paper_cell),
}
