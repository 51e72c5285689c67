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
"input feeding"; ``input_feeding=False`` gives x_t = E y_{t-1}, see below); the decoder's first hidden and cell states are ReLU(W_h' [->h_n; <-h_1]) and
ReLU(W_c' [->h_n; <-h_1]), from the encoder's last hidden states; s_t is the LSTM's hidden
state.

Input feeding, a trade-off.  Feeding h*_{t-1} back makes every step wait for the previous
step's attention, so the decoder LSTM runs one cell at a time.  Without it (equations (1)-(4)
as the paper writes them) the decoder LSTM runs over the whole summary in one fused call and
W_s s_t is one matrix product for all steps; only the attention stays step by step, because
coverage needs the attention before it.  On the course's CPU a training step is about 1.2x
faster without it, and over seeds 0-2 on SynthNews (``fast`` sizes, 3 + 1 epochs) ROUGE-2 was
44.3 (43.2-45.9) without and 44.0 (41.7-46.4) with: no difference the seeds can tell.  The
recipes train without it; this class keeps See et al.'s code as its default.

Decoding protocol (see :mod:`dca_course.models`): ``step(y_prev, state)`` takes ``y_prev`` in
*extended* ids (what the search chose, a copied OOV word included) and maps ids >= V to UNK
itself before the embedding, so the embedding never sees an extended id.
"""
from __future__ import annotations

import torch
from torch import nn

from ..nn.attention import AdditiveAttention, attention_over_steps, step_keys, using_reference_code


def safe_log(p: torch.Tensor) -> torch.Tensor:
    """log p with p floored at the smallest normal float: a word no mode can produce (a
    column of the extended vocabulary this example does not use) gets a very negative but
    finite log-probability, so no NaN comes from 0 * -inf in a later entropy or RL term."""
    return torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))


def teacher_forcing(model, batch) -> dict:
    """Run the decoder over ``<s>`` and the reference words (extended ids: a copying model must
    know which OOV word it wrote) and stack what every step returns: ``log_probs`` (batch, T,
    width) and each ``info`` entry as (batch, T, ...).  The forward pass of the
    pointer-generator, CopyNet and DCA.

    A model whose step splits into ``recur`` (what step t hands to step t+1: the LSTM, the
    attention, coverage) and ``readout`` (the output distribution, which nothing later reads)
    runs only ``recur`` in the loop and ``readout`` once for all T steps: the same numbers with
    a few large matrix products instead of T small ones.  Other models, and every model inside
    :func:`~dca_course.nn.attention.reference_code`, run :func:`teacher_forcing_stepwise`.
    """
    if not hasattr(model, "recur") or using_reference_code():
        return teacher_forcing_stepwise(model, batch)
    state = model.encode(batch)
    y_prev = torch.cat([batch.tgt_in[:, :1], batch.tgt_out[:, :-1]], dim=1)   # <s> y1 .. y_{T-1}
    emb = model.embed(y_prev)                                                 # all steps at once
    if hasattr(model, "recur_sequence"):         # a model that can run its recurrence faster
        state, carried = model.recur_sequence(emb, state)
    else:
        state, carried = recur_loop(model, emb, state)
    log_probs, info = model.readout(carried, state)
    return {"log_probs": log_probs, **info}


def recur_loop(model, emb: torch.Tensor, state: dict):
    """``model.recur`` over the steps of ``emb`` (batch, T, emb); what it carries, stacked as
    (batch, T, ...)."""
    carried: dict[str, list] = {}
    for emb_t in emb.unbind(1):        # not emb[:, t]: its backward would zero-fill all T steps, T times
        state, r = model.recur(emb_t, state)
        for k, v in r.items():
            carried.setdefault(k, []).append(v)
    return state, {k: torch.stack(v, dim=1) for k, v in carried.items()}


def teacher_forcing_stepwise(model, batch) -> dict:
    """The reference for :func:`teacher_forcing`: ``model.step`` once per reference word."""
    state = model.encode(batch)
    y_prev = torch.cat([batch.tgt_in[:, :1], batch.tgt_out[:, :-1]], dim=1)   # <s> y1 .. y_{T-1}
    outs: dict[str, list] = {"log_probs": []}
    for t in range(y_prev.size(1)):
        lp, state, info = model.step(y_prev[:, t], state)
        outs["log_probs"].append(lp)
        for k, v in info.items():
            outs.setdefault(k, []).append(v)
    return {k: torch.stack(v, dim=1) for k, v in outs.items()}


def final_distribution(p_vocab: torch.Tensor, attn: torch.Tensor, p_gen: torch.Tensor,
                       src_ext: torch.Tensor, n_oov: int) -> torch.Tensor:
    """Equation (9): P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i.

    p_vocab (batch, V), attn (batch, src_len) (zero at padding), p_gen (batch, 1),
    src_ext (batch, src_len) extended ids of the source.  Returns (batch, V + n_oov).
    The same for all steps at once, or for agents: p_vocab (batch, ..., V), attn (batch, ...,
    src_len), p_gen (batch, ..., 1); src_ext may lack the dimensions right after the batch's
    (the steps), which it has in common for every step.
    """
    gen = p_gen * p_vocab                                              # (batch, ..., V)
    copy = (1.0 - p_gen) * attn                                        # (batch, ..., src_len)
    out = torch.cat([gen, gen.new_zeros(gen.shape[:-1] + (n_oov,))], dim=-1)  # (batch, ..., V + n_oov)
    return out.scatter_add(-1, _source_index(src_ext, copy), copy)


class _LogFinalDistribution(torch.autograd.Function):
    """log P for P(w) = gen softmax(logits)(w) + sum_{i: w_i = w} copy_i (eq. 9 with gen = p_gen and
    copy_i = (1 - p_gen) a_i; DCA's eqs. 14-15 with the sum over agents taken first), with its
    backward pass written out.

    The extended-vocabulary distribution is the largest tensor of a training step (batch x T x
    (V + OOVs)); autograd would write it, or a gradient of its size, some fifteen times
    (softmax, the product with p_gen, the zero columns, the scatter, the clamp, the log, and
    each one's backward).  Here: P = gen softmax(l) + copy, log P = log max(P, tiny), and

        g_P    = g / P  (0 where P <= tiny, as the clamp's gradient is)
        g_l    = gen (t - softmax(l) sum t),   t = g_P[:V] softmax(l)     (softmax)
        g_gen  = sum t,                        g_copy_i = g_P[w_i]

    :func:`log_final_distribution_reference` is the definition it is tested against.
    """

    @staticmethod
    def forward(ctx, logits, gen, copy, index, n_oov: int):
        V = logits.size(-1)
        p_vocab = torch.softmax(logits, dim=-1)                                  # eq. (4)
        P = logits.new_empty(logits.shape[:-1] + (V + n_oov,))
        torch.mul(p_vocab, gen, out=P[..., :V])
        P[..., V:].zero_()
        P.scatter_add_(-1, index, copy)                                          # eq. (9)
        log_p = torch.clamp_min(P, torch.finfo(P.dtype).tiny).log_()
        ctx.save_for_backward(p_vocab, P, gen, index)
        return log_p

    @staticmethod
    def backward(ctx, g):
        p_vocab, P, gen, index = ctx.saved_tensors
        V = p_vocab.size(-1)
        g_P = torch.where(P > torch.finfo(P.dtype).tiny, g / P, torch.zeros((), dtype=g.dtype, device=g.device))
        g_copy = g_P.gather(-1, index)                                           # g_P[w_i]
        t = g_P[..., :V] * p_vocab
        sum_t = t.sum(-1, keepdim=True)
        g_logits = t.addcmul_(p_vocab, sum_t, value=-1.0).mul_(gen)
        return g_logits, sum_t, g_copy, None, None


def log_gen_copy(logits: torch.Tensor, gen: torch.Tensor, copy: torch.Tensor, index: torch.Tensor,
                 n_oov: int) -> torch.Tensor:
    """log P for P(w) = gen softmax(logits)(w) + sum_{i: index_i = w} copy_i over the extended
    vocabulary, floored as :func:`safe_log` does: logits (batch, ..., V), gen (batch, ..., 1), copy
    and index (batch, ..., positions).  The one hand-written distribution of the pointer-generator
    (:func:`log_final_distribution`) and of DCA (:func:`~dca_course.models.dca.log_mixed_distribution`)."""
    return _LogFinalDistribution.apply(logits, gen, copy, index, n_oov)


def _source_index(src_ext: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """src_ext (batch, ..., src_len) with the missing dimensions after the batch's (the steps)
    inserted and expanded to ``like``'s shape."""
    missing = like.dim() - src_ext.dim()
    return src_ext.view(src_ext.shape[:1] + (1,) * missing + src_ext.shape[1:]).expand_as(like)


def log_final_distribution(logits: torch.Tensor, p_gen: torch.Tensor, attn: torch.Tensor,
                           src_ext: torch.Tensor, n_oov: int) -> torch.Tensor:
    """log P(w) of eq. (9), P = p_gen softmax(logits) + (1 - p_gen) sum_{i: w_i = w} a_i, floored
    as :func:`safe_log` does.  logits (batch, ..., V), p_gen (batch, ..., 1), attn (batch, ...,
    src_len), src_ext as for :func:`final_distribution`.  The same numbers as
    :func:`log_final_distribution_reference`, computed with far fewer passes over the
    extended vocabulary (:class:`_LogFinalDistribution`)."""
    if using_reference_code():
        return log_final_distribution_reference(logits, p_gen, attn, src_ext, n_oov)
    return log_gen_copy(logits, p_gen, (1.0 - p_gen) * attn, _source_index(src_ext, attn), n_oov)


def log_final_distribution_reference(logits, p_gen, attn, src_ext, n_oov):
    """The definition: eqs. (4) and (9) as written, then :func:`safe_log`."""
    return safe_log(final_distribution(torch.softmax(logits, dim=-1), attn, p_gen, src_ext, n_oov))


def coverage_terms(attn: torch.Tensor, coverage: torch.Tensor) -> torch.Tensor:
    """Equation (12) at one step: sum_i min(a^t_i, c^t_i), one number per row."""
    return torch.minimum(attn, coverage).sum(dim=-1)


def oov_slots(batch) -> torch.Tensor:
    """(batch, n_oov) bool: True where example b has an i-th OOV word.

    Kept in the decoding state: its width tells ``step`` how wide the extended vocabulary is
    (V + n_oov) without a host sync, and it is batch-first, so beam search reorders it like
    everything else.
    """
    n_oov = batch.n_oov
    counts = torch.tensor([len(o) for o in batch.oovs], device=batch.src.device)
    return torch.arange(n_oov, device=batch.src.device)[None, :] < counts[:, None]


def decoder_inputs(y: torch.Tensor, vocab_size: int, unk_id: int = 1) -> torch.Tensor:
    """Extended ids -> ids the embedding can read (ids >= V become UNK)."""
    return torch.where(y >= vocab_size, torch.full_like(y, unk_id), y)


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse the first ``lengths[b]`` positions of every row of x (batch, len, ...); padding stays put."""
    T = x.size(1)
    pos = torch.arange(T, device=x.device).unsqueeze(0)                    # (1, len)
    rev = lengths.unsqueeze(1) - 1 - pos
    idx = torch.where(rev >= 0, rev, pos)                                  # (batch, len)
    return x.gather(1, idx.view(idx.shape + (1,) * (x.dim() - 2)).expand_as(x))


class BiRNNEncoder(nn.Module):
    """Embeddings + a bidirectional LSTM (or GRU) over a right-padded source.

    The two directions are two one-directional RNNs: the backward one reads each source
    reversed within its own length (:func:`reverse_padded`), so in both runs the padding
    comes *after* the real words and cannot change their states.  (This avoids
    ``pack_padded_sequence``, whose backward pass on the CPU costs time quadratic in the
    source length: some 15x slower for 300-word articles.)

    Returns the annotations h_i = [->h_i; <-h_i] (batch, src_len, 2H), zero at padding, and
    [->h_n; <-h_1] (batch, 2H), the last state of each direction.
    """

    def __init__(self, embedding: nn.Embedding, hidden_size: int, cell: str = "lstm", dropout: float = 0.0):
        super().__init__()
        self.embedding = embedding
        rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell]
        self.fwd = rnn(embedding.embedding_dim, hidden_size, batch_first=True)
        self.bwd = rnn(embedding.embedding_dim, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout)

    def forward(self, src: torch.Tensor, mask: torch.Tensor):
        lengths = mask.sum(dim=1).clamp_min(1)
        emb = self.dropout(self.embedding(src))                                # (batch, src_len, emb)
        out_f, _ = self.fwd(emb)                                               # ->h_i
        out_b = reverse_padded(self.bwd(reverse_padded(emb, lengths))[0], lengths)   # <-h_i
        out = torch.cat([out_f, out_b], dim=-1) * mask.unsqueeze(-1)          # (batch, src_len, 2H)
        last_f = out_f.gather(1, (lengths - 1).view(-1, 1, 1).expand(-1, 1, out_f.size(-1))).squeeze(1)
        return out, torch.cat([last_f, out_b[:, 0]], dim=-1)


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
        self.coverage = coverage
        self.input_feeding = input_feeding
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

    def set_coverage(self, on: bool = True) -> "PointerGenerator":
        """Switch coverage on (or off) in place, e.g. for the paper's final training phase."""
        self.coverage = bool(on)
        self.config["coverage"] = bool(on)
        return self

    # -- the decoding protocol ---------------------------------------------------------------
    def encode(self, batch) -> dict:
        keys, last = self.encoder(batch.src, batch.src_mask)                # (batch, src_len, 2H)
        B, S = batch.src.shape
        state = {
            "keys": step_keys(keys),                                        # see nn.attention
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
        return self.embedding(decoder_inputs(y_prev, self.vocab_size, self.unk_id))

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

    def _attend(self, h, x, state, query_proj=None):
        """Eqs. (1)-(3), (10)-(11) for the decoder state h = s_t; the step's new state and what
        :meth:`readout` needs."""
        coverage = state["coverage"]                                                 # c^t, eq. (10)
        context, attn = self.attention(h, state["keys"], state["mask"], projected_keys=state["proj_keys"],
                                       coverage=coverage if self.coverage else None,
                                       query_proj=query_proj)                        # eqs. (1)-(3)/(11)
        if not self.coverage:
            # w_c unused: keep it in the graph with a zero gradient, as DistributedDataParallel
            # wants of every parameter (it stays exactly zero under Adam).
            context = context + 0.0 * self.attention.w_c.weight.sum()
        new_state = {**state, "context": context, "coverage": coverage + attn}
        return new_state, {"h": h, "context": context, "x": x, "attn": attn, "coverage": coverage}

    def recur_sequence(self, emb: torch.Tensor, state: dict):
        """All T steps of the recurrence for teacher forcing; ``emb`` (batch, T, emb).  With
        input feeding each step's LSTM input needs the previous step's context, so the steps
        run one by one (:func:`recur_loop`).  Without it the decoder LSTM runs over the whole
        target in one fused call and W_s s_t is one matrix product for all steps; only the
        attention scores (whose coverage needs the attention before them) stay step by step
        (:func:`~dca_course.nn.attention.attention_over_steps`)."""
        if self.input_feeding:
            return self._recur_fed(emb, state)
        states, (h_n, c_n) = self.cell(emb, (state["h"].unsqueeze(0), state["c"].unsqueeze(0)))
        query_proj = self.attention.W_s(states)                                      # (batch, T, attn)
        context, attn, coverage = attention_over_steps(
            self.attention, state["keys"], state["mask"], query_proj, state["coverage"],
            coverage=self.coverage, projected_keys=state["proj_keys"])              # eqs. (1)-(3), (10)-(11)
        if not self.coverage:
            context = context + 0.0 * self.attention.w_c.weight.sum()              # as in _attend
        state = {**state, "h": h_n.squeeze(0), "c": c_n.squeeze(0), "context": context[:, -1],
                 "coverage": coverage[:, -1] + attn[:, -1]}
        return state, {"h": states, "context": context, "x": emb, "attn": attn, "coverage": coverage}

    def _recur_fed(self, emb: torch.Tensor, state: dict):
        """Teacher forcing with input feeding: x_t = W_x [E y_{t-1}; h*_{t-1}] + b splits into
        W_x^E E y_{t-1} + b, one matrix product for all steps before the loop, and
        W_x^h h*_{t-1}, the only part a step must wait for."""
        E = emb.size(-1)
        W = self.input_proj.weight
        x_emb = nn.functional.linear(emb, W[:, :E], self.input_proj.bias)          # (batch, T, emb)
        W_ctx_t = W[:, E:].t()
        carried: dict[str, list] = {}
        for x_emb_t in x_emb.unbind(1):
            x = torch.addmm(x_emb_t, state["context"], W_ctx_t)                      # x_t
            h, c = self.cell(x, (state["h"], state["c"]))                            # s_t = h
            new_state, r = self._attend(h, x, state)
            state = {**new_state, "h": h, "c": c}
            for k, v in r.items():
                carried.setdefault(k, []).append(v)
        return state, {k: torch.stack(v, dim=1) for k, v in carried.items()}

    def readout(self, r: dict, state: dict):
        """The output of one step (tensors (batch, ...)) or of all steps at once ((batch, T, ...)):
        P_vocab (eq. 4), p_gen (eq. 8), the final distribution (eq. 9) and the coverage terms
        (eq. 12).  Returns ``(log P, info)``."""
        h, context, attn, coverage = r["h"], r["context"], r["attn"], r["coverage"]
        logits = self.out(self.out_hidden(torch.cat([h, context], dim=-1)))         # eq. (4), before softmax
        info = {"attn": attn, "coverage": coverage, "cov_loss": coverage_terms(attn, coverage)}
        if not self.pointer:
            return safe_log(torch.softmax(logits, dim=-1)), info
        p_gen = torch.sigmoid(self.p_gen_linear(torch.cat([context, h, r["x"]], dim=-1)))   # eq. (8)
        info["p_gen"] = p_gen.squeeze(-1)
        log_probs = log_final_distribution(logits, p_gen, attn, state["src_ext"],
                                           state["oov_mask"].size(1))               # eqs. (4), (9)
        return log_probs, info

    def step(self, y_prev: torch.Tensor, state: dict):
        """One decoder step.  ``y_prev`` (batch,) holds extended ids; ids >= V are read as UNK."""
        new_state, r = self.recur(self.embed(y_prev), state)
        log_probs, info = self.readout(r, new_state)
        return log_probs, new_state, info

    def forward(self, batch) -> dict:
        """Teacher forcing.  Returns log_probs (batch, T, V + n_oov), attn, coverage (both
        (batch, T, src_len); coverage[:, t] is c^t, the attention of steps before t), p_gen
        (batch, T) and cov_loss (batch, T), the per-step terms of eq. (12)."""
        return teacher_forcing(self, batch)
