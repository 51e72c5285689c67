"""The gated recurrent unit, written out (Cho et al. 2014, "Learning Phrase Representations
using RNN Encoder-Decoder for Statistical Machine Translation", section 2.3).

For input ``x_t`` and previous state ``h_{t-1}`` the paper's unit computes

    r_t = sigma(W_r x_t + U_r h_{t-1})                       (5)  reset gate
    z_t = sigma(W_z x_t + U_z h_{t-1})                       (6)  update gate
    h~_t = tanh(W x_t + U (r_t * h_{t-1}))                   (8)  candidate state
    h_t = z_t * h_{t-1} + (1 - z_t) * h~_t                   (7)  new state

cuDNN, and so ``torch.nn.GRU``, applies the reset gate *after* the matrix product:
``h~_t = tanh(W x_t + b + r_t * (U h_{t-1} + b_u))``.  The two are different functions.
:class:`GRUCell` follows PyTorch by default (``reset_after=True``) so that it can be checked
against ``torch.nn.GRU`` to the last bits; ``reset_after=False`` gives the paper's eq. (8).
The weights use PyTorch's layout: rows ``[r; z; n]`` of ``weight_ih`` (3H, I) and
``weight_hh`` (3H, H), so a ``torch.nn.GRU``'s weights load as they are.
"""
from __future__ import annotations

import math

import torch
from torch import nn


class GRUCell(nn.Module):
    """One GRU step, eqs. (5)-(8) of Cho et al. 2014."""

    def __init__(self, input_size: int, hidden_size: int, *, reset_after: bool = True):
        super().__init__()
        self.input_size, self.hidden_size, self.reset_after = input_size, hidden_size, reset_after
        self.weight_ih = nn.Parameter(torch.empty(3 * hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(3 * hidden_size, hidden_size))
        self.bias_ih = nn.Parameter(torch.empty(3 * hidden_size))
        self.bias_hh = nn.Parameter(torch.empty(3 * hidden_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # The same uniform(-1/sqrt(H), 1/sqrt(H)) as torch.nn.GRU.
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x: torch.Tensor, h: torch.Tensor, *, return_gates: bool = False):
        """x: (batch, input_size), h: (batch, hidden) -> new h (and the gates r, z if asked)."""
        gi = x @ self.weight_ih.T + self.bias_ih            # (batch, 3H): W x + b for r, z, n
        w_r, w_z, w_n = gi.chunk(3, dim=-1)
        if self.reset_after:
            gh = h @ self.weight_hh.T + self.bias_hh        # (batch, 3H): U h + b_u
            u_r, u_z, u_n = gh.chunk(3, dim=-1)
            r = torch.sigmoid(w_r + u_r)                    # (5)
            z = torch.sigmoid(w_z + u_z)                    # (6)
            n = torch.tanh(w_n + r * u_n)                   # cuDNN's form of (8)
        else:
            U_r, U_z, U_n = self.weight_hh.chunk(3, dim=0)
            b_r, b_z, b_n = self.bias_hh.chunk(3, dim=0)
            r = torch.sigmoid(w_r + h @ U_r.T + b_r)        # (5)
            z = torch.sigmoid(w_z + h @ U_z.T + b_z)        # (6)
            n = torch.tanh(w_n + (r * h) @ U_n.T + b_n)     # (8), as in the paper
        h_new = z * h + (1 - z) * n                         # (7)
        if return_gates:
            return h_new, {"r": r, "z": z}
        return h_new


class GRU(nn.Module):
    """A one-layer GRU run step by step over time, with the interface of ``torch.nn.GRU``.

    ``forward(x, h0)`` takes x of shape (batch, time, input) when ``batch_first`` (the
    default) and returns ``(outputs, h_n)`` with outputs (batch, time, hidden) and h_n
    (1, batch, hidden), exactly as ``torch.nn.GRU`` does.  Two additions for teaching:

    * ``mask`` (batch, time): at padded steps the state is carried over unchanged, so h_n is
      each sequence's state at its last real token;
    * ``return_gates=True`` also returns the reset and update gates, (batch, time, hidden).
    """

    def __init__(self, input_size: int, hidden_size: int, *, batch_first: bool = True,
                 reset_after: bool = True):
        super().__init__()
        self.batch_first = batch_first
        self.hidden_size = hidden_size
        self.cell = GRUCell(input_size, hidden_size, reset_after=reset_after)

    @classmethod
    def from_torch(cls, gru: nn.GRU) -> "GRU":
        """A from-scratch GRU holding a copy of a one-layer, one-direction ``nn.GRU``'s weights."""
        if gru.num_layers != 1 or gru.bidirectional or not gru.bias:
            raise ValueError("from_torch copies a one-layer, unidirectional nn.GRU with biases")
        ours = cls(gru.input_size, gru.hidden_size, batch_first=gru.batch_first)
        ours = ours.to(dtype=gru.weight_ih_l0.dtype, device=gru.weight_ih_l0.device)
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(ours.cell, name).copy_(getattr(gru, f"{name}_l0"))
        return ours

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None, *, mask: torch.Tensor | None = None,
                return_gates: bool = False):
        if not self.batch_first:
            x = x.transpose(0, 1)
        batch, steps, _ = x.shape
        h = x.new_zeros(batch, self.hidden_size) if h0 is None else h0.reshape(batch, self.hidden_size)
        outputs, rs, zs = [], [], []
        for t, x_t in enumerate(x.unbind(1)):      # unbind: one backward for all steps, not one per step
            h_new, gates = self.cell(x_t, h, return_gates=True)
            if mask is not None:
                keep = mask[:, t].unsqueeze(-1)
                h_new = torch.where(keep, h_new, h)     # padding: carry the state over
            h = h_new
            outputs.append(h)
            rs.append(gates["r"])
            zs.append(gates["z"])
        out = torch.stack(outputs, dim=1)               # (batch, time, hidden)
        if not self.batch_first:
            out = out.transpose(0, 1)
        if return_gates:
            return out, h.unsqueeze(0), {"r": torch.stack(rs, 1), "z": torch.stack(zs, 1)}
        return out, h.unsqueeze(0)


class AttentionGRUCell(nn.Module):
    """The attention-based GRU of DMN+ (Xiong et al. 2016, "Dynamic Memory Networks for Visual
    and Textual Question Answering", section 3.3, eqs. (10)-(13)).

    The update gate is replaced by a scalar attention weight ``g`` given from outside:

        r_i = sigma(W_r x_i + U_r h_{i-1} + b_r)                  (10)
        h~_i = tanh(W x_i + r_i * (U h_{i-1} + b_h))               (11)
        h_i = g_i * h~_i + (1 - g_i) * h_{i-1}                     (12)

    so a fact with zero attention leaves the episode untouched, and the order of the facts
    still matters (a plain weighted sum would lose it).
    """

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.W = nn.Linear(input_size, 2 * hidden_size)
        self.U = nn.Linear(hidden_size, 2 * hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """x: (batch, input), h: (batch, hidden), g: (batch, 1) or (batch,) -> (batch, hidden)."""
        w_r, w_n = self.W(x).chunk(2, dim=-1)
        u_r, u_n = self.U(h).chunk(2, dim=-1)
        r = torch.sigmoid(w_r + u_r)                    # (10)
        n = torch.tanh(w_n + r * u_n)                   # (11)
        g = g.reshape(-1, 1)
        return g * n + (1 - g) * h                      # (12)
