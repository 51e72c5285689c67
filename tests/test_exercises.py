"""The exercises' self-checks accept a right answer and reject wrong ones with a useful message."""
import functools

import torch
from torch import nn

from dca_course.exercises import check_gru_cell
from dca_course.nn import GRUCell


class HandCell(nn.Module):
    """A learner's GRU cell written from eqs. (5)-(8), either form of eq. (8)."""

    reset_after = True

    def __init__(self, input_size, hidden_size):
        super().__init__()
        H = hidden_size
        self.weight_ih = nn.Parameter(torch.randn(3 * H, input_size))
        self.weight_hh = nn.Parameter(torch.randn(3 * H, H))
        self.bias_ih = nn.Parameter(torch.randn(3 * H))
        self.bias_hh = nn.Parameter(torch.randn(3 * H))

    def forward(self, x, h):
        w_r, w_z, w_n = (x @ self.weight_ih.T + self.bias_ih).chunk(3, -1)
        U_r, U_z, U_n = self.weight_hh.chunk(3, 0)
        b_r, b_z, b_n = self.bias_hh.chunk(3, 0)
        r = torch.sigmoid(w_r + h @ U_r.T + b_r)
        z = torch.sigmoid(w_z + h @ U_z.T + b_z)
        n = torch.tanh(w_n + r * (h @ U_n.T + b_n)) if self.reset_after else torch.tanh(w_n + (r * h) @ U_n.T + b_n)
        return z * h + (1 - z) * n


class PaperCell(HandCell):
    reset_after = False


class SwappedUpdateCell(GRUCell):
    """A common slip: h_t = (1 - z) * h_{t-1} + z * n."""

    def forward(self, x, h):
        gi = x @ self.weight_ih.T + self.bias_ih
        gh = h @ self.weight_hh.T + self.bias_hh
        (w_r, w_z, w_n), (u_r, u_z, u_n) = gi.chunk(3, -1), gh.chunk(3, -1)
        r, z = torch.sigmoid(w_r + u_r), torch.sigmoid(w_z + u_z)
        n = torch.tanh(w_n + r * u_n)
        return (1 - z) * h + z * n


class DetachedCell(HandCell):
    def forward(self, x, h):
        return super().forward(x, h).detach()


class CallsTorchCell(HandCell):
    """Holds the weights itself but hands the step to PyTorch's fused GRU cell."""

    def forward(self, x, h):
        return torch._VF.gru_cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


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


def test_a_hand_written_cell_passes(capsys):
    assert check_gru_cell(HandCell) is True
    assert capsys.readouterr().out.startswith("PASS check_gru_cell(HandCell, reset_after=True)")


def test_the_library_cells_and_torch_fail_as_the_answer(capsys):
    paper = functools.partial(GRUCell, reset_after=False)
    paper.__name__ = "paper"
    for cell, form in ((GRUCell, True), (paper, False), (nn.GRUCell, True), (CallsTorchCell, True)):
        assert check_gru_cell(cell, reset_after=form) is False
        out = capsys.readouterr().out
        assert out.startswith("FAIL") and "the library's answer: write it yourself" in out, out


def test_paper_form_passes_its_own_check_and_fails_the_other_with_a_hint(capsys):
    assert check_gru_cell(PaperCell, reset_after=False) is True
    capsys.readouterr()
    assert check_gru_cell(PaperCell) is False
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
