"""The pointer-generator network with coverage (See et al. 2017, "Get To The Point:
Summarization with Pointer-Generator Networks").

Encoder: a one-layer bidirectional LSTM; the encoder state of word i is h_i = [->h_i; <-h_i].
Decoder: a one-layer LSTM whose hidden state after reading x_t is the decoder state s_t.
At step t (equation numbers as in the paper):

    e^t_i  = v^T tanh(W_h h_i + W_s s_t + b_attn)                     (1)
    a^t    = softmax(e^t)                                             (2)
    h*_t   = sum_i a^t_i h_i                                          (3)  the context vector
    P_vocab = softmax(V'(V[s_t; h*_t] + b) + b')                      (4)
    p_gen  = sigmoid(w_h*^T h*_t + w_s^T s_t + w_x^T x_t + b_ptr)     (8)
    P(w)   = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a^t_i   (9)

P is a distribution over the *extended vocabulary*: the V words of the vocabulary and then
this example's own out-of-vocabulary source words (ids V, V+1, ...).  Equation (9) is one
``scatter_add``: the copy mass (1 - p_gen) a^t_i of source position i is added to the column
of the word at position i (``batch.src_ext``), so a word found at several positions gets the
sum of their attention, and an OOV source word, which P_vocab cannot name, gets only that.

Coverage (section 2.3) is the attention paid so far, over *past* steps only:

    c^t = sum_{t'=0}^{t-1} a^{t'}          (10)   so c^0 = 0
    e^t_i = v^T tanh(W_h h_i + W_s s_t + w_c c^t_i + b_attn)          (11)
    covloss_t = sum_i min(a^t_i, c^t_i)                               (12)
    loss_t = -log P(w*_t) + lambda sum_i min(a^t_i, c^t_i)            (13)

As in the paper, a model can be trained without coverage and then switched on for a short
final phase (:meth:`PointerGenerator.set_coverage`).  The parameter w_c always exists (so
checkpoints of both phases have the same keys) and starts at zero; without coverage it gets
a zero gradient, so it stays zero, and switching coverage on leaves the model's outputs
unchanged until training moves w_c.

``pointer=False`` is the paper's baseline (section 2.1): the same network with P = P_vocab.

Choices the paper leaves open, following the authors' released code where it helps:
the decoder input is x_t = W_x [E y_{t-1}; h*_{t-1}] (the previous context is fed back,
"input feeding"; ``input_feeding=False`` gives x_t = E y_{t-1}, see below); the decoder's
first hidden and cell states are ReLU(W_h' [->h_n; <-h_1]) and
ReLU(W_c' [->h_n; <-h_1]), from the encoder's last hidden states; s_t is the LSTM's hidden
state.

Input feeding is a choice of the authors' code, which this class and the recipes make by
default.  Feeding h*_{t-1} back makes every step wait for the previous step's attention, so the
decoder LSTM runs one cell at a time.  Without it (``input_feeding=False``: equations (1)-(4) as
the paper writes them) the decoder LSTM can run over the whole summary in one fused call and
W_s s_t is one matrix product for all steps; only the attention stays step by step, because
coverage needs the attention before it.

Decoding protocol (see :mod:`dca_course.models`): ``step(y_prev, state)`` takes ``y_prev`` in
*extended* ids (what the search chose, a copied OOV word included) and maps ids >= V to UNK
itself before the embedding, so the embedding never sees an extended id.

What this model shares with CopyNet and DCA lives outside it: the bi-LSTM encoder in
:mod:`dca_course.nn.encoders`; eq. (9) in :mod:`dca_course.nn.copying`
(:func:`~dca_course.nn.copying.final_distribution`); the extended-id -> UNK map in
:mod:`dca_course.data.vocab`; the loss of eqs. (12)-(13) in :mod:`dca_course.losses`; teacher
forcing in :mod:`dca_course.models.teacher_forcing`.  This module is the paper's code as written; :class:`dca_course.fast.models.FastPointerGenerator` computes the same
values faster (a fused recurrence, a hand-written backward pass), and
:func:`dca_course.fast.accelerate` turns a model into one.
"""
from __future__ import annotations

