"""Dynamic Memory Networks (Kumar et al. 2016, "Ask Me Anything"), with the episodic memory of
DMN+ (Xiong et al. 2016, "Dynamic Memory Networks for Visual and Textual Question Answering") as
an option: the papers' equations and choices, nothing else.

**Input module** (Kumar 2.1).  One GRU over the story's words, an end-of-sentence mark after each
sentence; fact ``c_t`` is the state at sentence t's mark::

    h_i = GRU(L[w_i], h_{i-1}),        c_t = h_{end of sentence t}

``input_module="fusion"`` is DMN+'s (Xiong 3.1): sentence t is ``f_t = sum_j l_j * L[w_j]``
(:func:`position_encoding`), and a bidirectional GRU over the sentences gives c_t = forward + backward.

**Question module** (2.2).  The input module's GRU (the same ``L``, so facts and question share a
space) read over the question; ``q`` is its last state.

**Episodic memory** (2.3).  Pass i gates every fact from a feature vector (m^0 = q)::

    z(c, m, q) = [c, m, q, c*q, c*m, |c-q|, |c-m|, c^T W^(b) q, c^T W^(b) m]          (features)
    G(c, m, q) = sigma(W^(2) tanh(W^(1) z(c, m, q) + b^(1)) + b^(2)),   g^i_t = G(c_t, m^{i-1}, q)
    h^i_t = g^i_t GRU(c_t, h^i_{t-1}) + (1 - g^i_t) h^i_{t-1},      e^i = h^i_{T_C}  (episode)
    m^i = GRU(e^i, m^{i-1})                                                         (memory)

**Passes.**  T_M = ``passes`` is fixed when the model is made: every question gets exactly that
many.  Kumar et al. also append an end-of-passes representation to the facts and stop when a gate
picks it; this DMN has no such marker.  The recipe sets T_M per bAbI task to the supporting facts
of its most demanding training question, capped at ``--max-passes`` (3, this course's cap).

**Answer module** (2.4).  A GRU decoder from the last memory, ``a_0 = m^{T_M}``,
``a_t = GRU([y_{t-1}; q], a_{t-1})``, ``y_t = softmax(W^(a) a_t)``; ``answer="word"`` takes its first
step (one-word answers: every bAbI task but 8 and 19), ``"sequence"`` runs it to ``</s>``.
``y_{t-1}`` enters as the embedding ``L[w]`` of a word (the gold one in training, the argmax when
answering); ``y_0`` is ``<s>``'s, so a one-word answer is the sequence decoder's first step.

**Gate supervision.**  The cross-entropy of pass i's gates against the i-th supporting fact (a
question with more supporting facts than passes teaches its last pass all the rest): a binary
cross-entropy per fact for sigmoid gates, ``-log a_supporting`` for DMN+'s softmax
(:func:`gate_supervision_loss`).

**DMN+** (``variant="dmn+"``, Xiong 3.3).  The gates of a pass are a softmax over the facts (they
compete and sum to 1), and the episode is an attention-GRU (:class:`dca_course.nn.AttentionGRUCell`)
whose update gate is the attention weight: ``h_t = g_t h~_t + (1 - g_t) h_{t-1}``,
``h~_t = tanh(W c_t + r_t * (U h_{t-1} + b))``.  ``variant`` changes only this.  Two more DMN+
choices, each its own option: ``gate_features="dmn+"``, the comparisons alone,
``[c*q, c*m, |c-q|, |c-m|]`` (:func:`dmn_plus_features`); ``memory_update="relu"``, untied weights
per pass (after Sukhbaatar et al. 2015)::

    m^i = ReLU(W^i [m^{i-1}; e^i; q] + b^i)                                         (DMN+ memory)

**Batches and masks.**  :class:`DMNBatch`, :func:`make_dmn_batch`, :func:`length_buckets` and
:func:`babi_vocab` live with the bAbI data (:mod:`dca_course.data.babi.batching`); the gate's
features and supervision in :mod:`.dmn_gate`, scoring in :mod:`.dmn_eval`.  Word ids ``<pad>``,
``<s>`` and ``</s>`` are every course vocabulary's (:class:`dca_course.data.vocab.Vocab`).
Padded facts get exactly zero gate (sigmoid gates times the mask; :func:`dca_course.nn.masked_softmax`
for DMN+), so they leave the episode unchanged.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..data.babi.batching import DMNBatch
from ..data.vocab import Vocab
from ..nn.attention import masked_softmax
from ..nn.gru import AttentionGRUCell
from .dmn_gate import GATE_FEATURES, dmn_features, dmn_plus_features, gate_supervision_loss

VARIANTS = ("dmn", "dmn+")
INPUT_MODULES = ("gru", "fusion")
ANSWER_MODES = ("word", "sequence")


# -- the parts, as functions that can be checked one by one ------------------------------------
def read_facts(outputs: torch.Tensor, fact_pos: torch.Tensor, fact_mask: torch.Tensor) -> torch.Tensor:
    """Input module read-out: the GRU state at each end-of-sentence position.

    outputs (batch, words, hidden), fact_pos/fact_mask (batch, facts) -> (batch, facts, hidden),
    zeros at padded facts.
    """
    idx = fact_pos.unsqueeze(-1).expand(-1, -1, outputs.size(-1))
    return outputs.gather(1, idx) * fact_mask.unsqueeze(-1).to(outputs.dtype)


def read_question(outputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Question module read-out: the GRU state at the question's last word.

    outputs (batch, q_len, hidden), lengths (batch,) -> (batch, hidden).
    """
    last = (lengths - 1).clamp_min(0)
    return outputs[torch.arange(outputs.size(0), device=outputs.device), last]


