"""Saving and reading SynthNews examples (one JSON object a line), and measuring a data set."""
from __future__ import annotations

import json
import os
from collections import Counter
from typing import Sequence

from ...io import atomic_write
from ...metrics import fact_recall, mean, novel_ngram_rate, rouge
from ..examples import Example


# --------------------------------------------------------------------------------------
# Saving
# --------------------------------------------------------------------------------------
def _to_json(ex: Example) -> dict:
    d = {"id": ex.id}
    if ex.paragraphs is not None:
        d["paragraphs"] = ex.paragraphs
    else:
        d["source"] = ex.source
    if ex.target_sents is not None:
        d["target_sents"] = ex.target_sents
    else:
        d["target"] = ex.target
    if ex.facts is not None:
        d["facts"] = ex.facts
    if ex.meta:
        d["meta"] = ex.meta
    return d


def _from_json(d: dict) -> Example:
    if "paragraphs" in d:
        paragraphs = d["paragraphs"]
        sents = d.get("target_sents") or [d["target"]]
        ex = Example.from_document(paragraphs, sents, facts=d.get("facts"), id=d.get("id", ""),
                                   meta=d.get("meta"))
        if "target_sents" not in d:
            ex.target_sents = None
        return ex
    target_sents = d.get("target_sents")
    target = d["target"] if "target" in d else [t for s in target_sents for t in s]
    return Example(d["source"], target, target_sents=target_sents, facts=d.get("facts"),
                   id=d.get("id", ""), meta=dict(d.get("meta") or {}))


def write_jsonl(examples: Sequence[Example], path) -> str:
    """Write one JSON object per example, atomically (:func:`dca_course.io.atomic_write`)."""
    def write(tmp):
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            for ex in examples:
                f.write(json.dumps(_to_json(ex), ensure_ascii=False, separators=(",", ":")))
                f.write("\n")
    atomic_write(path, write)
    return os.fspath(path)


def read_jsonl(path) -> list[Example]:
    """Examples written by :func:`write_jsonl`."""
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(_from_json(json.loads(line)))
            except (ValueError, KeyError) as e:
                raise ValueError(f"{path}:{lineno}: not a saved example ({e})") from e
    return out


# --------------------------------------------------------------------------------------
# Measuring a data set
# --------------------------------------------------------------------------------------
LEAD3_ROUGE_TYPES = ("rouge1", "rouge2", "rougeLsum")


def lead_sentences(example: Example, k: int = 3) -> list[list[str]]:
    """The first ``k`` source sentences (the lead-k baseline's summary)."""
    return example.source_sents[:k]


def frequent_facts(examples: Sequence[Example], k: int, single_token: bool = True) -> list[str]:
    """A cheater's summary, the same for every article: the ``k`` most frequent one-token key facts
    of ``examples`` (weekdays, small numbers, years), or with ``single_token=False`` the ``k`` most
    frequent tokens of all their key facts.  It states facts with nothing around them, so
    :func:`dca_course.metrics.fact_recall` gives it credit and
    :func:`dca_course.metrics.attributed_fact_recall` none (``tests/test_attributed_facts.py``)."""
    if single_token:
        counts = Counter(f for ex in examples for f in ex.facts["key_facts"] if len(f.split()) == 1)
    else:
        counts = Counter(t for ex in examples for f in ex.facts["key_facts"] for t in f.split())
    return [t for t, _ in counts.most_common(k)]


def dataset_stats(train: Sequence[Example], test: Sequence[Example], vocab_size: int = 2000) -> dict:
    """Statistics of a train/test pair (works for any :class:`Example` lists).

    * ``oov_entity_share``: share of entity tokens in the test references that are outside the
      ``vocab_size`` most frequent training *source* tokens (``None`` without facts);
    * ``summary_oov_rate`` / ``source_oov_rate``: the same for all reference / source tokens;
    * ``novel_bigram_rate`` / ``novel_unigram_rate``: mean per example of the share of reference
      n-grams that are not in the source;
    * ``lead3_rouge``: ROUGE-1/2/Lsum F1 (x100, rouge-score with stemming) of the first three
      source sentences against the reference; ``lead3_fact_recall`` the share of key facts lead-3
      states and ``lead400_fact_recall`` the share the first 400 source tokens state (what a
      model that reads 400 tokens, as See et al. 2017 did, can copy; ``None`` without facts);
    * mean lengths in tokens, paragraphs and sentences.
    """
    counts = Counter(t for ex in train for t in ex.source)
    vocab = set(sorted(counts, key=lambda t: (-counts[t], t))[:vocab_size])
    has_facts = any(ex.facts for ex in test)
    leads = [[t for s in lead_sentences(ex, 3) for t in s] for ex in test]
    with_facts = [(lead, ex) for lead, ex in zip(leads, test) if ex.facts and ex.facts.get("key_facts")]
    lead_texts = ["\n".join(" ".join(s) for s in lead_sentences(ex, 3)) for ex in test]
    return {
        "n_train": len(train), "n_test": len(test), "vocab_size": len(vocab),
        **_oov_rates(test, vocab, has_facts),
        # an empty reference has no n-grams: it counts in neither mean
        "novel_bigram_rate": mean(novel_ngram_rate(ex.target, ex.source, 2) for ex in test if len(ex.target) > 1),
        "novel_unigram_rate": mean(novel_ngram_rate(ex.target, ex.source, 1) for ex in test if ex.target),
        "lead3_rouge": rouge(lead_texts, [ex.summary_text() for ex in test], LEAD3_ROUGE_TYPES),
        "lead3_fact_recall": mean(fact_recall(lead, ex.facts) for lead, ex in with_facts) if with_facts else None,
        "lead400_fact_recall": (mean(fact_recall(ex.source[:400], ex.facts) for _, ex in with_facts)
                                if with_facts else None),
        "mean_source_tokens": mean(len(ex.source) for ex in test),
        "mean_summary_tokens": mean(len(ex.target) for ex in test),
        "mean_paragraphs": mean(len(ex.paragraphs or [ex.source]) for ex in test),
        "mean_source_sentences": mean(len(ex.source_sents) for ex in test),
        "mean_summary_sentences": mean(len(ex.target_sents or [ex.target]) for ex in test),
    }


def _oov_rates(test: Sequence[Example], vocab: set, has_facts: bool) -> dict:
    """Shares of reference tokens, of their entity tokens and of source tokens outside ``vocab``."""
    ent_total = ent_oov = sum_total = sum_oov = src_total = src_oov = 0
    for ex in test:
        ents = set(ex.facts["all_entity_tokens"]) if ex.facts else None
        for t in ex.target:
            sum_total += 1
            oov = t not in vocab
            sum_oov += oov
            if ents is not None and t in ents:
                ent_total += 1
                ent_oov += oov
        src_total += len(ex.source)
        src_oov += sum(t not in vocab for t in ex.source)
    return {"oov_entity_share": (ent_oov / ent_total if ent_total else 0.0) if has_facts else None,
            "summary_oov_rate": sum_oov / sum_total if sum_total else 0.0,
            "source_oov_rate": src_oov / src_total if src_total else 0.0}
