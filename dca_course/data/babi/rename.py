"""Training stories with their names changed: a course addition that trains a DMN on the rule of a
task rather than on its training stories' particular words (``--rename-entities``; the protocol's
version 6 cure ``rename_entities``, ``results/babi_protocol.md``).

A bAbI task's logic does not depend on who moved or which room they went to: rename every person,
place and object of a story consistently (the same new word for an old word everywhere in the
story, the question and the answer) and the answer stays right.  :class:`EntityRenamer` draws, for
every training question, one such renaming within each kind of :data:`KINDS` and applies it to a
:class:`~dca_course.data.babi.DMNBatch`, so each epoch reads stories it has not read in those words.
The held-out stories and the test are never renamed.

Which words are of one kind is fixed here, not learned: a kind's words must be interchangeable in
every task they appear in.  So the people are split by the pronoun that refers to them (tasks 11
and 13 say "she" and "he"), the animals of tasks 15 and 16 are not renamed (their singular and plural
forms are different words: "wolf", "wolves"), and in task 20 places and objects keep their words,
since its answers tie them to fixed motives ("tired" sends a person to the bedroom).
"""
from __future__ import annotations

from dataclasses import replace

import torch

#: The kinds renamed, each within itself (words not in a task's vocabulary are left out).
KINDS = {
    "women": ("mary", "sandra", "julie", "emily", "gertrude", "jessica", "winona", "lily"),
    "men": ("john", "daniel", "bill", "fred", "jeff", "brian", "bernhard", "greg", "julius", "antoine", "jason",
            "sumit", "yann"),
    "places": ("kitchen", "garden", "hallway", "bathroom", "office", "bedroom", "park", "cinema", "school"),
    "objects": ("apple", "football", "milk", "pajamas"),
    "shapes": ("triangle", "square", "rectangle", "sphere"),
    "colours": ("red", "blue", "pink", "yellow", "white", "green", "gray"),
    "containers": ("box", "chest", "suitcase", "container", "chocolate"),
}
#: Kinds a task keeps as they are: the task's answers rest on what these words are, not only on
#: what its story says about them.
KEPT = {20: ("places", "objects")}


class EntityRenamer:
    """One consistent renaming per question, within each kind, over ``vocab``'s ids.

    ``tasks``: the bAbI tasks the training examples come from (``KEPT`` applies to them).  Kinds
    with fewer than two words in the vocabulary rename nothing."""

    def __init__(self, vocab, tasks=()):
        kept = {kind for t in tasks for kind in KEPT.get(t, ())}
        self.vocab_size = len(vocab)
        self.kinds = {}
        for kind, words in KINDS.items():
            ids = [vocab.stoi[w] for w in words if w in vocab.stoi]
            if kind not in kept and len(ids) > 1:
                self.kinds[kind] = torch.tensor(ids)

    def draw(self, n: int, device=None, generator: torch.Generator | None = None) -> torch.Tensor:
        """(n, V) maps: row b sends every id to itself, except each kind's ids, which a random
        permutation sends to one another."""
        maps = torch.arange(self.vocab_size).repeat(n, 1)
        for ids in self.kinds.values():
            order = torch.rand(n, len(ids), generator=generator).argsort(dim=1)   # a permutation per row
            maps[:, ids] = ids[order]
        return maps.to(device) if device is not None else maps

    def __call__(self, batch, generator: torch.Generator | None = None):
        """``batch`` with each question's story, question and answer renamed by its own draw
        (the fact positions, masks and supporting facts are unchanged)."""
        if not self.kinds:
            return batch
        maps = self.draw(batch.size, batch.story.device, generator)
        return _renamed(batch, maps)


def _renamed(batch, maps: torch.Tensor):
    """``batch`` with row b's word ids sent through ``maps[b]``."""
    def send(ids: torch.Tensor) -> torch.Tensor:
        flat = ids.reshape(ids.size(0), -1)
        return maps.gather(1, flat).reshape(ids.shape)

    return replace(batch, story=send(batch.story), question=send(batch.question), answer=send(batch.answer),
                   sentences=send(batch.sentences))
