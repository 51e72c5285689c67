"""Splitting a document among agents, and batching it (Celikyilmaz et al. 2018, section 2).

Deep Communicating Agents divide a long document into M contiguous chunks, one per agent
(the paper uses M = 3, splitting at paragraph boundaries).  :func:`split_document` does that:

* the chunks are **contiguous** and **in document order**, and together hold the whole
  (possibly truncated) document;
* they keep **paragraphs whole** when the document has at least M paragraphs, choosing among
  all such splits the most even one (the smallest sum of squared chunk lengths, found by
  dynamic programming);
* when whole paragraphs cannot give an even split (fewer paragraphs than agents, or a split
  whose longest chunk is more than ``tolerance`` times the longest chunk of the most even
  split at sentence boundaries), they keep **sentences whole** instead;
* a document with fewer sentences than agents gives each sentence its own agent, and the
  remaining agents are **empty** (the model masks them: they get no attention and send no
  message).

SynthNews paragraphs and CNN/DailyMail sentences (each sentence its own paragraph) go through
the same code.  An example without structure (``paragraphs is None``) is one sentence.

:func:`collate_agents` pads the chunks of a batch into (batch, agents, agent_len) tensors:

=================  ========================  ==============================================
field              shape                     meaning
=================  ========================  ==============================================
``src``            (batch, agents, len)      ids the encoder reads (OOV -> UNK)
``src_ext``        (batch, agents, len)      ids in the example's extended vocabulary
``src_mask``       (batch, agents, len)      True at real tokens
``agent_mask``     (batch, agents)           True for agents with at least one token
``tgt_in``         (batch, tgt_len)          decoder inputs ``<s> y1 .. y_{T-1}``
``tgt_out``        (batch, tgt_len)          targets ``y1 .. y_T </s>`` (extended ids)
``tgt_mask``       (batch, tgt_len)          True at real target positions
``tgt_sent_end``   (batch, tgt_len)          True where the target token ends a sentence
``oovs``           list of lists             each example's OOV words
``chunks``         list of lists             each example's agents' token lists (to show)
=================  ========================  ==============================================

The extended vocabulary is made per *example*, over its chunks read in order, and shared by
its agents: an OOV word that two agents read has one extended id.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import torch

from .batching import Batch, lengths_to_mask, pad_sequences
from .examples import Example
from .vocab import Vocab, extended_to_vocab

__all__ = ["SENTENCE_ENDERS", "document_units", "truncate_paragraphs", "balanced_partition",
           "split_document", "split_example", "AgentBatch", "collate_agents"]

SENTENCE_ENDERS = (".", "!", "?")


def truncate_paragraphs(paragraphs: Sequence[Sequence[Sequence[str]]], max_tokens: int | None):
    """The first ``max_tokens`` tokens of a paragraph -> sentence -> tokens document, keeping
    its structure (the sentence at the cut is cut; empty sentences and paragraphs are dropped)."""
    out, left = [], max_tokens
    for para in paragraphs:
        kept = []
        for sent in para:
            if left is not None and left <= 0:
                break
            piece = list(sent) if left is None else list(sent[:left])
            if piece:
                kept.append(piece)
                if left is not None:
                    left -= len(piece)
        if kept:
            out.append(kept)
        if left is not None and left <= 0:
            break
    return out


def document_units(example: Example) -> list[list[list[str]]]:
    """The example as paragraphs -> sentences -> tokens (one paragraph of one sentence if it
    has no structure)."""
    if example.paragraphs is not None:
        return [[list(s) for s in p] for p in example.paragraphs]
    return [[list(example.source)]] if example.source else []


def balanced_partition(lengths: Sequence[int], parts: int) -> list[int]:
    """Cut points of the most even split of ``lengths`` into ``parts`` contiguous non-empty groups.

    "Most even" is the smallest sum of squared group totals (for a fixed grand total, the split
    closest to equal totals).  Returns the ``parts + 1`` boundaries ``[0, b_1, ..., len(lengths)]``.
    Needs ``len(lengths) >= parts >= 1``.  Dynamic programming, O(parts * n^2).
    """
    n = len(lengths)
    if not 1 <= parts <= n:
        raise ValueError(f"cannot split {n} units into {parts} non-empty groups")
    prefix = [0]
    for x in lengths:
        prefix.append(prefix[-1] + x)
    inf = float("inf")
    # cost[k][j]: best cost of splitting the first j units into k groups; back[k][j]: last cut
    cost = [[inf] * (n + 1) for _ in range(parts + 1)]
    back = [[0] * (n + 1) for _ in range(parts + 1)]
    cost[0][0] = 0
    for k in range(1, parts + 1):
        for j in range(k, n - (parts - k) + 1):
            for i in range(k - 1, j):
                if cost[k - 1][i] == inf:
                    continue
                c = cost[k - 1][i] + (prefix[j] - prefix[i]) ** 2
                if c < cost[k][j]:
                    cost[k][j], back[k][j] = c, i
    cuts, j = [n], n
    for k in range(parts, 0, -1):
        j = back[k][j]
        cuts.append(j)
    return cuts[::-1]


def _group(units: list, cuts: list[int]) -> list[list]:
    return [[s for u in units[a:b] for s in u] for a, b in zip(cuts[:-1], cuts[1:])]


def split_document(paragraphs: Sequence[Sequence[Sequence[str]]], n_agents: int = 3, *,
                   tolerance: float = 1.5) -> list[list[list[str]]]:
    """Split a document (paragraphs -> sentences -> tokens) into ``n_agents`` chunks.

    Returns ``n_agents`` chunks, each a list of sentences (token lists), in document order;
    trailing chunks are empty when the document has fewer sentences than agents.  See the
    module docstring for the rules; ``tolerance`` is how much longer (in tokens) the longest
    chunk of a paragraph-level split may be than that of the best sentence-level split.
    """
    if n_agents < 1:
        raise ValueError(f"need at least one agent, got {n_agents}")
    paras = [[list(s) for s in p if len(s)] for p in paragraphs]
    paras = [p for p in paras if p]
    sents = [[s] for p in paras for s in p]          # every sentence its own unit
    if len(sents) < n_agents:                        # too short: one sentence per agent
        return [u for u in sents] + [[] for _ in range(n_agents - len(sents))]
    by_sent = _group(sents, balanced_partition([len(u[0]) for u in sents], n_agents))
    if len(paras) < n_agents:
        return by_sent
    by_para = _group(paras, balanced_partition([sum(map(len, p)) for p in paras], n_agents))
    longest = lambda chunks: max(sum(map(len, c)) for c in chunks)   # noqa: E731
    return by_para if longest(by_para) <= tolerance * longest(by_sent) else by_sent


def split_example(example: Example, n_agents: int = 3, max_src: int | None = None, *,
                  tolerance: float = 1.5) -> list[list[str]]:
    """The example's source (first ``max_src`` tokens) as ``n_agents`` flat token lists."""
    doc = truncate_paragraphs(document_units(example), max_src)
    return [[t for s in chunk for t in s] for chunk in split_document(doc, n_agents, tolerance=tolerance)]


