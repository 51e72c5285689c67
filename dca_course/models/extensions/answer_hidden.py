"""A hidden layer in the DMN's answer module: the course's addition, in neither paper.

Hook: **the answer's hidden layer** (:class:`~dca_course.models.extensions.hooks.DMNExtension`).
The paper's answer module reads the answer GRU's state a_t with one linear layer,
y_t = softmax(W^(a) a_t).  This extension puts a ReLU layer of the model's size between them::

    y_t = softmax(W^(a) ReLU(W^(h) a_t + b^(h)))

so the answer can combine what the memory holds (two relations of bAbI task 17 or 18, the objects
a person holds in task 7) before it is read out as a word.  It exists for the protocol's version 6
cure ``answer_hidden`` (``results/babi_protocol.md``): whether tasks 7, 17 and 18, whose passes find
their facts, lose at this read-out.
"""
from __future__ import annotations

import torch
from torch import nn

from .hooks import DMNExtension


class AnswerHidden(DMNExtension):
    """A ReLU layer (H -> H) between the answer GRU's state and W^(a) (made with the extension's
    other layers: after the input module, before the gate)."""

    name = "answer_hidden"

    def build(self, model: nn.Module) -> None:
        self.hidden = nn.Linear(model.hidden_size, model.hidden_size)          # W^(h), b^(h)

    def answer_hidden(self, a: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.hidden(a))
