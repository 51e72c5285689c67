"""Which words of a fact are words of the question: the DMN's word-match read, the course's
addition, in neither DMN paper.

Hook: **extra memory-update input** (:class:`~dca_course.models.extensions.hooks.DMNExtension`).
For each fact ``t`` a binary matrix

    R_t[i, j] = 1  if word i of fact t is word j of the question (neither is padding)

over the first ``MATCH_WORDS`` words of each, and each pass reads it with its own gates::

    x^i = sum_t g^i_t R_t          (MATCH_WORDS**2 numbers: pass i's fact, as a pattern of matches)
    m^i = ReLU(W^i [m^{i-1}; e^i; q; x^i] + b^i)     (DMN+ memory; the DMN's GRU reads [e^i; x^i])

bAbI's relational tasks turn on *where* the question's names sit in a fact.  Path finding (task
19): "the kitchen is north of the office" answers "how do you go from the kitchen ..." with ``s``,
but "the office is north of the kitchen" answers it with ``n``: the same words, the start room on
the other side.  "Word 2 of the fact is word 7 of the question" says the start room is the fact's
subject whatever the room is called.  It is DrQA's exact-match feature (Chen et al. 2017,
"Reading Wikipedia to Answer Open-Domain Questions", section 3.1: does a passage word occur in the
question?) kept with its positions.
"""
from __future__ import annotations

import torch

from ...data.vocab import Vocab
from .hooks import DMNExtension

#: Words of a fact and of the question the match reads (real bAbI: at most 11 of either).
MATCH_WORDS = 12


def word_match(sentences: torch.Tensor, question: torch.Tensor, pad_id: int,
               size: int = MATCH_WORDS, unk_id: int = Vocab.unk_id) -> torch.Tensor:
    """R: (batch, facts, size * size), ``R[b, t, i * size + j] = 1`` where word ``i`` of fact ``t``
    equals word ``j`` of the question; 0 where either is padding or beyond ``size`` words, and
    where the word is ``<unk>``: two different words outside the vocabulary share that id, so
    their ids being equal says nothing about the words.

    sentences (batch, facts, len) and question (batch, q_len) are word ids.
    """
    s = _first(sentences, size, pad_id)                                 # (batch, facts, size)
    q = _first(question, size, pad_id)                                  # (batch, size)
    known = (s != pad_id) & (s != unk_id)
    same = (s.unsqueeze(-1) == q[:, None, None, :]) & known.unsqueeze(-1)
    return same.flatten(2).float()                                      # (batch, facts, size * size)


def _first(ids: torch.Tensor, size: int, pad_id: int) -> torch.Tensor:
    """The first ``size`` ids along the last axis, padded with ``pad_id`` to exactly ``size``."""
    ids = ids[..., :size]
    if ids.size(-1) < size:
        pad = ids.new_full((*ids.shape[:-1], size - ids.size(-1)), pad_id)
        ids = torch.cat([ids, pad], dim=-1)
    return ids


def match_read(gates: torch.Tensor, match: torch.Tensor) -> torch.Tensor:
    """x^i = sum_t g^i_t R_t: gates (batch, facts), match (batch, facts, M) -> (batch, M)."""
    return torch.einsum("bt,btm->bm", gates, match.to(gates.dtype))


class WordMatch(DMNExtension):
    """R_t once a forward (:func:`word_match`), x^i = sum_t g^i_t R_t into every memory update."""

    name = "word_match"
    memory_width = MATCH_WORDS ** 2

    def begin(self, model, batch, c):
        return word_match(batch.sentences, batch.question, model.pad_id)

    def memory_input(self, reading, gates):
        return match_read(gates, reading)
