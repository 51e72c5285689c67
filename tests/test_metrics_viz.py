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


def test_attended_window_finds_the_span_with_most_attention():
    w = np.zeros((3, 40))
    w[:, 10:14] = 0.2                         # the attended span
    w[0, 35] = 0.2                            # one stray step
    assert viz.attended_window(w, 8) == (6, 14)      # earliest of the windows holding all of 10..13
    assert viz.attended_window(w[0], 30) == (6, 36)  # one vector; the stray position fits too
    assert viz.attended_window(w, 50) == (0, 40)     # a short source is kept whole


def test_heatmap_of_a_window_reports_positions_in_the_whole_source():
    import matplotlib
    import matplotlib.pyplot as plt
    matplotlib.use("Agg")
    w = np.array([[0.2, 0.8], [0.6, 0.4]])
    _, ax = plt.subplots()
    text = viz.attention_heatmap(w, ["a", "b"], ["B", "A"], ax=ax, first_position=30, trained_model=False)
    assert text.splitlines() == ["         'B' <- 'b' @31 (0.80)", "         'A' <- 'a' @30 (0.60)"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a@30", "b@31"]
    plt.close("all")


def test_agent_attention_heatmaps_crop_each_agent_and_label_it():
    import matplotlib
    import matplotlib.pyplot as plt
    matplotlib.use("Agg")
    chunks = [[f"a{i}" for i in range(30)], [f"b{i}" for i in range(5)], []]
    g = np.array([[0.8, 0.2, 0.0], [0.1, 0.9, 0.0]])
    l = np.zeros((2, 3, 30))
    l[:, 0, 20] = 1.0                       # agent 1 reads a20
    l[:, 1, 3] = 1.0                        # agent 2 reads b3
    _, axes = plt.subplots(1, 2)
    text = viz.agent_attention_heatmaps(g, l, chunks, ["X", "Y"], width=6, axes=axes, trained_model=False)
    assert text.splitlines() == ["agent 1: words 17-22 of 30 shown; most read 'a20' @20; 45% of the weight",
                                 "agent 2: words 0-4 of 5 shown; most read 'b3' @3; 55% of the weight",
                                 "agent 3: no words"]
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["agent 1", "agent 2", "agent 3"]
    assert axes[0].get_xlabel() == "agent"
    assert [t.get_text() for t in axes[1].get_xticklabels()] == [f"a{i}" for i in range(17, 23)] + [f"b{i}" for i in range(5)]
    assert [t.get_text() for t in axes[1].texts] == ["agent 1: words 17-22", "agent 2: words 0-4"]
    # each panel has its own colorbar: g^t (0 to 1) is not read against the word weights' scale
    bars = [ax for ax in axes[0].figure.axes if ax not in axes]
    assert sorted(b.get_ylabel() for b in bars) == ["$g^t_a$", "$g^t_a\\, l^t_{a,i}$"]
    assert bars[0].get_ylim() == (0.0, 1.0) or bars[1].get_ylim() == (0.0, 1.0)
    plt.close("all")


def test_fact_metrics_on_a_small_example():
    from dca_course.data.examples import Example

    e = Example.from_document([[["orvena", "labs", "paid", "$", "4", "billion", "."]]],
                              [["orvena", "labs", "paid", "."]],
                              facts={"key_facts": ["orvena labs", "$ 4 billion"],
                                     "all_entity_tokens": ["orvena", "tamsa"]})
    assert metrics.contains(["a", "b", "c"], "b c") and not metrics.contains(["a", "b", "c"], "a c")
    assert metrics.contains(["a"], ("a",)) and not metrics.contains([], "a") and metrics.contains([], "")
    assert metrics.fact_recall(e.target, e.facts) == 0.5
    assert metrics.fact_recall(e.target, {}) == 0.0                            # no key facts: 0, not an error
    assert metrics.hallucinated_entities(["tamsa", "orvena", "paid"], e.source, e.facts) == ["tamsa"]


def test_late_facts_are_the_key_facts_beyond_the_first_400_tokens():
    from types import SimpleNamespace

    source = ["ann", "lee", "won"] + ["filler"] * 400 + ["by", "12", "votes"]
    facts = {"key_facts": ["ann lee", "12", "votes ."], "all_entity_tokens": ["ann", "lee"]}
    assert metrics.late_facts(source, facts) == ["12", "votes ."]
    assert metrics.late_facts(source, facts, first=len(source)) == ["votes ."]   # never stated at all
    ex = SimpleNamespace(source=source, facts=facts)
    short = SimpleNamespace(source=["ann", "lee", "won"], facts={"key_facts": ["ann lee"]})
    got = metrics.fact_metrics([["ann", "lee", "won", "12"], ["ann"]], [ex, short])
    assert got["fact_recall"] == (2 / 3 + 0.0) / 2
    assert got["late_fact_recall"] == 0.5                      # only the long article has late facts: 1 of 2
    assert "late_fact_recall" not in metrics.fact_metrics([["ann"]], [short])


def test_babi_results_table_puts_the_papers_beside_every_task():
    from dca_course.data.babi.readings import results_table as babi_results_table

    stored = {"per_task": {"2": 0.9, "19": 0.35}, "supporting_fact_accuracy": {"2": 0.95, "19": 0.8},
              "per_task_per_seed": {"2": {"0": 0.88, "1": 0.92}, "19": {"0": 0.35}}, "mean_accuracy": 0.625}
    lines = babi_results_table(stored).splitlines()
    assert lines[1].split() == ["2", "two-supporting-facts", "90.0", "±", "2.8", "98.2", "100", "95.0", "*"]
    assert lines[2].split() == ["19", "path-finding", "35.0", "34.5", "36", "80.0"]
    assert lines[3].split() == ["mean", "62.5", "93.6", "93.3"]
    assert lines[4].startswith("tasks at >= 95%: 0 of 2")


def test_babi_lead_summary_takes_the_named_tasks_out_of_the_mean():
    from dca_course.data.babi import PAPER_ACCURACY_1K
    from dca_course.data.babi.readings import lead_summary as babi_lead_summary

    # 18 tasks at 90%, tasks 17 and 19 at 100%: mean (18 * 90 + 200) / 20 = 91.0, without them 90.0, 2 tasks >= 95
    stored = {"per_task": {str(t): (1.0 if t in (17, 19) else 0.9) for t in range(1, 21)}}
    lines = babi_lead_summary(stored).splitlines()
    assert lines[1].split()[-5:] == ["91.0", "90.0", "2", "of", "20"]
    paper = PAPER_ACCURACY_1K["DMN"]
    rest = [a for t, a in paper.items() if int(t) not in (17, 19)]
    assert f"{sum(rest) / len(rest):.1f}" == lines[2].split()[-4] == "98.8"