def _sentence_ends(tokens: Sequence[str], enders=SENTENCE_ENDERS) -> list[bool]:
    return [t in enders for t in tokens]


@dataclass
class AgentBatch(Batch):
    """A batch for Deep Communicating Agents (see the module docstring for the fields)."""

    src: torch.Tensor
    src_ext: torch.Tensor
    src_mask: torch.Tensor
    agent_mask: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    tgt_mask: torch.Tensor
    tgt_sent_end: torch.Tensor
    oovs: list
    examples: list
    chunks: list               # per example: its agents' token lists

    @property
    def size(self) -> int:
        return self.src.size(0)

    @property
    def n_agents(self) -> int:
        return self.src.size(1)

    @property
    def n_oov(self) -> int:
        return max((len(o) for o in self.oovs), default=0)

    def select(self, i: int) -> "AgentBatch":
        """Example ``i`` as a batch of one, its padding removed (used by the one-by-one beam search)."""
        n_src = max(int(self.src_mask[i].sum(-1).max()), 1)
        n_tgt = int(self.tgt_mask[i].sum())
        cut = lambda t: t[i: i + 1, :, :n_src]                 # noqa: E731
        tcut = lambda t: t[i: i + 1, :n_tgt]                    # noqa: E731
        return replace(self, src=cut(self.src), src_ext=cut(self.src_ext), src_mask=cut(self.src_mask),
                       agent_mask=self.agent_mask[i: i + 1], tgt_in=tcut(self.tgt_in),
                       tgt_out=tcut(self.tgt_out), tgt_mask=tcut(self.tgt_mask),
                       tgt_sent_end=tcut(self.tgt_sent_end), oovs=[self.oovs[i]],
                       examples=list(self.examples[i: i + 1]), chunks=list(self.chunks[i: i + 1]))


