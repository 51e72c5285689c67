"""Metrics: accuracy, exact match, ROUGE (rouge-score), repetition and novelty of n-grams.

ROUGE is computed by Google's ``rouge-score`` package with the Porter stemmer, the
reimplementation most papers since 2019 report.  ROUGE-Lsum treats newlines as sentence
breaks, so summaries are passed as newline-separated sentences.  F1 is reported in
[0, 100], as papers print it; accuracies and rates are fractions in [0, 1].
"""
from __future__ import annotations

from typing import Iterable, Sequence

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def accuracy(predictions: Sequence, references: Sequence) -> float:
    """Share of predictions equal to their reference (sequences compare as a whole)."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not references:
        return 0.0
    return sum(list(p) == list(r) if not isinstance(p, (str, int)) else p == r
               for p, r in zip(predictions, references)) / len(references)


exact_match = accuracy


def token_accuracy(predictions: Sequence[Sequence], references: Sequence[Sequence]) -> float:
    """Share of reference positions whose token the prediction has at the same position."""
    right = total = 0
    for p, r in zip(predictions, references):
        total += len(r)
        right += sum(a == b for a, b in zip(p, r))
    return right / total if total else 0.0


def _scorer(types=ROUGE_TYPES):
    from rouge_score import rouge_scorer
    return rouge_scorer.RougeScorer(list(types), use_stemmer=True)


def rouge(predictions: Sequence[str], references: Sequence[str], types=ROUGE_TYPES) -> dict:
    """Mean ROUGE F1 (x100) over examples.  Texts are strings with sentences on separate lines."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not references:
        return {t: 0.0 for t in types}
    scorer = _scorer(types)
    sums = dict.fromkeys(types, 0.0)
    for pred, ref in zip(predictions, references):
        scores = scorer.score(ref, pred)  # rouge-score takes (target, prediction)
        for t in types:
            sums[t] += scores[t].fmeasure
    return {t: 100.0 * s / len(references) for t, s in sums.items()}


def ngrams(tokens: Sequence[str], n: int) -> list[tuple]:
    return [tuple(tokens[i: i + n]) for i in range(len(tokens) - n + 1)]


def repeated_ngram_rate(tokens: Sequence[str], n: int = 3) -> float:
    """Share of a text's n-grams that repeat an n-gram seen earlier in the same text."""
    grams = ngrams(tokens, n)
    if not grams:
        return 0.0
    return (len(grams) - len(set(grams))) / len(grams)


def novel_ngram_rate(summary: Sequence[str], source: Sequence[str], n: int = 2) -> float:
    """Share of a summary's n-grams that do not occur in the source (how abstractive it is)."""
    grams = ngrams(summary, n)
    if not grams:
        return 0.0
    seen = set(ngrams(source, n))
    return sum(g not in seen for g in grams) / len(grams)


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def summary_metrics(predictions: Sequence[Sequence[str]], references: Sequence[str],
                    sources: Sequence[Sequence[str]]) -> dict:
    """ROUGE-1/2/L/Lsum, repeated trigrams and novel bigrams for token-list predictions.

    ``references`` are newline-separated sentence strings; predictions are split into
    sentences at ``.`` so that ROUGE-Lsum sees sentence breaks on both sides.
    """
    texts = [sentences_to_text(p) for p in predictions]
    out = rouge(texts, references)
    out["repeated_trigrams"] = mean(repeated_ngram_rate(p, 3) for p in predictions)
    out["novel_bigrams"] = mean(novel_ngram_rate(p, s, 2) for p, s in zip(predictions, sources))
    return out


def sentences_to_text(tokens: Sequence[str], enders: tuple = (".", "!", "?")) -> str:
    """Tokens -> text with one sentence per line (for ROUGE-Lsum)."""
    lines, cur = [], []
    for tok in tokens:
        cur.append(tok)
        if tok in enders:
            lines.append(" ".join(cur))
            cur = []
    if cur:
        lines.append(" ".join(cur))
    return "\n".join(lines)

