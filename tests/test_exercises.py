"""The exercises' self-checks accept a right answer and reject wrong ones with a useful message."""
import functools

import torch
from torch import nn

from dca_course.exercises import check_gru_cell
from dca_course.nn import GRUCell


class SwappedUpdateCell(GRUCell):
    """A common slip: h_t = (1 - z) * h_{t-1} + z * n."""

    def forward(self, x, h):
        gi = x @ self.weight_ih.T + self.bias_ih
        gh = h @ self.weight_hh.T + self.bias_hh
        (w_r, w_z, w_n), (u_r, u_z, u_n) = gi.chunk(3, -1), gh.chunk(3, -1)
        r, z = torch.sigmoid(w_r + u_r), torch.sigmoid(w_z + u_z)
        n = torch.tanh(w_n + r * u_n)
        return (1 - z) * h + z * n


class DetachedCell(GRUCell):
    def forward(self, x, h):
        return super().forward(x, h).detach()


class UnfinishedCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.weight_ih = nn.Parameter(torch.zeros(3 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.zeros(3 * hidden_size, hidden_size))
        self.bias_ih = nn.Parameter(torch.zeros(3 * hidden_size))
        self.bias_hh = nn.Parameter(torch.zeros(3 * hidden_size))

    def forward(self, x, h):
        raise NotImplementedError


class NoWeightsCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.lin = nn.Linear(input_size + hidden_size, 3 * hidden_size)


def test_library_cell_passes(capsys):
    assert check_gru_cell(GRUCell) is True
    assert capsys.readouterr().out.startswith("PASS check_gru_cell(GRUCell, reset_after=True)")


def test_paper_form_passes_its_own_check_and_fails_the_other_with_a_hint(capsys):
    paper = functools.partial(GRUCell, reset_after=False)
    paper.__name__ = "PaperCell"
    assert check_gru_cell(paper, reset_after=False) is True
    capsys.readouterr()
    assert check_gru_cell(paper) is False
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "reset_after=False" in out and "eq. (8)" in out


def test_swapped_update_gate_fails_with_a_hint(capsys):
    assert check_gru_cell(SwappedUpdateCell) is False
    out = capsys.readouterr().out
    assert out.startswith("FAIL check_gru_cell(SwappedUpdateCell") and "swapped" in out


def test_detached_output_fails(capsys):
    assert check_gru_cell(DetachedCell) is False
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "detach" in out


def test_unfinished_and_malformed_cells_fail_without_raising(capsys):
    assert check_gru_cell(UnfinishedCell) is False
    assert "not implemented yet" in capsys.readouterr().out
    assert check_gru_cell(NoWeightsCell) is False
    assert "weight_ih" in capsys.readouterr().out
    assert check_gru_cell(lambda i, h: 1 / 0) is False
    assert "ZeroDivisionError" in capsys.readouterr().out


def test_check_leaves_the_global_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    check_gru_cell(GRUCell)
    assert torch.equal(torch.rand(3), expected)
