"""A tanh in the vocabulary "MLP" of Deep Communicating Agents: the course's addition (an
experiment), not the paper's.

Hook: **the vocabulary MLP's hidden layer** (:class:`~dca_course.models.extensions.hooks.DCAExtension`).
Celikyilmaz et al. name an MLP in eqs. (11)-(12) and give neither its layers nor its activation;
the DCA's own is the pointer-generator's two linear maps.  This extension puts a tanh between them::

    P_voc = softmax(W_out tanh(W_h [s_t; c*_t; c*_{t-1}] + b_h) + b_out)               (12, with tanh)

(``--vocab-mlp tanh`` on the command line; ``results/dca_vocab_mlp.md`` holds its runs.)
"""
from __future__ import annotations

import torch

from .hooks import DCAExtension


class VocabTanh(DCAExtension):
    name = "vocab_tanh"

    def vocab_hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(hidden)
