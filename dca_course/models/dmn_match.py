"""Which words of a fact are words of the question: the DMN's word-match read (an option of this
course, in neither DMN paper; :mod:`dca_course.models.dmn` builds the model with it).

bAbI's relational tasks turn on *where* the question's names sit in a fact.  Path finding (task
19): "the kitchen is north of the office" answers "how do you go from the kitchen ..." with ``s``,
but "the office is north of the kitchen" answers it with ``n``: the same words, the start room on
the other side.  A fact vector says which rooms a fact names, but the answer can only learn that
the start room is on the left by seeing every room on the left with every question: on 1,000
training questions it learns the stories instead (train 90%, test 34%).

The word-match read gives it that comparison directly, and the same for every name.  For each fact
``t`` a binary matrix

    R_t[i, j] = 1  if word i of fact t is word j of the question (neither is padding)

over the first ``MATCH_WORDS`` words of each, and each pass reads it with its own attention::

    x^i = sum_t g^i_t R_t          (MATCH_WORDS**2 numbers: pass i's fact, as a pattern of matches)

which joins the memory update, ``m^i = ReLU(W^i [m^{i-1}; e^i; q; x^i] + b^i)`` (the DMN's GRU
update reads ``[e^i; x^i]``).  "Word 2 of the fact is word 7 of the question" means the start room
is the fact's subject whatever the room is called: a pattern that carries over to new stories.
It is DrQA's exact-match feature (Chen et al. 2017, "Reading Wikipedia to Answer Open-Domain
Questions", section 3.1: does a passage word occur in the question?) kept with its positions.
"""
from __future__ import annotations

import torch

from ..data.vocab import Vocab

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
