"""A vocabulary with special tokens and per-example out-of-vocabulary (OOV) ids.

Copying models (CopyNet, the pointer-generator) can emit a source word that is not in the
vocabulary.  They do it with an *extended vocabulary* made anew for every example
(See et al. 2017, section 2.2): the vocabulary's ``V`` ids, then ids ``V, V+1, ...`` for the
example's own OOV source words, in order of first appearance.

* :meth:`Vocab.encode_source` gives a source's extended ids and its OOV list;
* :meth:`Vocab.encode_target` gives a target's extended ids: a target word that is an OOV of
  *this* source keeps its extended id (the model can copy it); any other unknown word is UNK;
* :meth:`Vocab.decoder_inputs` maps extended ids back to UNK, because the embedding table has
  only ``V`` rows: the decoder can never *read* an id it has no embedding for;
* :func:`extended_to_vocab` is that map on a tensor of ids, the one place it is written: the
  batches, the decoders, the losses and the models all call it.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import torch

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = (PAD, UNK, BOS, EOS)


def extended_to_vocab(ids: torch.Tensor, vocab_size: int, unk_id: int = 1) -> torch.Tensor:
    """Extended ids -> ids in the fixed vocabulary: every id >= ``vocab_size`` becomes ``unk_id``,
    every other id stays.  An embedding table has V rows, so a copied OOV word is read back as UNK
    (a copying model that must know *which* OOV word it wrote, CopyNet's selective read, keeps
    the extended ids beside this)."""
    return torch.where(ids >= vocab_size, torch.full_like(ids, unk_id), ids)


class Vocab:
    """Token <-> id maps.  Ids 0..3 are ``<pad>``, ``<unk>``, ``<s>``, ``</s>``."""

    pad_id, unk_id, bos_id, eos_id = 0, 1, 2, 3

    def __init__(self, tokens: Iterable[str] = ()):
        self.itos: list[str] = list(SPECIALS)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        for tok in tokens:
            if tok not in self.stoi:
                self.stoi[tok] = len(self.itos)
                self.itos.append(tok)

    @classmethod
    def build(cls, texts: Iterable[Sequence[str]], max_size: int | None = None, min_freq: int = 1) -> "Vocab":
        """The ``max_size`` most frequent tokens (specials included in the count).

        Ties are broken alphabetically so that the vocabulary does not depend on the order
        in which examples were read.
        """
        counts = Counter(tok for text in texts for tok in text)
        ranked = sorted((t for t, c in counts.items() if c >= min_freq and t not in SPECIALS),
                        key=lambda t: (-counts[t], t))
        if max_size is not None:
            ranked = ranked[: max(0, max_size - len(SPECIALS))]
        return cls(ranked)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens)"

    # -- plain encoding --------------------------------------------------------------
    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Ids in the fixed vocabulary; unknown tokens become UNK."""
        unk = self.unk_id
        return [self.stoi.get(t, unk) for t in tokens]

    def decode(self, ids: Iterable[int], oovs: Sequence[str] = (), *, strip: bool = True) -> list[str]:
        """Tokens for (possibly extended) ids; stops at ``</s>`` and drops ``<pad>``/``<s>`` if ``strip``."""
        out = []
        V = len(self)
        for i in ids:
            i = int(i)
            if strip and i == self.eos_id:
                break
            if strip and i in (self.pad_id, self.bos_id):
                continue
            if i < V:
                out.append(self.itos[i])
            elif i - V < len(oovs):
                out.append(oovs[i - V])
            else:
                raise IndexError(f"id {i} is beyond the vocabulary ({V}) and this example's {len(oovs)} OOV words")
        return out

    # -- the extended vocabulary -----------------------------------------------------
    def encode_source(self, tokens: Sequence[str]) -> tuple[list[int], list[str]]:
        """Extended ids of a source and its OOV words: the i-th new OOV word gets id ``V + i``."""
        ids, oovs, V = [], [], len(self)
        for tok in tokens:
            idx = self.stoi.get(tok)
            if idx is None:
                if tok not in oovs:
                    oovs.append(tok)
                idx = V + oovs.index(tok)
            ids.append(idx)
        return ids, oovs

    def encode_target(self, tokens: Sequence[str], oovs: Sequence[str]) -> list[int]:
        """Extended ids of a target: a word found among the source's OOVs keeps its extended id."""
        V = len(self)
        where = {tok: V + i for i, tok in enumerate(oovs)}
        return [self.stoi.get(tok, where.get(tok, self.unk_id)) for tok in tokens]

    def decoder_inputs(self, ids: Sequence[int]) -> list[int]:
        """Extended ids -> ids the embedding can read (every id >= V becomes UNK), as
        :func:`extended_to_vocab` maps them."""
        return extended_to_vocab(torch.as_tensor(list(ids), dtype=torch.long), len(self), self.unk_id).tolist()

    # -- saving ----------------------------------------------------------------------
    def to_list(self) -> list[str]:
        """The tokens in id order: all a checkpoint needs to rebuild the vocabulary."""
        return list(self.itos)

    @classmethod
    def from_list(cls, itos: Sequence[str]) -> "Vocab":
        if list(itos[: len(SPECIALS)]) != list(SPECIALS):
            raise ValueError(f"a saved vocabulary must start with {SPECIALS}, got {list(itos[:4])}")
        return cls(itos[len(SPECIALS):])
