import math

import numpy as np
import pytest
from rouge_score import rouge_scorer

from dca_course import metrics, viz


def test_rouge_matches_rouge_score_with_stemming():
    preds = ["the cats were running home .\nthey slept .", "a b c"]
    refs = ["the cat ran home .\nit slept .", "a b d"]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)
    got = metrics.rouge(preds, refs)
    for key in ("rouge1", "rouge2", "rougeLsum"):
        want = 100 * np.mean([scorer.score(r, p)[key].fmeasure for p, r in zip(preds, refs)])
        assert math.isclose(got[key], want, rel_tol=1e-9)
    assert 0 < got["rouge1"] <= 100 and got["rouge1"] > 1  # F1 on the papers' 0..100 scale


def test_rouge_lsum_uses_sentence_breaks():
    # Summary-level LCS matches each reference sentence separately; plain ROUGE-L sees one sequence.
    r = metrics.rouge(["c d a b"], ["a b .\nc d ."])
    assert r["rougeLsum"] == pytest.approx(100.0) and r["rougeL"] == pytest.approx(50.0)


def test_accuracy_and_exact_match():
    assert metrics.exact_match([["a", "b"], ["c"]], [["a", "b"], ["d"]]) == 0.5
    assert metrics.accuracy([1, 2, 3], [1, 2, 4]) == pytest.approx(2 / 3)
    assert metrics.token_accuracy([["a", "x", "c"]], [["a", "b", "c", "d"]]) == 0.5
    with pytest.raises(ValueError):
        metrics.accuracy([1], [1, 2])


def test_repeated_and_novel_ngrams():
    toks = "a b c a b c".split()
    assert metrics.repeated_ngram_rate(toks, 3) == pytest.approx(1 / 4)   # abc, bca, cab, abc
    assert metrics.repeated_ngram_rate("a b c d".split(), 3) == 0
    assert metrics.novel_ngram_rate("a b x".split(), "a b c".split(), 2) == 0.5
    assert metrics.sentences_to_text("a . b c".split()) == "a .\nb c"


def test_alignment_summary_names_the_most_attended_source_token():
    w = np.array([[0.1, 0.9, 0.0], [0.7, 0.2, 0.1]])
    text = viz.alignment_summary(w, ["x", "y", "z"], ["Y", "X"], trained_model=False)
    assert text.splitlines() == ["         'Y' <- 'y' @1 (0.90)", "         'X' <- 'x' @0 (0.70)"]
    # a trained model's summary comes marked, line by line, for nbval to mask
    marked = viz.alignment_summary(w, ["x", "y", "z"], ["Y", "X"])
    assert marked.splitlines() == ["\u2248          'Y' <- 'y' @1 (0.90)", "\u2248          'X' <- 'x' @0 (0.70)"]


def test_heatmap_returns_the_same_summary():
    import matplotlib
    matplotlib.use("Agg")
    w = np.array([[0.2, 0.8], [0.6, 0.4]])
    assert viz.attention_heatmap(w, ["a", "b"], ["B", "A"]) == viz.alignment_summary(w, ["a", "b"], ["B", "A"])