def position_encoding(lengths: torch.Tensor, max_len: int, dim: int) -> torch.Tensor:
    """Weights l_j of the positional sentence encoding (Sukhbaatar et al. 2015, section 4.1;
    Xiong et al. 2016, section 3.1): ``f = sum_j l_j * E[w_j]`` with

        l_jd = (1 - j/J) - (d/D) (1 - 2j/J)          j = 1..J words, d = 1..D dimensions

    lengths (...,) -> (..., max_len, dim); zero beyond each sentence's length J.
    """
    j = torch.arange(1, max_len + 1, device=lengths.device, dtype=torch.float)[:, None]   # (len, 1)
    d = torch.arange(1, dim + 1, device=lengths.device, dtype=torch.float)[None, :] / dim  # (1, dim)
    n = lengths.to(torch.float)[..., None, None]                                        # (..., 1, 1)
    J = n.clamp_min(1)
    weights = (1 - j / J) - d * (1 - 2 * j / J)
    return weights * (j <= n).to(weights.dtype)


def gated_gru_step(cell: nn.Module, c_t: torch.Tensor, h: torch.Tensor, g_t: torch.Tensor) -> torch.Tensor:
    """The DMN episode step: h_t = g_t GRU(c_t, h_{t-1}) + (1 - g_t) h_{t-1}.

    ``cell`` is any GRU cell with ``cell(x, h)`` (``torch.nn.GRUCell`` or
    :class:`dca_course.nn.GRUCell`); g_t (batch,) or (batch, 1).
    """
    g_t = g_t.reshape(-1, 1)
    return g_t * cell(c_t, h) + (1 - g_t) * h


def stack_passes(q: torch.Tensor, passes: list) -> dict:
    """The episodic memory's output from m^0 = q and each pass's ``(m^i, e^i, scores, g^i)``:
    ``memories`` (batch, passes + 1, H), ``episodes`` (batch, passes, H), ``scores`` and ``gates``
    (batch, passes, facts)."""
    memories, episodes, scores, gates = zip(*passes)
    return {"memories": torch.stack([q, *memories], 1), "episodes": torch.stack(episodes, 1),
            "scores": torch.stack(scores, 1), "gates": torch.stack(gates, 1)}


