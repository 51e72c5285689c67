"""CopyNet (Gu et al. 2016, "Incorporating Copying Mechanism in Sequence-to-Sequence Learning").

Encoder: a bidirectional GRU turns the source x_1..x_Ts into the memory M = {h_1, ..., h_Ts}.
Decoder: a GRU with state s_t.  At every step two *modes* score the next word y_t, and one
softmax with one normaliser Z is shared by both (section 3.2):

    psi_g(y_t = v_i) = v_i^T W_o s_t                   generate mode, v_i in V        (7)
    psi_c(y_t = x_j) = sigma(h_j^T W_c) s_t            copy mode, x_j in X, sigma=tanh (8)
    p(y_t, g | .) = (1/Z) e^{psi_g(y_t)}                                              (5)
    p(y_t, c | .) = (1/Z) sum_{j: x_j = y_t} e^{psi_c(x_j)}                           (6)
    Z = sum_{v in V} e^{psi_g(v)} + sum_{j} e^{psi_c(x_j)}          (unnumbered in the paper)
    p(y_t | s_t, y_{t-1}, c_t, M) = p(y_t, g | .) + p(y_t, c | .)                     (4)

so a word that is in the vocabulary *and* in the source gets both modes' mass, a word at
several source positions gets the sum of their copy probabilities, and an out-of-vocabulary
source word can be copied though it cannot be generated.  The result is a distribution over
the extended vocabulary (V words, then the example's OOV source words), built with one
``scatter_add`` over ``batch.src_ext``.

State update (section 3.3).  The previous word y_{t-1} is fed as [e(y_{t-1}); zeta(y_{t-1})],
its embedding and its *selective read* of the memory, the encoder states of the source
positions that hold y_{t-1}, weighted by how much the last step copied from each:

    zeta(y_{t-1}) = sum_j rho_tj h_j                                                  (9)
    rho_tj = p(x_j, c | s_{t-1}, M) / K   if x_j = y_{t-1}, else 0
    K = sum_{j': x_j' = y_{t-1}} p(x_j', c | s_{t-1}, M)

(zeta = 0 when y_{t-1} is not in the source.)  The attentive read c_t (Bahdanau attention with
the previous state s_{t-1}) is fed as well:  s_t = GRU([e(y_{t-1}); zeta(y_{t-1}); c_t], s_{t-1}).
The first state is s_0 = tanh(W_init <-h_1), as in :class:`~dca_course.models.seq2seq.Seq2Seq`.

Decoding protocol: ``step(y_prev, state)`` takes ``y_prev`` in *extended* ids (a copied OOV
word is ``V + i``): the selective read needs to know *which* OOV word was emitted, which
UNK alone cannot say.  The embedding reads ``y_prev`` with ids >= V mapped to UNK, so it never
sees an extended id.  The decoders of :mod:`dca_course.decoding` pass extended ids to every
model with ``extended_vocab = True``; teacher forcing uses ``<s>`` followed by
``batch.tgt_out`` shifted by one (the extended reference words).
"""
from __future__ import annotations

import torch
from torch import nn

from ..data.vocab import extended_to_vocab
from ..nn.attention import AdditiveAttention
from ..nn.copying import gen_plus_copy, oov_slots, safe_log
from ..nn.encoders import BiRNNEncoder
from .teacher_forcing import teacher_forcing


def copy_mix(gen_scores: torch.Tensor, copy_scores: torch.Tensor, src_ext: torch.Tensor,
             src_mask: torch.Tensor, n_oov: int):
    """Equations (4)-(6): one softmax over both modes, then each word's mass summed.

    gen_scores (batch, V) = psi_g, copy_scores (batch, src_len) = psi_c, src_ext (batch, src_len)
    extended ids, src_mask (batch, src_len).  Returns ``(probs, p_copy_pos)``: the distribution
    over the extended vocabulary (batch, V + n_oov) and the copy probability of every source
    position, p(x_j, c | .) (batch, src_len), exactly 0 at padding.
    """
    V = gen_scores.size(-1)
    filled = copy_scores.masked_fill(~src_mask, torch.finfo(copy_scores.dtype).min)
    joint = torch.softmax(torch.cat([gen_scores, filled], dim=-1), dim=-1)    # one Z, shared by eqs. (5)-(6)
    p_gen_words = joint[:, :V]                                                 # (batch, V)
    p_copy_pos = joint[:, V:].masked_fill(~src_mask, 0.0)                      # (batch, src_len)
    return gen_plus_copy(p_gen_words, p_copy_pos, src_ext, n_oov), p_copy_pos  # eqs. (4)-(6)