import torch
from torch import nn

from ..data.vocab import extended_to_vocab
from ..nn.attention import AdditiveAttention
from ..nn.copying import final_distribution, oov_slots, safe_log
from ..nn.encoders import BiRNNEncoder
from .teacher_forcing import teacher_forcing

__all__ = ["PointerGenerator", "final_distribution"]


class PointerGenerator(nn.Module):
    """See et al. (2017): attention seq2seq + pointer (eqs. 8-9) + optional coverage (10-13).

    ``pointer=False`` gives the paper's baseline (section 2.1): the same network with
    P = P_vocab (no copying, output over the V words only).
    """

    def __init__(self, vocab_size: int, emb_size: int = 128, hidden_size: int = 256,
                 attn_size: int | None = None, coverage: bool = False, pointer: bool = True,
                 input_feeding: bool = True, pad_id: int = 0, unk_id: int = 1):
        super().__init__()
        self.vocab_size = vocab_size
        self.unk_id = unk_id
        self.pointer = pointer
        self.extended_vocab = pointer
        self.input_feeding = input_feeding
        # the constructor's arguments, what a checkpoint rebuilds the model from; also the one
        # place the coverage switch lives (see the ``coverage`` property)
        self.config = dict(vocab_size=vocab_size, emb_size=emb_size, hidden_size=hidden_size,
                           attn_size=attn_size, coverage=coverage, pointer=pointer,
                           input_feeding=input_feeding, pad_id=pad_id, unk_id=unk_id)
        H = hidden_size
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_id)
        self.encoder = BiRNNEncoder(self.embedding, H, "lstm")
        self.reduce_h = nn.Linear(2 * H, H)                     # the decoder's first state
        self.reduce_c = nn.Linear(2 * H, H)
        if input_feeding:
            self.input_proj = nn.Linear(emb_size + 2 * H, emb_size)  # x_t = W_x [E y_{t-1}; h*_{t-1}]
            self.cell = nn.LSTMCell(emb_size, H)
        else:                                                    # x_t = E y_{t-1}: one fused LSTM
            self.input_proj = None
            self.cell = nn.LSTM(emb_size, H, batch_first=True)
        self.attention = AdditiveAttention(H, 2 * H, attn_size or 2 * H, coverage=True)  # eqs. (1), (11)
        nn.init.zeros_(self.attention.w_c.weight)               # unused until coverage is on
        self.out_hidden = nn.Linear(3 * H, H)                   # V, b   of eq. (4)
        self.out = nn.Linear(H, vocab_size)                     # V', b' of eq. (4)
        # w_h*, w_s, w_x, b_ptr of eq. (8) (the baseline has no switch)
        self.p_gen_linear = nn.Linear(2 * H + H + emb_size, 1) if pointer else None

    @property
    def coverage(self) -> bool:
        """Whether coverage is on (eqs. 10-13).  Kept in ``config`` alone, so a checkpoint saved
        in the coverage phase rebuilds a model with coverage on."""
        return self.config["coverage"]

    @coverage.setter
    def coverage(self, on: bool) -> None:
        self.config["coverage"] = bool(on)

    def set_coverage(self, on: bool = True) -> "PointerGenerator":
        """Switch coverage on (or off) in place, e.g. for the paper's final training phase."""
        self.coverage = on
        return self

    # -- the decoding protocol ---------------------------------------------------------------
    def encode(self, batch) -> dict:
        keys, last = self.encoder(batch.src, batch.src_mask)                # (batch, src_len, 2H)
        B, S = batch.src.shape
        state = {
            "keys": keys,                                                   # h_i
            "proj_keys": self.attention.project_keys(keys),                 # W_h h_i, once
            "mask": batch.src_mask,
            "h": torch.relu(self.reduce_h(last)),                           # (batch, H)
            "c": torch.relu(self.reduce_c(last)),
            "context": keys.new_zeros(B, keys.size(-1)),                    # h*_{t-1}, zero at t=0
            "coverage": keys.new_zeros(B, S),                               # c^0 = 0, eq. (10)
        }
        if self.pointer:
            state["src_ext"] = batch.src_ext
            state["oov_mask"] = oov_slots(batch)
        return state

    def embed(self, y_prev: torch.Tensor) -> torch.Tensor:
        """E y_{t-1} for extended ids ``y_prev`` (any shape; ids >= V are read as UNK)."""
        return self.embedding(extended_to_vocab(y_prev, self.vocab_size, self.unk_id))

    def recur(self, emb: torch.Tensor, state: dict):
        """The part of a step that the next step needs: input feeding, the LSTM, attention with
        coverage (eqs. 1-3, 10-11).  ``emb`` (batch, emb) is E y_{t-1}.  Returns the new state
        and what :meth:`readout` needs (batch, ...)."""
        if self.input_feeding:
            x = self.input_proj(torch.cat([emb, state["context"]], dim=-1))          # x_t
            h, c = self.cell(x, (state["h"], state["c"]))                            # s_t = h
        else:
            x = emb
            out, (h, c) = self.cell(x.unsqueeze(1), (state["h"].unsqueeze(0), state["c"].unsqueeze(0)))
            h, c = h.squeeze(0), c.squeeze(0)
        new_state, carried = self._attend(h, x, state)
        return {**new_state, "h": h, "c": c}, carried

    def _attend(self, h, x, state):
        """Eqs. (1)-(3), (10)-(11) for the decoder state h = s_t; the step's new state and what
        :meth:`readout` needs."""
        coverage = state["coverage"]                                                 # c^t, eq. (10)
        context, attn = self.attention(h, state["keys"], state["mask"], projected_keys=state["proj_keys"],
                                       coverage=coverage if self.coverage else None)  # eqs. (1)-(3)/(11)
        if not self.coverage:
            # w_c unused: keep it in the graph with a zero gradient, as DistributedDataParallel
            # wants of every parameter (it stays exactly zero under Adam).
            context = context + 0.0 * self.attention.w_c.weight.sum()
        new_state = {**state, "context": context, "coverage": coverage + attn}
        return new_state, {"h": h, "context": context, "x": x, "attn": attn, "coverage": coverage}

    def readout(self, r: dict, state: dict):
        """The output of one step (tensors (batch, ...)) or of all steps at once ((batch, T, ...)):
        P_vocab (eq. 4), p_gen (eq. 8) and the final distribution (eq. 9).  Returns ``(log P, info)``;
        info's attention and coverage are what the loss of eqs. (12)-(13) reads."""
        h, context, attn, coverage = r["h"], r["context"], r["attn"], r["coverage"]
        logits = self.out(self.out_hidden(torch.cat([h, context], dim=-1)))         # eq. (4), before softmax
        info = {"attn": attn, "coverage": coverage}                                  # a^t, c^t
        p_vocab = torch.softmax(logits, dim=-1)                                      # eq. (4)
        if not self.pointer:
            return safe_log(p_vocab), info
        p_gen = torch.sigmoid(self.p_gen_linear(torch.cat([context, h, r["x"]], dim=-1)))   # eq. (8)
        info["p_gen"] = p_gen.squeeze(-1)
        p_final = final_distribution(p_vocab, attn, p_gen, state["src_ext"], state["oov_mask"].size(1))  # eq. (9)
        return safe_log(p_final), info

    def step(self, y_prev: torch.Tensor, state: dict):
        """One decoder step.  ``y_prev`` (batch,) holds extended ids; ids >= V are read as UNK."""
        new_state, r = self.recur(self.embed(y_prev), state)
        log_probs, info = self.readout(r, new_state)
        return log_probs, new_state, info

    def forward(self, batch, log_probs: bool = True) -> dict:
        """Teacher forcing, step by step.  Returns log_probs (batch, T, V + n_oov), attn, coverage
        (both (batch, T, src_len); coverage[:, t] is c^t, the attention of steps before t, what
        :func:`dca_course.losses.coverage_loss` reads) and p_gen (batch, T).  ``log_probs=False``
        lets the fast model (:mod:`dca_course.fast`) skip log P when a loss reads log P(y*_t)
        alone; this code always computes it."""
        return teacher_forcing(self, batch)
