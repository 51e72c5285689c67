"""A question GRU with weights of its own: a reading of the DMN that Kumar et al. leave open.

Hook: **the question's reader** (:class:`~dca_course.models.extensions.hooks.DMNExtension`).  The
paper model reads the question with the input module's GRU (its weights shared, the reading of
``results/dmn_paper_details.md``); the text available says only that the word embeddings are
shared.  This extension reads it with a GRU of its own, over the same embeddings L::

    q = GRU_Q(L[w^Q_1], ..., L[w^Q_{T_Q}])      (GRU_Q's weights are not the input GRU's)

It exists for issue 49's diagnosis D3 (``--dmn-question own``): whether sharing the weights costs the
faithful DMN on tasks 2 and 3.
"""
from __future__ import annotations

from torch import nn

from .hooks import DMNExtension


class OwnQuestionGRU(DMNExtension):
    """The question read by a GRU of its own (made with the extension's other layers: after the input
    module, before the gate)."""

    name = "own_question_gru"

    def build(self, model: nn.Module) -> None:
        self.gru = nn.GRU(model.embedding.embedding_dim, model.hidden_size, batch_first=True)

    def question_reader(self) -> nn.Module:
        return self.gru
