"""Episodes that read each sentence's own encoding: the course's addition, in neither DMN paper.

Hook: **what the episode reads** (:class:`~dca_course.models.extensions.hooks.DMNExtension`).  With
DMN+'s input module (``input_module="fusion"``) the gates still compare the fused facts c_t, but
each episode reads sentence t's own positional encoding f_t = sum_j l_j L[w_j] (Xiong et al. eq.
(1)), projected to the hidden size H when the embedding size differs, so that the memory holds
exactly the sentences chosen::

    h^i_t = AttnGRU(P f_t, h^i_{t-1}, g^i_t)          (P: an H x emb projection, none when emb = H)
"""
from __future__ import annotations

from torch import nn

from .hooks import DMNExtension


class SentenceEpisodes(DMNExtension):
    """The episodes read P f_t (dropout and the fact mask as on c_t) instead of c_t."""

    name = "sentence_episodes"

    def build(self, model):
        if model.input_module != "fusion":
            raise ValueError("sentence_episodes needs DMN+'s positional sentence encoding (input_module='fusion')")
        emb, H = model.embedding.embedding_dim, model.hidden_size
        self.proj = nn.Linear(emb, H, bias=False) if emb != H else None      # P: f_t to the hidden size

    def episode_input(self, model, batch, c):
        f = model.sentence_vectors(batch)                               # f_t: (batch, facts, emb)
        f = self.proj(f) if self.proj is not None else f
        return model.dropout(f * batch.fact_mask.unsqueeze(-1).to(f.dtype))