def collate_agents(examples: Sequence[Example], vocab: Vocab, n_agents: int = 3, max_src: int | None = None,
                   max_tgt: int | None = None, *, tolerance: float = 1.5) -> AgentBatch:
    """Split every example among ``n_agents`` agents and pad the batch into an :class:`AgentBatch`.

    ``max_src`` truncates each document (in tokens) before it is split; ``max_tgt`` truncates
    the target as :func:`~dca_course.data.batching.collate` does (room kept for ``</s>``).
    """
    chunks, ext, oovs, tgts_out, tgts_in, ends = [], [], [], [], [], []
    for ex in examples:
        parts = split_example(ex, n_agents, max_src, tolerance=tolerance)
        ids, ex_oovs = vocab.encode_source([t for part in parts for t in part])   # one OOV list per example
        per_agent, start = [], 0
        for part in parts:
            per_agent.append(ids[start: start + len(part)])
            start += len(part)
        tgt = list(ex.target[: max_tgt - 1] if max_tgt else ex.target)
        out = vocab.encode_target(tgt, ex_oovs) + [vocab.eos_id]
        chunks.append(parts)
        ext.append(per_agent)
        oovs.append(ex_oovs)
        tgts_out.append(out)
        tgts_in.append([vocab.bos_id] + vocab.decoder_inputs(out[:-1]))
        ends.append(_sentence_ends(tgt) + [False])
    B = len(examples)
    agent_len = max([len(a) for per_agent in ext for a in per_agent] + [1])
    src_ext = torch.full((B, n_agents, agent_len), vocab.pad_id, dtype=torch.long)
    lengths = torch.zeros(B, n_agents, dtype=torch.long)
    for b, per_agent in enumerate(ext):
        for a, ids in enumerate(per_agent):
            if ids:
                src_ext[b, a, : len(ids)] = torch.as_tensor(ids, dtype=torch.long)
            lengths[b, a] = len(ids)
    src_mask = torch.arange(agent_len)[None, None, :] < lengths[:, :, None]
    src = extended_to_vocab(src_ext, len(vocab), vocab.unk_id)
    tgt_out = pad_sequences(tgts_out, vocab.pad_id)
    T = tgt_out.size(1)
    sent_end = torch.zeros(B, T, dtype=torch.bool)
    for b, e in enumerate(ends):
        sent_end[b, : len(e)] = torch.as_tensor(e, dtype=torch.bool)
    return AgentBatch(
        src=src, src_ext=src_ext, src_mask=src_mask, agent_mask=lengths > 0,
        tgt_in=pad_sequences(tgts_in, vocab.pad_id, T), tgt_out=tgt_out,
        tgt_mask=lengths_to_mask([len(t) for t in tgts_out], T), tgt_sent_end=sent_end,
        oovs=oovs, examples=list(examples), chunks=chunks,
    )
