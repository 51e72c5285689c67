"""Deep Communicating Agents (Celikyilmaz et al. 2018, "Deep Communicating Agents for
Abstractive Summarization"), section 2.

A document is split among M agents (:mod:`dca_course.data.agents`); each agent encodes its
chunk, and the agents talk to each other between encoder layers.  One decoder attends to the
words of every agent, then to the agents, and copies from any of them.

Multi-agent encoder (equation numbers as in the paper)
------------------------------------------------------
Local encoder, one bi-LSTM per agent (the same weights for all agents) over its words e_i::

    ->h_i, <-h_i = bLSTM(e_i, ->h_{i-1}, <-h_{i+1})                          (1)
    h_i^(1)      = W1 [->h_i; <-h_i]                                          (2)

K contextual layers.  At layer k agent a receives the message z^(k), the mean of the last
hidden states h_{m,I}^(k) (the layer's output at the agent's last word I) of the *other* agents::

    h_i^(k+1) = W2 [bLSTM(f(h_i^(k), z^(k)), ->h_{i-1}^(k+1), <-h_{i+1}^(k+1))]   (3), (4)
    z^(k)     = 1/(M-1) sum_{m != a} h_{m,I}^(k)                               (5)
    f(h, z)   = v1^T tanh(W3 h + W4 z)                                         (6)

Choices the paper leaves open:

* read literally, v1^T in eq. (6) makes f a scalar, which cannot be an LSTM's input.  Here
  v1 is a matrix (``nn.Linear(H, H)``): f returns a vector of the hidden size.  v1, W3, W4
  are shared by all agents; each contextual layer has its own (the paper gives them no layer
  index), and its own bi-LSTM and W2;
* an *empty* agent (a short document, see :func:`~dca_course.data.agents.split_document`)
  sends no message: the mean of eq. (5) runs over the other agents that have words, and is
  zero when there is none; its own states are zero;
* h_{m,I}^(k), the state a message is built from, is the layer's output at the agent's last
  word, as eq. (5) reads: W [->h_I; <-h_I].  Its forward half has read the whole chunk, its
  backward half only the last word (``last_states``); the bi-LSTM's final backward state
  <-h_1 would be the one that has read everything backwards, but the paper's h_{m,I} is the
  output at position I, and this follows the paper;
* all agents run as one batch: (batch, agents, len, dim) is reshaped to
  (batch * agents, len, dim) for every LSTM, never a Python loop over agents; each bi-LSTM is
  the course's one bidirectional encoder (:class:`~dca_course.nn.encoders.BiRNN`, as in the
  pointer-generator and CopyNet).

Decoder with agent attention (section 2.2)
------------------------------------------
One LSTM layer, started from the first agent's last state (the final forward and backward
states [->h_I; <-h_1] of its top bi-LSTM, through a linear map and a ReLU, for both the LSTM's
hidden and cell states).  Its input is
x_t = [E y_{t-1}; c*_{t-1}] (the previous context fed back).  At step t, with state s_t::

    l_a^t  = softmax(v2^T tanh(W5 h_a^(K) + W6 s_t + b1))   word attention in agent a  (7)
    c_a^t  = sum_i l_{a,i}^t h_{a,i}^(K)                     agent a's context          (8)
    g^t    = softmax(v3^T tanh(W7 c_a^t + W8 s_t + b2))      attention over agents      (9)
    c*_t   = sum_a g_a^t c_a^t                                                         (10)
    P_voc  = softmax(MLP([s_t; c*_t]))                                                 (11)
    P_voc  = softmax(MLP([s_t; c*_t; c*_{t-1}]))  contextual agent attention (default)  (12)

The paper names an MLP and gives neither its layers nor its activation.  Here it is the
pointer-generator's eq. (4), two linear maps with nothing between them:
MLP(u) = W_out (W_h u + b_h) + b_out, so, strictly, not an MLP.  A tanh between them
(``--vocab-mlp tanh``) is the course's addition, not the paper's, and not in this module.

Multi-agent pointer network: each agent has its own generation probability and its own
distribution over the extended vocabulary, and the agent attention mixes them::

    p_a^t   = sigmoid(v5^T c_a^t + v6^T s_t + v7^T x_t + b)                            (13)
    P^a(w)  = p_a^t P_voc(w) + (1 - p_a^t) sum_{i: w_{a,i} = w} l_{a,i}^t              (14)
    P(w)    = sum_a g_a^t P^a(w)                                                        (15)

Eq. (14) is the pointer-generator's final distribution
(:func:`~dca_course.nn.copying.final_distribution`), computed for all
(batch * agents) rows at once.  Empty agents get exactly zero agent attention, so they add
nothing to eq. (10) or (15).  This module is the paper's code as written;
:class:`dca_course.fast.models.FastDCA` computes the same values faster, with eqs. (14)-(15) as one
distribution with the sum over agents taken first and a hand-written backward pass (eq. 14 as
written holds batch * agents rows of the extended vocabulary per step: with V = 50,000, a few GB
for a teacher-forced batch of 16 x 100 steps), and :func:`dca_course.fast.accelerate` turns a
model into one.

Decoding protocol (see :mod:`dca_course.models`): ``encode(batch)`` returns a dict of
batch-first tensors (agents and words as further dimensions), ``step(y_prev, state)`` takes
extended ids (ids >= V are read as UNK), so greedy search, sampling and the batched beam
search of :mod:`dca_course.decoding` work unchanged.
"""
from __future__ import annotations

