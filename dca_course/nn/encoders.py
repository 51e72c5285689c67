"""The bidirectional encoder of the copying models: the pointer-generator (See et al. 2017,
a bi-LSTM), CopyNet (Gu et al. 2016, a bi-GRU) and every layer of DCA's agents (Celikyilmaz
et al. 2018, eqs. 1-4, bi-LSTMs over all agents at once).

Over a right-padded batch the two directions are two one-directional RNNs: the forward one
reads the rows as they are, the backward one reads each row reversed *within its own length*
(:func:`reverse_padded`), so in both runs the padding comes after the real words and cannot
change their states.  Reversing the backward outputs the same way puts <-h_i back at position
i.  This gives a packed bi-RNN's outputs at every real position without
``pack_padded_sequence``, whose backward pass on the CPU copies a full-size gradient at every
time step (some 15x slower for 300-word articles).
"""
from __future__ import annotations

import torch
from torch import nn


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """x (N, L, ...): each row's first ``lengths[n]`` entries in reverse order, padding in place.

    Its own inverse.  A row of length 0 is left as it is.
    """
    N, L = x.shape[:2]
    pos = torch.arange(L, device=x.device).unsqueeze(0)                       # (1, L)
    n = lengths.to(x.device).unsqueeze(1)                                     # (N, 1)
    idx = torch.where(pos < n, n - 1 - pos, pos)                              # (N, L)
    return x.gather(1, idx.view(N, L, *([1] * (x.dim() - 2))).expand_as(x))


class BiRNN(nn.Module):
    """A bidirectional LSTM (or GRU) over right-padded rows, as two one-directional RNNs
    (see the module docstring)."""

    def __init__(self, in_dim: int, hidden_size: int, cell: str = "lstm"):
        super().__init__()
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell]
        self.fwd = rnn(in_dim, hidden_size, batch_first=True)
        self.bwd = rnn(in_dim, hidden_size, batch_first=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor):
        """x (N, L, in_dim), lengths (N,).  Returns [->h_i; <-h_i] (N, L, 2H) (not zeroed at
        padding: the caller masks) and each row's last states [->h_n; <-h_1] (N, 2H)."""
        out_f, _ = self.fwd(x)                                                    # ->h_i
        out_b = reverse_padded(self.bwd(reverse_padded(x, lengths))[0], lengths)  # <-h_i
        last = (lengths - 1).clamp_min(0)                                         # n - 1 (0 if empty)
        last_f = out_f.gather(1, last.view(-1, 1, 1).expand(-1, 1, out_f.size(-1))).squeeze(1)
        return torch.cat([out_f, out_b], dim=-1), torch.cat([last_f, out_b[:, 0]], dim=-1)


class BiRNNEncoder(BiRNN):
    """Embeddings + :class:`BiRNN` over a right-padded source (the pointer-generator's and
    CopyNet's encoder).

    Returns the annotations h_i = [->h_i; <-h_i] (batch, src_len, 2H), zero at padding, and
    [->h_n; <-h_1] (batch, 2H), the last state of each direction.
    """

    def __init__(self, embedding: nn.Embedding, hidden_size: int, cell: str = "lstm", dropout: float = 0.0):
        super().__init__(embedding.embedding_dim, hidden_size, cell)
        self.embedding = embedding
        self.dropout = nn.Dropout(dropout)

    def forward(self, src: torch.Tensor, mask: torch.Tensor):
        lengths = mask.sum(dim=1)
        emb = self.dropout(self.embedding(src))                                # (batch, src_len, emb)
        out, last = super().forward(emb, lengths)                              # (batch, src_len, 2H)
        return out * mask.unsqueeze(-1), last
