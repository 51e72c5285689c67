"""An encoder-decoder with additive attention (Bahdanau et al. 2015, "Neural Machine Translation
by Jointly Learning to Align and Translate").

Encoder (section 3.2): a bidirectional GRU; the annotation of word j is h_j = [->h_j; <-h_j].
Decoder (section 3.1), at output step i, given the previous state s_{i-1} and word y_{i-1}:

    e_ij = v^T tanh(W s_{i-1} + U h_j)                  alignment model (A.1.2)
    a_ij = softmax_j(e_ij)                              (6)
    c_i  = sum_j a_ij h_j                               (5)
    s_i  = GRU([E y_{i-1}; c_i], s_{i-1})               (4), the state update
    p(y_i | y_<i, x) = softmax(W_o tanh(L_s s_i + L_y E y_{i-1} + L_c c_i))   (4), deep output

with s_0 = tanh(W_init <-h_1) (A.2.2).  (The paper's output layer has a maxout unit; a tanh
layer does the same job here.)
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..nn.attention import AdditiveAttention
from .teacher_forcing import teacher_forcing


class BiGRUEncoder(nn.Module):
    """Embeddings + a bidirectional GRU over the padded source; returns annotations and <-h_1."""

    def __init__(self, embedding: nn.Embedding, hidden_size: int):
        super().__init__()
        self.embedding = embedding
        self.rnn = nn.GRU(embedding.embedding_dim, hidden_size, batch_first=True, bidirectional=True)

    def forward(self, src: torch.Tensor, mask: torch.Tensor):
        lengths = mask.sum(dim=1).clamp_min(1).cpu()
        emb = self.embedding(src)                                          # (batch, src_len, emb)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        out, h_n = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        return out, h_n[1]                     # (batch, src_len, 2H), (batch, H): <-h_1


class Seq2Seq(nn.Module):
    """Bahdanau attention encoder-decoder (see the module docstring for the equations)."""

    extended_vocab = False

    def __init__(self, vocab_size: int, emb_size: int = 128, hidden_size: int = 256, pad_id: int = 0):
        super().__init__()
        self.vocab_size = vocab_size
        self.config = dict(vocab_size=vocab_size, emb_size=emb_size, hidden_size=hidden_size, pad_id=pad_id)
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_id)
        self.encoder = BiGRUEncoder(self.embedding, hidden_size)
        self.init_state = nn.Linear(hidden_size, hidden_size)                   # W_init
        self.attention = AdditiveAttention(hidden_size, 2 * hidden_size, hidden_size)   # attention size n' = n
        self.cell = nn.GRUCell(emb_size + 2 * hidden_size, hidden_size)         # eq. (4)
        self.deep_out = nn.Linear(hidden_size + emb_size + 2 * hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, vocab_size)                            # W_o

    def encode(self, batch) -> dict:
        keys, back_first = self.encoder(batch.src, batch.src_mask)
        return {"keys": keys,                                      # (batch, src_len, 2H): h_j
                "proj_keys": self.attention.project_keys(keys),    # U h_j, once per sentence
                "mask": batch.src_mask,
                "s": torch.tanh(self.init_state(back_first))}      # s_0

    def step(self, y_prev: torch.Tensor, state: dict):
        emb = self.embedding(y_prev)                                               # (batch, emb)
        context, attn = self.attention(state["s"], state["keys"], state["mask"],
                                       projected_keys=state["proj_keys"])          # c_i, a_i
        s = self.cell(torch.cat([emb, context], dim=-1), state["s"])               # s_i
        hidden = torch.tanh(self.deep_out(torch.cat([s, emb, context], dim=-1)))
        log_probs = torch.log_softmax(self.out(hidden), dim=-1)                   # (batch, V)
        return log_probs, {**state, "s": s}, {"attn": attn}

    def forward(self, batch) -> dict:
        """Teacher forcing: feed the reference y_{i-1} at every step, as the batch's decoder inputs
        give it (the embedding reads fixed-vocabulary ids: an OOV word is UNK).  Returns log_probs
        (batch, T, V) and attn (batch, T, src_len)."""
        return teacher_forcing(self, batch, batch.tgt_in)
