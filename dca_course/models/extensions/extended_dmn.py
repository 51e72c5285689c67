"""The DMN with the course's additions: :class:`ExtendedDMN`, the paper model
(:class:`~dca_course.models.dmn.DMN`) calling its extensions (modules of class
:class:`~dca_course.models.extensions.hooks.DMNExtension`) at their hooks.

It changes only what the hooks need: the layers (each extension makes its own after the input
module, before the gate, and widens z and the memory update's input by its ``gate_width`` and
``memory_width``), the gate's features (z with the extensions' features appended, and a second
look), what the episodes read and the memory update's input ([e^i; x^i]).
"""
from __future__ import annotations

import torch

from ..dmn import DMN, read_question, stack_passes
from .hooks import DMNExtension
from .named import make_extensions


class ExtendedDMN(DMN):
    """:class:`~dca_course.models.dmn.DMN` with ``extensions`` (:class:`DMNExtension` modules or
    their names, in the order given: :func:`~dca_course.models.extensions.make_extensions`); the
    other arguments are the DMN's."""

    def __init__(self, vocab_size: int, emb_size: int = 64, hidden_size: int = 64, *, extensions=(), **choices):
        self._asked = tuple(extensions)          # made into layers by make_memory_module, below
        super().__init__(vocab_size, emb_size, hidden_size, **choices)
        del self._asked
        self.config["extensions"] = list(self.extensions)

    def make_memory_module(self, z_size: int, e_size: int) -> None:
        # the extensions make their layers here, after the input module and before the gate, where
        # the layers of the switches they replace were made (a seed gives them the same initial weights)
        self.extensions = make_extensions(self._asked, DMNExtension)
        for ext in self.extensions.values():
            ext.build(self)
        if sum(type(ext).episode_input is not DMNExtension.episode_input for ext in self.extensions.values()) > 1:
            raise ValueError("at most one extension may say what the episodes read")
        if sum(type(ext).question_reader is not DMNExtension.question_reader for ext in self.extensions.values()) > 1:
            raise ValueError("at most one extension may read the question")
        if sum(type(ext).answer_hidden is not DMNExtension.answer_hidden for ext in self.extensions.values()) > 1:
            raise ValueError("at most one extension may give the answer a hidden layer")
        super().make_memory_module(z_size + sum(e.gate_width for e in self.extensions.values()),
                                   e_size + sum(e.memory_width for e in self.extensions.values()))

    def gate_scores(self, c: torch.Tensor, m: torch.Tensor, q: torch.Tensor, extra=()) -> torch.Tensor:
        """The DMN's gate over z(c, m, q) with ``extra``, the extensions' gate features ((batch,
        facts, k) each), appended."""
        z = self.features(c, m, q)
        if extra:
            z = torch.cat([z, *(f.to(z.dtype) for f in extra)], dim=-1)
        return self.gate(z)

    def update_memory(self, i: int, m: torch.Tensor, e: torch.Tensor, q: torch.Tensor, extra=()) -> torch.Tensor:
        """The DMN's memory update with ``extra``, the extensions' inputs x^i ((batch, k) each),
        read beside e^i: GRU([e^i; x^i], m^{i-1}) or ReLU(W^i [m^{i-1}; e^i; q; x^i] + b^i)."""
        if self.memory_update == "gru":
            return super().update_memory(i, m, torch.cat([e, *extra], dim=-1), q)
        return torch.relu(self.memory_layers[i - 1](torch.cat([m, e, q, *extra], dim=-1)))

    def answer_step(self, y_prev: torch.Tensor, q: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The DMN's answer step, W^(a) reading what an extension makes of a_t (hook *the answer's
        hidden layer*): a_t = GRU([L[y_{t-1}]; q], a_{t-1}), y_t = softmax(W^(a) hidden(a_t))."""
        a = self.answer_cell(torch.cat([self.embedding(y_prev), q], dim=-1), a)
        h = a
        for ext in self.extensions.values():
            h = ext.answer_hidden(h)
        return a, self.answer_out(self.dropout(h))

    def encode_question(self, batch) -> torch.Tensor:
        """The DMN's question module, with the GRU an extension gives (hook *the question's reader*)
        in place of the input module's."""
        gru = next((r for r in (ext.question_reader() for ext in self.extensions.values()) if r is not None), None)
        if gru is None:
            return super().encode_question(batch)
        outputs, _ = gru(self.dropout(self.embedding(batch.question)))   # (batch, q_len, H)
        return read_question(outputs, batch.question_len)

    def episode_inputs(self, batch, c: torch.Tensor) -> torch.Tensor:
        """What the episodes read: the facts c, or what an extension gives in their place (hook
        *what the episode reads*), while the gates still compare c."""
        for ext in self.extensions.values():
            content = ext.episode_input(self, batch, c)
            if content is not None:
                return content
        return c

    def memory(self, c: torch.Tensor, q: torch.Tensor, mask: torch.Tensor,
               content: torch.Tensor | None = None, readings: dict | None = None) -> dict:
        """The DMN's passes; the gates compare ``c``, the episodes read ``content`` (default: ``c``).
        ``readings``: {extension name: what its ``begin`` read of the story}, for the extensions'
        per-pass hooks (gate features and their second look, memory-update input)."""
        content = c if content is None else content
        readings = readings or {}
        gate_exts = [(ext, readings.get(name)) for name, ext in self.extensions.items() if ext.gate_width]
        memory_exts = [(ext, readings.get(name)) for name, ext in self.extensions.items() if ext.memory_width]
        lookers = {k for k, (ext, _) in enumerate(gate_exts)
                   if type(ext).second_look is not DMNExtension.second_look}
        m, g, passes = q, None, []
        for i in range(1, self.passes + 1):
            extra = [ext.gate_features(r, g) for ext, r in gate_exts]   # from g^{i-1} (None in pass 1)
            scores = self.gate_scores(c, m, q, extra)                   # (batch, facts)
            if lookers:                                                 # an extension's second look
                first = self.gates_from_scores(scores, mask)
                extra = [ext.second_look(r, g, first) if k in lookers else e
                         for k, ((ext, r), e) in enumerate(zip(gate_exts, extra))]
                scores = self.gate_scores(c, m, q, extra)
            g = self.gates_from_scores(scores, mask)
            e = self.episode(content, g)                                # (batch, H)
            m = self.update_memory(i, m, e, q, [ext.memory_input(r, g) for ext, r in memory_exts])
            passes.append((m, e, scores, g))
        return stack_passes(q, passes)

    def read(self, batch) -> tuple[torch.Tensor, torch.Tensor, dict]:
        c = self.encode_story(batch)                                    # (batch, facts, H)
        q = self.encode_question(batch)                                 # (batch, H)
        content = self.episode_inputs(batch, c)
        readings = {name: ext.begin(self, batch, c) for name, ext in self.extensions.items()}
        return c, q, self.memory(c, q, batch.fact_mask, content, readings)
