"""Where the course's additions plug into a paper's model: the hooks, one base class per model.

A paper model's subclass (:class:`~dca_course.models.extensions.ExtendedDMN`,
:class:`~dca_course.models.extensions.ExtendedDCA`) takes ``extensions=(...)``, modules (or their
names) of the classes below, and calls each at the points named here, and nowhere else.  Each
extension is one module of :mod:`dca_course.models.extensions`: the hook it uses, that it is the
course's addition (in neither paper), and its equation.
"""
from __future__ import annotations

import torch
from torch import nn


class DMNExtension(nn.Module):
    """A course addition to the DMN (:class:`~dca_course.models.extensions.ExtendedDMN`).  It calls:

    * ``build(model)``, once, in its constructor, after the input module (L, the input GRU, DMN+'s
      fusion GRU) and before the gate (W^(b), W^(1), W^(2)): an extension makes its layers here,
      and the DMN then sizes its own from ``gate_width`` and ``memory_width``, so that every layer
      is made in one order whichever extensions are on (a seed gives each layer the same
      initial weights).  ``model`` is the DMN being built; keep no reference to it;
    * ``episode_input(model, batch, c)``, once a forward: **what the episodes read**, (batch,
      facts, H) in place of the facts c the gates compare (at most one extension overrides it);
    * ``begin(model, batch, c)``, once a forward: what the extension reads of the story, handed to
      its per-pass hooks as ``reading``;
    * ``gate_features(reading, prev_gates)``, every pass, when ``gate_width > 0``: **extra gate
      features**, (batch, facts, gate_width) appended to z(c, m, q); ``prev_gates`` (batch, facts)
      are the previous pass's gates g^{i-1} (None in pass 1);
    * ``second_look(reading, prev_gates, first_gates)``, every pass, after the gate has scored the
      facts, when the extension overrides it: the extension's gate features **for a second look**, (batch,
      facts, gate_width) in place of what ``gate_features`` gave, from the first look's gates
      (batch, facts); when an extension gives them, the gate scores the facts again with them and
      the second scores and gates are the pass's;
    * ``memory_input(reading, gates)``, every pass, when ``memory_width > 0``: **extra memory-update
      input**, (batch, memory_width) read beside e^i: m^i = GRU([e^i; x^i], m^{i-1}) or
      ReLU(W^i [m^{i-1}; e^i; q; x^i] + b^i), with ``gates`` the pass's own g^i.

    * ``question_reader()``, once a forward, when the extension overrides it: **the question's
      reader**, the GRU that reads the question's embedded words in place of the input module's GRU
      (at most one extension overrides it).
    * ``answer_hidden(a)``, at every answer step, when the extension overrides it: **the answer's
      hidden layer**, what W^(a) reads in place of the answer GRU's state a_t (batch, H) -> (batch, H):
      y_t = softmax(W^(a) answer_hidden(a_t)) (at most one extension overrides it).

    ``name`` is how a checkpoint's ``model_config`` records the extension (``extensions`` takes
    names as well as modules).
    """

    name: str = ""
    gate_width: int = 0       # numbers appended to z for every fact
    memory_width: int = 0     # numbers read beside e^i by the memory update

    def build(self, model: nn.Module) -> None:
        pass

    def episode_input(self, model: nn.Module, batch, c: torch.Tensor) -> torch.Tensor | None:
        return None

    def begin(self, model: nn.Module, batch, c: torch.Tensor):
        return None

    def question_reader(self) -> nn.Module | None:
        return None

    def answer_hidden(self, a: torch.Tensor) -> torch.Tensor:
        return a

    def gate_features(self, reading, prev_gates: torch.Tensor | None) -> torch.Tensor:
        raise NotImplementedError

    def second_look(self, reading, prev_gates: torch.Tensor | None, first_gates: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def memory_input(self, reading, gates: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class DCAExtension(nn.Module):
    """A course addition to Deep Communicating Agents (:class:`~dca_course.models.extensions.ExtendedDCA`).
    It calls ``vocab_hidden(h)`` on the hidden layer of the vocabulary "MLP" of eqs. (11)-(12),
    h = W_h u + b_h, before W_out: P_voc = softmax(W_out vocab_hidden(h) + b_out)."""

    name: str = ""

    def vocab_hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden
