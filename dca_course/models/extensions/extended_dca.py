"""Deep Communicating Agents with the course's additions: :class:`ExtendedDCA`, the paper model
(:class:`~dca_course.models.dca.DCA`) calling its extensions (modules of class
:class:`~dca_course.models.extensions.hooks.DCAExtension`) on the vocabulary "MLP"'s hidden layer."""
from __future__ import annotations

import torch

from ..dca import DCA
from .hooks import DCAExtension
from .named import make_extensions


class ExtendedDCA(DCA):
    """:class:`~dca_course.models.dca.DCA` with ``extensions`` (:class:`DCAExtension` modules or
    their names; they have no parameters); the other arguments are the DCA's."""

    def __init__(self, *args, extensions=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.extensions = make_extensions(extensions, DCAExtension)
        self.config["extensions"] = list(self.extensions)

    def vocab_logits(self, features: torch.Tensor) -> torch.Tensor:
        """W_out ext(W_h u + b_h) + b_out: the extensions' ``vocab_hidden`` between the two maps."""
        hidden = self.out_hidden(features)                                      # W_h u + b_h
        for ext in self.extensions.values():
            hidden = ext.vocab_hidden(hidden)
        return self.out(hidden)                                                 # W_out ... + b_out
