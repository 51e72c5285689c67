"""Padding, masks and batches for source/target models.

A batch holds everything a copying model needs (See et al. 2017, section 2.2):

=============  ====================  ==================================================
field          shape                 meaning
=============  ====================  ==================================================
``src``        (batch, src_len)      source ids the encoder reads (OOV -> UNK)
``src_ext``    (batch, src_len)      source ids in the per-example extended vocabulary
``src_mask``   (batch, src_len)      True at real tokens, False at padding
``tgt_in``     (batch, tgt_len)      decoder inputs ``<s> y1 .. y_{T-1}`` (never extended)
``tgt_out``    (batch, tgt_len)      targets ``y1 .. y_T </s>`` in extended ids
``tgt_mask``   (batch, tgt_len)      True at real target positions
``oovs``       list of lists         each example's OOV words (id ``V + i`` is ``oovs[i]``)
=============  ====================  ==================================================
"""
from __future__ import annotations

import random
from dataclasses import dataclass, fields
from typing import Iterator, Sequence

import torch

from .examples import Example
from .vocab import Vocab, extended_to_vocab


def pad_sequences(seqs: Sequence[Sequence[int]], pad_id: int = 0, length: int | None = None) -> torch.Tensor:
    """Right-pad integer sequences into a (batch, max_len) LongTensor."""
    width = max([len(s) for s in seqs] + [length or 0, 1])
    out = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        if len(s):
            out[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    return out


def lengths_to_mask(lengths: torch.Tensor | Sequence[int], max_len: int | None = None) -> torch.Tensor:
    """(batch,) lengths -> (batch, max_len) bool mask, True where a position holds a token."""
    lengths = torch.as_tensor(lengths)
    max_len = int(lengths.max()) if max_len is None else max_len
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


class Batch:
    """The base of every batch dataclass of the course (:class:`Seq2SeqBatch`, the agents',
    bAbI's, the language model's): ``.to(device)`` moves every tensor field and keeps the rest."""

    def to(self, device):
        # Non-blocking only towards a GPU: there the copy is queued before the kernels that read it.
        # Towards the CPU the host would read the tensors before a non-blocking copy has finished.
        non_blocking = torch.device(device).type == "cuda"
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        for k, v in moved.items():
            if isinstance(v, torch.Tensor):
                moved[k] = v.to(device, non_blocking=non_blocking)
        return type(self)(**moved)


@dataclass
class Seq2SeqBatch(Batch):
    src: torch.Tensor
    src_ext: torch.Tensor
    src_mask: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_mask: torch.Tensor
    oovs: list
    examples: list

    @property
    def size(self) -> int:
        return self.src.size(0)

    @property
    def n_oov(self) -> int:
        """The most OOV words any example of the batch has: the extended vocabulary's extra width."""
        return max((len(o) for o in self.oovs), default=0)


def collate(examples: Sequence[Example], vocab: Vocab, max_src: int | None = None,
            max_tgt: int | None = None) -> Seq2SeqBatch:
    """Turn examples into one padded :class:`Seq2SeqBatch` (sources and targets truncated first)."""
    srcs_ext, tgts_out, tgts_in, oovs = [], [], [], []
    for ex in examples:
        src = ex.source[:max_src] if max_src else ex.source
        tgt = ex.target[: max_tgt - 1] if max_tgt else ex.target  # room for </s>
        ids, ex_oovs = vocab.encode_source(src)
        out = vocab.encode_target(tgt, ex_oovs) + [vocab.eos_id]
        srcs_ext.append(ids)
        oovs.append(ex_oovs)
        tgts_out.append(out)
        tgts_in.append([vocab.bos_id] + vocab.decoder_inputs(out[:-1]))
    src_ext = pad_sequences(srcs_ext, vocab.pad_id)
    tgt_out = pad_sequences(tgts_out, vocab.pad_id)
    src = extended_to_vocab(src_ext, len(vocab), vocab.unk_id)
    return Seq2SeqBatch(
        src=src,
        src_ext=src_ext,
        src_mask=lengths_to_mask([len(s) for s in srcs_ext], src_ext.size(1)),
        tgt_in=pad_sequences(tgts_in, vocab.pad_id),
        tgt_out=tgt_out,
        tgt_mask=lengths_to_mask([len(t) for t in tgts_out], tgt_out.size(1)),
        oovs=oovs,
        examples=list(examples),
    )


def batch_indices(n: int, batch_size: int, *, shuffle: bool = False, seed: int = 0,
                  rank: int = 0, world_size: int = 1) -> list[list[int]]:
    """Index lists of each batch; with ``world_size > 1`` each rank takes its own share.

    Every rank sees the same number of batches (the last ones are padded by wrapping
    around, as ``DistributedSampler`` does) so that DDP's collective calls line up.
    ``batch_size`` is per process: the global batch is ``batch_size * world_size``.
    """
    order = list(range(n))
    if shuffle:
        random.Random(seed).shuffle(order)
    if world_size > 1:
        per_rank = -(-n // world_size)
        order = (order * 2)[: per_rank * world_size] if n else order
        order = order[rank::world_size]
    return [order[i: i + batch_size] for i in range(0, len(order), batch_size)]


def iterate_batches(examples: Sequence, batch_size: int, make_batch, *, shuffle: bool = False,
                    seed: int = 0, rank: int = 0, world_size: int = 1) -> Iterator:
    """Yield ``make_batch([examples...])`` for each batch of :func:`batch_indices`."""
    for idx in batch_indices(len(examples), batch_size, shuffle=shuffle, seed=seed,
                             rank=rank, world_size=world_size):
        yield make_batch([examples[i] for i in idx])
