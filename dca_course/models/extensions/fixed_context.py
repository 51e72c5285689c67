"""The encoder-decoder without attention: the control that shows what attention buys.

Bahdanau et al. (2015) compare their model with the RNN encoder-decoder of Cho et al. (2014), whose
decoder sees the source only through one fixed vector c, eq. (1): the same c at every output step,

    c   = [->h_{T_x}; <-h_1]                            the encoder's final states, both directions
    s_i = GRU([E y_{i-1}; c], s_{i-1})                  the decoder of Cho et al. (2014)
    p(y_i | y_<i, x) = softmax(W_o tanh(L_s s_i + L_y E y_{i-1} + L_c c))

:class:`FixedContextSeq2Seq` is :class:`~dca_course.models.seq2seq.Seq2Seq` with c_i replaced by that c
and nothing else changed: the same encoder, s_0, GRU cell and deep output, of the same sizes.  Built
after the same ``torch.manual_seed``, every weight they share starts equal (the attention is built and
then dropped, so the random stream is the same); the control only lacks the attention's parameters.
"""
from __future__ import annotations

import torch

from ..seq2seq import Seq2Seq


class FixedContextSeq2Seq(Seq2Seq):
    """Seq2Seq whose decoder reads the fixed context c = [->h_{T_x}; <-h_1] instead of attending."""

    def __init__(self, vocab_size: int, emb_size: int = 128, hidden_size: int = 256, pad_id: int = 0):
        super().__init__(vocab_size, emb_size=emb_size, hidden_size=hidden_size, pad_id=pad_id)
        del self.attention                     # built (so the other weights start as Seq2Seq's), never used

    def encode(self, batch) -> dict:
        keys, back_first = self.encoder(batch.src, batch.src_mask)        # (batch, src_len, 2H), (batch, H)
        H = back_first.size(-1)
        last = (batch.src_mask.sum(dim=1).clamp_min(1) - 1).to(keys.device)   # the last real position
        forward_last = keys[torch.arange(keys.size(0), device=keys.device), last, :H]   # ->h_{T_x}
        return {"context": torch.cat([forward_last, back_first], dim=-1),         # (batch, 2H): c, eq. (1)
                "s": torch.tanh(self.init_state(back_first))}                     # s_0, as in Seq2Seq

    def step(self, y_prev: torch.Tensor, state: dict):
        emb = self.embedding(y_prev)                                               # (batch, emb)
        context = state["context"]                                                 # c: the same at every step
        s = self.cell(torch.cat([emb, context], dim=-1), state["s"])               # s_i
        hidden = torch.tanh(self.deep_out(torch.cat([s, emb, context], dim=-1)))
        log_probs = torch.log_softmax(self.out(hidden), dim=-1)                   # (batch, V)
        return log_probs, {**state, "s": s}, {}

    def forward(self, batch) -> dict:
        """Teacher forcing: feed the reference y_{i-1} at every step (there are no attention weights)."""
        state = self.encode(batch)
        log_probs = []
        for t in range(batch.tgt_in.size(1)):
            lp, state, _ = self.step(batch.tgt_in[:, t], state)
            log_probs.append(lp)
        return {"log_probs": torch.stack(log_probs, 1)}