import torch
from torch import nn

from ..data.vocab import extended_to_vocab
from ..nn.attention import AdditiveAttention
from ..nn.copying import final_distribution, oov_slots, safe_log
from ..nn.encoders import BiRNN
from .teacher_forcing import teacher_forcing

__all__ = ["DCA", "AgentBiLSTM", "MessageFunction", "agent_messages", "last_states", "mix_agents"]


def last_states(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """h (batch, agents, len, dim), mask (batch, agents, len) -> each agent's output at its last
    word, h_{a,I} (batch, agents, dim); zeros for an empty agent."""
    lengths = mask.sum(-1)                                                   # (batch, agents)
    idx = (lengths - 1).clamp_min(0)
    last = h.gather(2, idx[:, :, None, None].expand(-1, -1, 1, h.size(-1))).squeeze(2)
    return last * (lengths > 0).unsqueeze(-1).to(h.dtype)


def agent_messages(last: torch.Tensor, agent_mask: torch.Tensor) -> torch.Tensor:
    """Eq. (5): z_a = mean of the other non-empty agents' last states.

    last (batch, agents, dim), agent_mask (batch, agents) True for agents with words.  Returns
    (batch, agents, dim); the message is zero when no other agent has words.
    """
    m = agent_mask.to(last.dtype).unsqueeze(-1)                              # (batch, agents, 1)
    total = (last * m).sum(dim=1, keepdim=True)                              # (batch, 1, dim)
    others = (total - last * m)                                              # sum over m != a
    count = (m.sum(dim=1, keepdim=True) - m).clamp_min(1.0)                  # M - 1 (non-empty)
    return others / count


def mix_agents(p_agents: torch.Tensor, agent_attn: torch.Tensor) -> torch.Tensor:
    """Eq. (15): P(w) = sum_a g_a P^a(w).  p_agents (batch, agents, width), agent_attn
    (batch, agents) -> (batch, width); or (batch, T, agents, ...) for all steps at once."""
    return torch.matmul(agent_attn.unsqueeze(-2), p_agents).squeeze(-2)


class MessageFunction(nn.Module):
    """Eq. (6), f(h, z) = v1 tanh(W3 h + W4 z), shared by all agents.

    The paper writes v1^T, a vector, which would make f a scalar; here v1 is a (dim x dim)
    matrix, so f returns a vector that the next bi-LSTM can read.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.W3 = nn.Linear(dim, dim, bias=False)
        self.W4 = nn.Linear(dim, dim, bias=False)
        self.v1 = nn.Linear(dim, dim, bias=False)

    def forward(self, h: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """h (..., len, dim) and z (..., dim) (one message for all the words of an agent)."""
        return self.v1(torch.tanh(self.W3(h) + self.W4(z).unsqueeze(-2)))


class AgentBiLSTM(BiRNN):
    """One encoder layer for all agents at once: the shared bi-LSTM
    (:class:`~dca_course.nn.encoders.BiRNN`) over (batch * agents, len, in_dim), then the
    projection W [->h; <-h] of eqs. (2) / (4)."""

    def __init__(self, in_dim: int, hidden_size: int):
        super().__init__(in_dim, hidden_size, "lstm")
        self.proj = nn.Linear(2 * hidden_size, hidden_size)

    def forward(self, x: torch.Tensor, mask: torch.Tensor):
        """x (batch, agents, len, in_dim), mask (batch, agents, len).

        Returns h (batch, agents, len, H) (zero at padding and for empty agents) and each
        agent's final states [->h_I; <-h_1] (batch, agents, 2H) (zero for an empty agent).
        """
        B, M, L, D = x.shape
        lengths = mask.reshape(B * M, L).sum(-1)
        out, final = super().forward(x.reshape(B * M, L, D), lengths)          # agents as a batch
        keep = mask.reshape(B * M, L, 1).to(out.dtype)
        h = self.proj(out) * keep                                            # eq. (2) / (4)
        final = final * (lengths > 0).to(out.dtype).unsqueeze(-1)
        return h.view(B, M, L, -1), final.view(B, M, -1)


def per_agent(t: torch.Tensor, ctx_a: torch.Tensor) -> torch.Tensor:
    """``t`` (..., D), the same for every agent, as (..., M, D) beside the agents' ``ctx_a`` (..., M, H)."""
    return t.unsqueeze(-2).expand(t.shape[:-1] + (ctx_a.size(-2), t.size(-1)))


class DCA(nn.Module):
    """Deep Communicating Agents: multi-agent encoder, agent attention, multi-agent pointer.

    ``context_layers`` is K (0 gives agents that never talk); ``contextual=True`` uses eq. (12)
    for the vocabulary distribution, ``False`` eq. (11).  The number of agents is the batch's
    (``batch.src`` is (batch, agents, len)), not a parameter.
    """

    extended_vocab = True

    def __init__(self, vocab_size: int, emb_size: int = 128, hidden_size: int = 256,
                 context_layers: int = 2, attn_size: int | None = None, contextual: bool = True,
                 pad_id: int = 0, unk_id: int = 1):
        super().__init__()
        self.vocab_size = vocab_size
        self.unk_id = unk_id
        self.contextual = contextual
        self.config = dict(vocab_size=vocab_size, emb_size=emb_size, hidden_size=hidden_size,
                           context_layers=context_layers, attn_size=attn_size, contextual=contextual,
                           pad_id=pad_id, unk_id=unk_id)
        H, A = hidden_size, attn_size or hidden_size
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_id)
        self.local = AgentBiLSTM(emb_size, H)                                   # eqs. (1)-(2)
        self.messages = nn.ModuleList(MessageFunction(H) for _ in range(context_layers))   # eq. (6)
        self.contexts = nn.ModuleList(AgentBiLSTM(H, H) for _ in range(context_layers))    # eqs. (3)-(4)
        self.reduce_h = nn.Linear(2 * H, H)                    # the decoder's first state
        self.reduce_c = nn.Linear(2 * H, H)
        self.cell = nn.LSTMCell(emb_size + H, H)               # x_t = [E y_{t-1}; c*_{t-1}]
        self.word_attention = AdditiveAttention(H, H, A)       # v2, W5, W6, b1 of eq. (7)
        self.agent_attention = AdditiveAttention(H, H, A)      # v3, W7, W8, b2 of eq. (9)
        self.out_hidden = nn.Linear((3 if contextual else 2) * H, H)   # W_h, b_h: the 'MLP' of eq. (11)/(12)
        self.out = nn.Linear(H, vocab_size)                             # W_out, b_out
        self.p_gen_linear = nn.Linear(H + H + emb_size + H, 1)          # v5, v6, v7, b of eq. (13)

    # -- the encoder -------------------------------------------------------------------------
    def encode_agents(self, src: torch.Tensor, mask: torch.Tensor, *, return_layers: bool = False):
        """src, mask (batch, agents, len) -> h^(K+1) (batch, agents, len, H) and the top layer's
        final states [->h_I; <-h_1] (batch, agents, 2H); with ``return_layers`` also the list of
        every layer's outputs and of the messages z^(k) each layer received."""
        agent_mask = mask.any(-1)                                               # (batch, agents)
        h, final = self.local(self.embedding(src), mask)                       # h^(1)
        layers, msgs = [h], []
        for f, layer in zip(self.messages, self.contexts):
            z = agent_messages(last_states(h, mask), agent_mask)               # eq. (5)
            h, final = layer(f(h, z), mask)                                    # eqs. (3), (4), (6)
            layers.append(h)
            msgs.append(z)
        if return_layers:
            return h, final, layers, msgs
        return h, final

    # -- the decoding protocol ---------------------------------------------------------------
    def encode(self, batch) -> dict:
        mask = batch.src_mask                                                   # (B, M, L)
        keys, final = self.encode_agents(batch.src, mask)                      # h^(K+1): (B, M, L, H)
        B, M, L, H = keys.shape
        return {
            "keys": keys,
            "proj_keys": self.word_attention.project_keys(keys),               # W5 h, once
            "mask": mask,
            "agent_mask": mask.any(-1),                                         # (B, M)
            "h": torch.relu(self.reduce_h(final[:, 0])),                       # first agent's last state
            "c": torch.relu(self.reduce_c(final[:, 0])),
            "context": keys.new_zeros(B, H),                                    # c*_{t-1}, zero at t = 0
            "src_ext": batch.src_ext,                                           # (B, M, L)
            "oov_mask": oov_slots(batch),                                       # (B, n_oov)
        }

    def embed(self, y_prev: torch.Tensor) -> torch.Tensor:
        """E y_{t-1} for extended ids ``y_prev`` (any shape; ids >= V are read as UNK)."""
        return self.embedding(extended_to_vocab(y_prev, self.vocab_size, self.unk_id))

    def recur(self, emb: torch.Tensor, state: dict):
        """The part of a step that the next step needs: the decoder LSTM, word attention in every
        agent and agent attention (eqs. 7-10).  ``emb`` (batch, emb) is E y_{t-1}.  Returns the
        new state and what :meth:`readout` needs (batch, ...)."""
        keys, mask = state["keys"], state["mask"]
        B, M, L, H = keys.shape
        x = torch.cat([emb, state["context"]], dim=-1)                               # x_t
        s, c = self.cell(x, (state["h"], state["c"]))                                # s_t
        # word attention inside every agent: agents as a batch dimension
        s_rep = s.unsqueeze(1).expand(B, M, H).reshape(B * M, H)
        ctx_a, word_attn = self.word_attention(
            s_rep, self.flat_keys(keys), mask.reshape(B * M, L),
            projected_keys=state["proj_keys"].reshape(B * M, L, -1))               # eqs. (7), (8)
        ctx_a = ctx_a.view(B, M, H)                                                  # c_a^t
        context, agent_attn = self.agent_attention(s, ctx_a, state["agent_mask"])   # eqs. (9), (10)
        carried = {"s": s, "x": x, "context": context, "prev_context": state["context"], "ctx_a": ctx_a,
                   "word_attn": word_attn.view(B, M, L), "agent_attn": agent_attn}
        return {**state, "h": s, "c": c, "context": context}, carried

    def flat_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """The agents' keys (batch, M, L, H) as one batch of batch*M sources (batch*M, L, H), so
        that one word attention serves every agent."""
        B, M, L, H = keys.shape
        return keys.reshape(B * M, L, H)

    def vocab_logits(self, features: torch.Tensor) -> torch.Tensor:
        """MLP([s_t; c*_t; c*_{t-1}]) of eq. (12) (or of [s_t; c*_t], eq. 11): the logits of P_voc,
        W_out (W_h u + b_h) + b_out."""
        return self.out(self.out_hidden(features))                              # W_out (W_h u + b_h) + b_out

    def readout_inputs(self, r: dict):
        """What every readout starts from: the vocabulary logits (eq. 12 / 11), each agent's
        generation probability p_a (eq. 13, (..., M, 1)) and the step's ``info``."""
        s, x, ctx_a = r["s"], r["x"], r["ctx_a"]
        feats = [s, r["context"], r["prev_context"]] if self.contextual else [s, r["context"]]
        logits = self.vocab_logits(torch.cat(feats, -1))                                # eq. (12) / (11)
        p_gen = torch.sigmoid(self.p_gen_linear(torch.cat([ctx_a, per_agent(s, ctx_a), per_agent(x, ctx_a)], -1)))
        info = {"word_attn": r["word_attn"], "agent_attn": r["agent_attn"], "p_gen": p_gen.squeeze(-1), "s": s}
        return logits, p_gen, info                                                        # p_gen: eq. (13)

    def readout(self, r: dict, state: dict):
        """The output of one step (tensors (batch, ...)) or of all steps at once ((batch, T, ...)):
        P_voc (eq. 11 / 12), p_gen (eq. 13), each agent's distribution (eq. 14) and their mix
        (eq. 15).  Returns ``(log P, info)``."""
        logits, p_gen, info = self.readout_inputs(r)
        n_oov = state["oov_mask"].size(1)
        p_vocab = per_agent(torch.softmax(logits, -1), r["ctx_a"])
        p_agents = final_distribution(p_vocab, r["word_attn"], p_gen, state["src_ext"], n_oov)  # eq. (14)
        return safe_log(mix_agents(p_agents, r["agent_attn"])), info                           # eq. (15)

    def step(self, y_prev: torch.Tensor, state: dict):
        """One decoder step.  ``y_prev`` (batch,) holds extended ids; ids >= V are read as UNK."""
        new_state, r = self.recur(self.embed(y_prev), state)
        log_probs, info = self.readout(r, new_state)
        return log_probs, new_state, info

    def forward(self, batch, log_probs: bool = True) -> dict:
        """Teacher forcing, step by step.  Returns ``log_probs`` (batch, T, V + n_oov), ``word_attn``
        (batch, T, agents, len), ``agent_attn`` and ``p_gen`` (batch, T, agents), and the
        decoder states ``s`` (batch, T, H) (for the semantic cohesion loss).  ``log_probs=False``
        lets the fast model (:mod:`dca_course.fast`) skip log P when a loss reads log P(y*_t)
        alone; this code always computes it."""
        return teacher_forcing(self, batch)