def selective_read(y_prev: torch.Tensor, prev_copy: torch.Tensor, src_ext: torch.Tensor,
                   src_mask: torch.Tensor, keys: torch.Tensor):
    """Equation (9): zeta(y_{t-1}) = sum_j rho_tj h_j.

    y_prev (batch,) extended ids, prev_copy (batch, src_len) the previous step's
    p(x_j, c | .), keys (batch, src_len, d) the memory.  Returns ``(zeta, rho)``:
    (batch, d) and (batch, src_len); both zero in a row whose y_prev is not in the source.
    """
    hit = (src_ext == y_prev.unsqueeze(1)) & src_mask                          # x_j = y_{t-1}
    weights = prev_copy * hit                                                  # (batch, src_len)
    K = weights.sum(dim=1, keepdim=True)
    rho = weights / K.clamp_min(torch.finfo(weights.dtype).tiny)               # 0 where K = 0
    zeta = torch.bmm(rho.unsqueeze(1), keys).squeeze(1)                        # (batch, d)
    return zeta, rho


class CopyNet(nn.Module):
    """Gu et al. (2016): generate mode + copy mode in one softmax, selective read."""

    extended_vocab = True

    def __init__(self, vocab_size: int, emb_size: int = 128, hidden_size: int = 256,
                 attn_size: int | None = None, dropout: float = 0.0, pad_id: int = 0, unk_id: int = 1):
        super().__init__()
        self.vocab_size = vocab_size
        self.unk_id = unk_id
        self.config = dict(vocab_size=vocab_size, emb_size=emb_size, hidden_size=hidden_size,
                           attn_size=attn_size, dropout=dropout, pad_id=pad_id, unk_id=unk_id)
        H = hidden_size
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_id)
        self.encoder = BiRNNEncoder(self.embedding, H, "gru", dropout)
        self.init_state = nn.Linear(H, H)                                    # W_init
        self.attention = AdditiveAttention(H, 2 * H, attn_size or H)          # attentive read
        self.cell = nn.GRUCell(emb_size + 2 * H + 2 * H, H)                  # [e; zeta; c_t]
        self.W_o = nn.Linear(H, vocab_size)                                   # eq. (7)
        self.W_c = nn.Linear(2 * H, H)                                        # eq. (8)
        self.dropout = nn.Dropout(dropout)

    def encode(self, batch) -> dict:
        keys, last = self.encoder(batch.src, batch.src_mask)                 # (batch, src_len, 2H)
        back_first = last[:, keys.size(-1) // 2:]                              # <-h_1
        B, S = batch.src.shape
        return {
            "keys": keys,                                                      # the memory M
            "proj_keys": self.attention.project_keys(keys),
            "copy_keys": torch.tanh(self.W_c(keys)),                           # sigma(h_j^T W_c), once
            "mask": batch.src_mask,
            "src_ext": batch.src_ext,
            "oov_mask": oov_slots(batch),                                      # width: n_oov
            "s": torch.tanh(self.init_state(back_first)),                      # s_0
            "copy": keys.new_zeros(B, S),                                      # p(x_j, c) of step t-1
        }

    def step(self, y_prev: torch.Tensor, state: dict):
        """One step; ``y_prev`` (batch,) in extended ids (read as UNK by the embedding if >= V)."""
        emb = self.dropout(self.embedding(extended_to_vocab(y_prev, self.vocab_size, self.unk_id)))
        zeta, rho = selective_read(y_prev, state["copy"], state["src_ext"], state["mask"],
                                   state["keys"])                                     # eq. (9)
        context, attn = self.attention(state["s"], state["keys"], state["mask"],
                                       projected_keys=state["proj_keys"])             # c_t
        s = self.cell(torch.cat([emb, zeta, context], dim=-1), state["s"])            # s_t
        s_out = self.dropout(s)
        gen_scores = self.W_o(s_out)                                                  # eq. (7)
        copy_scores = torch.bmm(state["copy_keys"], s_out.unsqueeze(-1)).squeeze(-1)  # eq. (8)
        probs, p_copy_pos = copy_mix(gen_scores, copy_scores, state["src_ext"], state["mask"],
                                     state["oov_mask"].size(1))                       # eqs. (4)-(6)
        info = {"attn": attn, "copy": p_copy_pos, "p_copy": p_copy_pos.sum(-1), "selective": rho}
        return safe_log(probs), {**state, "s": s, "copy": p_copy_pos}, info

    def forward(self, batch) -> dict:
        """Teacher forcing on ``<s>`` + the extended reference words.  Returns log_probs
        (batch, T, V + n_oov), attn and copy (batch, T, src_len), p_copy (batch, T): the copy
        mode's total probability at each step, and selective (batch, T, src_len): rho."""
        return teacher_forcing(self, batch)
