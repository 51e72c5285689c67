"""bAbI examples as padded tensors for the Dynamic Memory Network (:mod:`dca_course.models.dmn`).

A DMN reads a story as one word sequence with an end-of-sentence mark after each sentence, and
takes one *fact* at each mark (Kumar et al. 2016, section 2.1); DMN+ reads each sentence on its
own (Xiong et al. 2016, section 3.1).  :func:`make_dmn_batch` builds both views, plus masks and
the supporting-fact targets that supervise the gates.  :func:`length_buckets` groups stories of
similar length, and :func:`babi_vocab` gives the vocabulary with the mark at a fixed id.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from ..batching import Batch, pad_sequences
from ..vocab import Vocab
from .story import vocabulary

#: The end-of-sentence mark the input module reads its facts at (tokenize() drops the file's own).
SENTENCE_END = "."


def babi_vocab(examples) -> Vocab:
    """A :class:`dca_course.data.Vocab` of the examples' words (:func:`vocabulary`), with the
    end-of-sentence mark ``.`` first, so that it has the same id in every task.

    Build it from the training examples only: a test word never seen in training reads as
    ``<unk>``, as it would for any model that has not seen it.
    """
    return Vocab(vocabulary(examples, first=[SENTENCE_END]))


@dataclass
class DMNBatch(Batch):
    """Padded tensors for a batch of bAbI examples.

    =================  ===================  ==============================================
    field              shape                meaning
    =================  ===================  ==============================================
    ``story``          (batch, words)       the story's words, an end-of-sentence id after
                                            each sentence, then padding
    ``fact_pos``       (batch, facts)       position in ``story`` of each sentence's end
    ``fact_mask``      (batch, facts)       True for real facts, False for padding
    ``question``       (batch, q_len)       question ids, padded
    ``question_len``   (batch,)             real question lengths
    ``answer``         (batch, a_len)       answer ids then ``</s>``, padded
    ``answer_mask``    (batch, a_len)       True at real answer positions (``</s>`` too)
    ``supporting``     (batch, n_sup)       supporting fact index per pass, -1 = none
    ``sentences``      (batch, facts, len)  the same words, one row per sentence (for the
                                            positional-encoding input module of DMN+)
    ``sentence_len``   (batch, facts)       words in each sentence (0 for padded facts)
    =================  ===================  ==============================================
    """

    story: torch.Tensor
    fact_pos: torch.Tensor
    fact_mask: torch.Tensor
    question: torch.Tensor
    question_len: torch.Tensor
    answer: torch.Tensor
    answer_mask: torch.Tensor
    supporting: torch.Tensor
    sentences: torch.Tensor
    sentence_len: torch.Tensor

    @property
    def size(self) -> int:
        return self.story.size(0)


def _read_story(ex, vocab: Vocab, max_facts: int | None, end_id: int):
    """One story as (word ids with the mark after each sentence, the marks' positions, one id
    row per sentence, supporting indices into the kept sentences)."""
    sents = ex.story[-max_facts:] if max_facts else ex.story
    offset = len(ex.story) - len(sents)          # sentences dropped from the front
    ids, pos, rows = [], [], []
    for sent in sents:
        rows.append(vocab.encode(sent))
        ids += rows[-1] + [end_id]
        pos.append(len(ids) - 1)
    if not sents:  # a question before any statement: one empty fact
        ids, pos, rows = [end_id], [0], [[]]
    supporting = [i - offset if i >= offset else -1 for i in ex.supporting]
    return ids, pos, rows, supporting


def _sentence_tensor(sent_ids: list[list[list[int]]], n_facts: int, pad_id: int):
    """(batch, facts, words) ids of each sentence and (batch, facts) their lengths."""
    n_words = max([len(r) for rows in sent_ids for r in rows] + [1])
    sentences = torch.full((len(sent_ids), n_facts, n_words), pad_id, dtype=torch.long)
    lengths = torch.zeros(len(sent_ids), n_facts, dtype=torch.long)
    for b, rows in enumerate(sent_ids):
        for f, r in enumerate(rows):
            sentences[b, f, : len(r)] = torch.as_tensor(r, dtype=torch.long)
            lengths[b, f] = len(r)
    return sentences, lengths


def make_dmn_batch(examples, vocab: Vocab, *, max_facts: int | None = None,
                   sentence_end: str = SENTENCE_END) -> DMNBatch:
    """Turn :class:`dca_course.data.babi.BabiExample` s into a :class:`DMNBatch`.

    Only the last ``max_facts`` sentences of a story are kept (the memory-network papers keep
    the 50 most recent); a supporting fact that falls outside gets index -1 (not supervised).
    ``sentence_end`` must be in ``vocab``: it is the end-of-sentence mark the input module
    reads its facts at.
    """
    end_id = vocab.stoi[sentence_end]
    stories, ends, sent_ids, supports = zip(*(_read_story(ex, vocab, max_facts, end_id) for ex in examples))
    n_facts = max(len(p) for p in ends)
    sentences, sentence_len = _sentence_tensor(sent_ids, n_facts, vocab.pad_id)
    q = [vocab.encode(ex.question) or [vocab.unk_id] for ex in examples]
    a = [vocab.encode(ex.answer) + [vocab.eos_id] for ex in examples]
    return DMNBatch(
        story=pad_sequences(stories, vocab.pad_id),
        fact_pos=pad_sequences(ends, 0, n_facts),
        fact_mask=pad_sequences([[1] * len(p) for p in ends], 0, n_facts).bool(),
        question=pad_sequences(q, vocab.pad_id),
        question_len=torch.tensor([len(x) for x in q]),
        answer=pad_sequences(a, vocab.pad_id),
        answer_mask=pad_sequences([[1] * len(x) for x in a], 0).bool(),
        supporting=pad_sequences(supports, -1),   # at least one column, -1 where a story has fewer
        sentences=sentences,
        sentence_len=sentence_len,
    )


def length_buckets(examples, batch_size: int, *, max_facts: int | None = None, seed: int = 0) -> list[list]:
    """Batches of examples with stories of similar length (ties shuffled with ``seed``).

    Padding a 5-sentence story to the 50 sentences of another costs ten times the work;
    bucketing by length keeps batches tight.  The trainer shuffles the order of the buckets
    every epoch.
    """
    rng = random.Random(seed)
    keys = [(min(len(ex.story), max_facts or len(ex.story)), rng.random()) for ex in examples]
    order = sorted(range(len(examples)), key=keys.__getitem__)
    return [[examples[i] for i in order[k: k + batch_size]] for k in range(0, len(order), batch_size)]