# -- the model ---------------------------------------------------------------------------------
class DMN(nn.Module):
    """A Dynamic Memory Network (see the module docstring for the modules and equations).

    ``forward(batch)`` returns a dict with

    * ``"logits"``: (batch, V) for ``answer="word"``, (batch, a_len, V) for ``"sequence"``
      (teacher-forced on ``batch.answer``);
    * ``"gates"``: (batch, passes, facts), the gates g^i_t (zero at padded facts);
    * ``"scores"``: (batch, passes, facts), their logits (for gate supervision);
    * ``"facts"`` (batch, facts, H), ``"question"`` (batch, H), ``"memories"`` (batch, passes + 1, H)
      holding m^0 = q, m^1, ..., ``"episodes"`` (batch, passes, H).

    The constructor takes the papers' choices only.  ``max_answer``: the longest answer the
    sequence decoder gives when it feeds back its own words (without ``</s>``).
    """

    pad_id, bos_id, eos_id = Vocab.pad_id, Vocab.bos_id, Vocab.eos_id
    max_answer = 4

    def __init__(self, vocab_size: int, emb_size: int = 64, hidden_size: int = 64, *, passes: int = 3,
                 variant: str = "dmn", answer: str = "word", input_module: str = "gru",
                 gate_features: str = "dmn", memory_update: str = "gru", dropout: float = 0.0):
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
        if answer not in ANSWER_MODES:
            raise ValueError(f"answer must be one of {ANSWER_MODES}, not {answer!r}")
        if memory_update not in ("gru", "relu"):
            raise ValueError(f"memory_update must be 'gru' or 'relu', not {memory_update!r}")
        if input_module not in INPUT_MODULES:
            raise ValueError(f"input_module must be one of {INPUT_MODULES}, not {input_module!r}")
        if gate_features not in GATE_FEATURES:
            raise ValueError(f"gate_features must be one of {GATE_FEATURES}, not {gate_features!r}")
        if passes < 1:
            raise ValueError(f"passes must be >= 1, not {passes}")
        self.config = dict(vocab_size=vocab_size, emb_size=emb_size, hidden_size=hidden_size, passes=passes,
                           variant=variant, answer=answer, input_module=input_module, gate_features=gate_features,
                           memory_update=memory_update, dropout=dropout)
        H = hidden_size
        self.vocab_size, self.hidden_size, self.passes = vocab_size, H, passes
        self.variant, self.answer_mode, self.gate_features = variant, answer, gate_features
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=self.pad_id)  # L
        self.input_module = input_module
        self.input_gru = nn.GRU(emb_size, H, batch_first=True)                       # 2.1
        # DMN+'s input fusion layer: a bidirectional GRU over positionally encoded sentences.
        self.fusion_gru = (nn.GRU(emb_size, H, batch_first=True, bidirectional=True)
                           if input_module == "fusion" else None)
        self.memory_update = memory_update
        self.make_memory_module(7 * H + 2 if gate_features == "dmn" else 4 * H, H)
        self.answer_out = nn.Linear(H, vocab_size)                                   # W^(a)
        # a_t = GRU([y_{t-1}; q], a_{t-1}).  Made after W^(a), where it was when only the sequence
        # decoder had it, so that a seed still gives that decoder the same initial weights.
        self.answer_cell = nn.GRUCell(emb_size + H, H)
        self.dropout = nn.Dropout(dropout)

    def make_memory_module(self, z_size: int, e_size: int) -> None:
        """The episodic memory's layers, in this order: W^(b), the gate's W^(1), b^(1) (reading z,
        ``z_size`` numbers a fact) and W^(2), b^(2), the episode's cell, and the memory update
        (reading an episode of ``e_size`` numbers)."""
        H = self.hidden_size
        self.W_b = nn.Parameter(torch.empty(H, H))                                   # W^(b)
        nn.init.xavier_uniform_(self.W_b)
        self.gate_hidden = nn.Linear(z_size, H)                                      # W^(1), b^(1)
        self.gate_out = nn.Linear(H, 1)                                              # W^(2), b^(2)
        if self.variant == "dmn":
            self.episode_cell = nn.GRUCell(H, H)
        else:
            self.episode_cell = AttentionGRUCell(H, H)
        if self.memory_update == "gru":
            self.memory_cell = nn.GRUCell(e_size, H)         # m^i = GRU(e^i, m^{i-1}), one for all passes
        else:   # DMN+: m^i = ReLU(W^i [m^{i-1}; e^i; q] + b^i), untied: pass i has its own W^i, b^i
            self.memory_layers = nn.ModuleList(nn.Linear(2 * H + e_size, H) for _ in range(self.passes))

    # input and question modules
    def encode_story(self, batch: DMNBatch) -> torch.Tensor:
        """Input module: (batch, facts, H) fact vectors c_t, zero at padded facts."""
        if self.input_module == "fusion":
            return self.encode_story_fusion(batch)
        words = self.dropout(self.embedding(batch.story))              # (batch, words, emb)
        outputs, _ = self.input_gru(words)                             # (batch, words, H)
        # A GRU runs left to right, so the padding after a story never changes its states.
        return self.dropout(read_facts(outputs, batch.fact_pos, batch.fact_mask))

    def encode_story_fusion(self, batch: DMNBatch) -> torch.Tensor:
        """DMN+'s input module (Xiong et al. section 3.1): each sentence is a positionally
        weighted sum of its word embeddings (:func:`position_encoding`), then a bidirectional
        GRU over the sentences lets each fact see its neighbours; c_t is the sum of its
        forward and backward states (Xiong et al. eqs. (1)-(3))."""
        f = self.sentence_vectors(batch)                               # (batch, facts, emb)
        n_facts = batch.fact_mask.sum(1).clamp_min(1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(f, n_facts, batch_first=True, enforce_sorted=False)
        out, _ = self.fusion_gru(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=f.size(1))
        c = out[..., : self.hidden_size] + out[..., self.hidden_size:]  # forward + backward
        return self.dropout(c * batch.fact_mask.unsqueeze(-1).to(c.dtype))

    def sentence_vectors(self, batch: DMNBatch) -> torch.Tensor:
        """Each sentence alone, its positionally weighted word embeddings summed: (batch, facts, emb)."""
        emb = self.dropout(self.embedding(batch.sentences))            # (batch, facts, len, emb)
        weights = position_encoding(batch.sentence_len, emb.size(2), emb.size(3))
        return (weights.to(emb.dtype) * emb).sum(2)

    def encode_question(self, batch: DMNBatch) -> torch.Tensor:
        """Question module: q, the GRU's state at the question's last word: (batch, H)."""
        outputs, _ = self.input_gru(self.dropout(self.embedding(batch.question)))  # (batch, q_len, H): 2.2
        return read_question(outputs, batch.question_len)

    # episodic memory module
    def features(self, c: torch.Tensor, m: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        """z(c, m, q): (batch, facts, 7H + 2), or DMN+'s comparisons (batch, facts, 4H)."""
        if self.gate_features == "dmn":
            return dmn_features(c, m, q, self.W_b)
        return dmn_plus_features(c, m, q)

    def gate(self, z: torch.Tensor) -> torch.Tensor:
        """W^(2) tanh(W^(1) z + b^(1)) + b^(2): (batch, facts), before sigma / softmax."""
        return self.gate_out(torch.tanh(self.gate_hidden(z))).squeeze(-1)

    def gate_scores(self, c: torch.Tensor, m: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        """G's logits for every fact: W^(2) tanh(W^(1) z(c, m, q) + b^(1)) + b^(2), (batch, facts)."""
        return self.gate(self.features(c, m, q))

    def gates_from_scores(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Sigmoid gates (DMN) or a softmax over the facts (DMN+); exactly 0 at padded facts."""
        if self.variant == "dmn+":
            return masked_softmax(scores, mask)
        return torch.sigmoid(scores) * mask.to(scores.dtype)

    def episode(self, c: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """e^i: the gated GRU (DMN) or attention-GRU (DMN+) run over the facts; (batch, H)."""
        h = c.new_zeros(c.size(0), self.hidden_size)
        # unbind, not c[:, t]: the backward of each c[:, t] would write a zero gradient for all
        # the facts, once per fact
        for c_t, g_t in zip(c.unbind(1), g.unbind(1)):
            if self.variant == "dmn+":
                h = self.episode_cell(c_t, h, g_t)
            else:
                h = gated_gru_step(self.episode_cell, c_t, h, g_t)
        return h

    def update_memory(self, i: int, m: torch.Tensor, e: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        """m^i from m^{i-1} and the episode e^i of pass ``i`` (1-based): the DMN's shared GRU, or
        DMN+'s ReLU layer of pass ``i`` (untied weights)."""
        if self.memory_update == "gru":
            return self.memory_cell(e, m)                               # m^i = GRU(e^i, m^{i-1})
        return torch.relu(self.memory_layers[i - 1](torch.cat([m, e, q], dim=-1)))   # ReLU(W^i [m; e; q] + b^i)

    def memory(self, c: torch.Tensor, q: torch.Tensor, mask: torch.Tensor) -> dict:
        """T_M passes of the episodic memory over the facts c, m^0 = q (:func:`stack_passes`)."""
        m, passes = q, []
        for i in range(1, self.passes + 1):
            scores = self.gate_scores(c, m, q)                          # (batch, facts)
            g = self.gates_from_scores(scores, mask)                    # g^i
            e = self.episode(c, g)                                      # e^i: (batch, H)
            m = self.update_memory(i, m, e, q)                          # m^i
            passes.append((m, e, scores, g))
        return stack_passes(q, passes)

    # answer module
    def answer_step(self, y_prev: torch.Tensor, q: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One decoder step: a_t = GRU([L[y_{t-1}]; q], a_{t-1}) and the logits W^(a) a_t.

        y_prev (batch,) word ids, q and a (batch, H) -> (a_t (batch, H), logits (batch, V)).
        """
        a = self.answer_cell(torch.cat([self.embedding(y_prev), q], dim=-1), a)
        return a, self.answer_out(self.dropout(a))                      # y_t = softmax(W^(a) a_t)

    def answer_logits(self, m: torch.Tensor, q: torch.Tensor, answer: torch.Tensor | None = None) -> torch.Tensor:
        """Logits of the answer: (batch, V) for one word, (batch, steps, V) for the decoder.

        Both start at a_0 = m with y_0 = ``<s>``; ``"word"`` takes one step.  The sequence decoder
        is teacher-forced on ``answer`` (batch, steps) when given (the gold word is fed back);
        otherwise it feeds back its own argmax for ``max_answer + 1`` steps.
        """
        y = torch.full((m.size(0),), self.bos_id, dtype=torch.long, device=m.device)   # y_0: <s>
        if self.answer_mode == "word":
            return self.answer_step(y, q, m)[1]                         # softmax(W^(a) GRU([y_0; q], m))
        steps = answer.size(1) if answer is not None else self.max_answer + 1
        a, out = m, []                                                  # a_0 = m
        for t in range(steps):
            a, logits = self.answer_step(y, q, a)
            out.append(logits)
            y = answer[:, t] if answer is not None else logits.argmax(-1)
        return torch.stack(out, 1)

    def read(self, batch: DMNBatch) -> tuple[torch.Tensor, torch.Tensor, dict]:
        """The input, question and episodic-memory modules: (c, q, :meth:`memory`'s dict)."""
        c = self.encode_story(batch)                                    # (batch, facts, H)
        q = self.encode_question(batch)                                 # (batch, H)
        return c, q, self.memory(c, q, batch.fact_mask)

    def forward(self, batch: DMNBatch) -> dict:
        c, q, out = self.read(batch)
        teacher = batch.answer if self.answer_mode == "sequence" else None
        out["logits"] = self.answer_logits(out["memories"][:, -1], q, teacher)
        out["facts"], out["question"] = c, q
        return out

    @torch.no_grad()
    def predict(self, batch: DMNBatch) -> tuple[list[list[int]], torch.Tensor]:
        """Greedy answers as id lists (without ``</s>``), and the gates (batch, passes, facts)."""
        _, q, out = self.read(batch)
        logits = self.answer_logits(out["memories"][:, -1], q)
        if self.answer_mode == "word":
            return [[int(i)] for i in logits.argmax(-1)], out["gates"]
        answers = []
        for row in logits.argmax(-1).tolist():
            ids = []
            for i in row:
                if i == self.eos_id:
                    break
                ids.append(i)
            answers.append(ids)
        return answers, out["gates"]


def xavier_init(model: nn.Module) -> nn.Module:
    """Xiong et al.'s initialisation (section 6.2), a choice Kumar et al. leave open: every weight
    matrix Xavier-uniform (a GRU's per gate, so each gate's block gets its own fan-in and fan-out),
    every bias 0, and the word embeddings as they are (Xiong et al.'s U[-sqrt 3, sqrt 3] has the
    variance of PyTorch's N(0, 1))."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if name.startswith("embedding."):
                continue
            if leaf.startswith("bias"):
                p.zero_()
            elif leaf.startswith(("weight_ih", "weight_hh")):
                for block in p.chunk(3, 0):                        # the reset, update and candidate gates
                    nn.init.xavier_uniform_(block)
            elif p.dim() == 2:
                nn.init.xavier_uniform_(p)
    return model


def dmn_loss(model: nn.Module, batch: DMNBatch, *, gate_supervision: bool = True,
             gate_weight: float = 1.0, variant: str | None = None) -> tuple[torch.Tensor, dict]:
    """Answer cross-entropy (+ ``gate_weight`` x :func:`gate_supervision_loss`); calls ``model(batch)``.

    Calling the model (not its parts) keeps it usable under DistributedDataParallel.
    """
    out = model(batch)
    logits = out["logits"]
    if logits.dim() == 2:
        answer_loss = F.cross_entropy(logits, batch.answer[:, 0])
    else:
        nll = F.cross_entropy(logits.transpose(1, 2), batch.answer, reduction="none")
        mask = batch.answer_mask.to(nll.dtype)
        answer_loss = (nll * mask).sum() / mask.sum().clamp_min(1.0)
    stats = {"answer_loss": float(answer_loss.detach())}
    loss = answer_loss
    if gate_supervision:
        if variant is None:
            variant = getattr(model, "module", model).variant
        gate_loss = gate_supervision_loss(out["scores"], batch.fact_mask, batch.supporting, variant)
        loss = loss + gate_weight * gate_loss
        stats["gate_loss"] = float(gate_loss.detach())
    return loss, stats
