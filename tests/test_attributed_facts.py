"""Fact recall that a fixed list of words cannot fake (issue 45, part 1).

``fact_recall`` counts a key fact found anywhere in a summary, so a summary made of the most frequent
weekdays and small numbers scores on it.  ``attributed_fact_recall`` counts a fact only where it is
stated with what it is about: in a context that the article's templates use for the slot holding it.
These tests hold both sides: cheaters that score on the old measure score about 0 on the new one,
and summaries a reader would call faithful score 1.
"""
import pytest

from dca_course.data.synthnews import frequent_facts, load_synthnews, slot_contexts
from dca_course.metrics import attributed_fact_recall, attributed_facts, fact_metrics, fact_recall, mean

CHEAT_BOUND = 0.02        # the issue's bound for a fixed list of 20 or 40 training tokens


@pytest.fixture(scope="module")
def short():
    """Notebook 05's kind of articles: 2,000 training articles and 400 test articles, seed 0."""
    train, _, test = load_synthnews(2000, 0, 400, seed=0)
    return train, test


@pytest.fixture(scope="module")
def long_():
    """Notebook 06's set-up: 800 long training articles, its 60 test articles."""
    train, _, test = load_synthnews(800, 0, 60, seed=0, long=True)
    return train, test


def frequent_single_facts(train, k):
    return frequent_facts(train, k)


def frequent_fact_tokens(train, k):
    return frequent_facts(train, k, single_token=False)


def both(pred_of, test):
    """(fact_recall, attributed_fact_recall) of pred_of(example) over the test articles."""
    preds = [pred_of(ex) for ex in test]
    old = mean(fact_recall(p, ex.facts) for p, ex in zip(preds, test))
    new = mean(attributed_fact_recall(p, ex.facts, slot_contexts(ex.facts["event"])) for p, ex in zip(preds, test))
    return old, new


def storm(test):
    """The first storm article of the test split: its slots are known to these tests."""
    ex = next(e for e in test if e.facts["event"] == "storm")
    assert ex.facts["slots"]["storm"] == "storm gamailine" and ex.facts["slots"]["day"] == "tuesday"
    return ex


@pytest.mark.parametrize("k", [20, 40])
@pytest.mark.parametrize("lister", [frequent_single_facts, frequent_fact_tokens])
@pytest.mark.parametrize("setting", ["short", "long_"])
def test_a_fixed_list_scores_on_word_match_and_not_on_attributed_facts(request, setting, lister, k):
    train, test = request.getfixturevalue(setting)
    words = lister(train, k)
    old, new = both(lambda ex: words, test)
    assert old >= 0.08          # the cheater works on the word match (0.086 to 0.196 here)
    assert new <= CHEAT_BOUND


def test_the_word_match_cheater_figures_of_the_issue(short):
    """The issue's figures: 20 and 40 frequent one-token facts score 0.143 and 0.196 by word match."""
    train, test = short
    assert [round(both(lambda ex, w=frequent_single_facts(train, k): w, test)[0], 3) for k in (20, 40)] == [0.143, 0.196]


def test_references_score_one(short, long_):
    for _, test in (short, long_):
        old, new = both(lambda ex: ex.target, test)
        assert old == new == 1.0


def test_a_hand_made_faithful_summary_scores_one(short):
    """Written by hand in other words than the reference, each fact in a sentence about it."""
    ex = storm(short[1])
    summary = ("storm gamailine hit niora on tuesday . "
               "110,800 people were evacuated from their homes . "
               "108 millimetres of rain fell in the space of 18 hours .").split()
    assert attributed_fact_recall(summary, ex.facts, slot_contexts("storm")) == 1.0


def test_facts_stated_with_no_context_score_zero(short):
    """The key facts alone, as one list or one per sentence, state nothing about anything."""
    for ex in short[1][:100]:
        facts = ex.facts["key_facts"]
        as_list = [t for f in facts for t in f.split()]
        one_per_sentence = [t for f in facts for t in (*f.split(), ".")]
        contexts = slot_contexts(ex.facts["event"])
        assert fact_recall(as_list, ex.facts) == 1.0
        assert attributed_fact_recall(as_list, ex.facts, contexts) == 0.0
        assert attributed_fact_recall(one_per_sentence, ex.facts, contexts) == 0.0


def test_a_fact_under_the_wrong_relation_does_not_count(short):
    """The number of hours written where the rain goes: stated, but not with what it is about."""
    ex = storm(short[1])
    right = "108 millimetres of rain fell in the space of 18 hours .".split()
    swapped = "18 millimetres of rain fell in the space of 108 hours .".split()
    contexts = slot_contexts("storm")
    assert attributed_facts(right, ex.facts, contexts) == {"108", "18"}
    assert attributed_facts(swapped, ex.facts, contexts) == set()
    assert fact_recall(swapped, ex.facts) == fact_recall(right, ex.facts)      # the word match cannot tell


def test_a_weekday_needs_its_event(short):
    ex = storm(short[1])
    contexts = slot_contexts("storm")
    assert attributed_facts("storm gamailine struck niora on tuesday .".split(), ex.facts, contexts) == {
        "storm gamailine", "niora", "tuesday"}
    assert "tuesday" not in attributed_facts("the report came out on tuesday afternoon .".split(), ex.facts, contexts)


def test_fact_metrics_reports_the_attributed_measures_when_given_contexts(long_):
    _, test = long_
    preds = [ex.target for ex in test]
    plain = fact_metrics(preds, test)
    full = fact_metrics(preds, test, contexts_of=slot_contexts)
    assert "attributed_fact_recall" not in plain
    assert full["attributed_fact_recall"] == full["attributed_late_fact_recall"] == 1.0
    cheat = frequent_single_facts(long_[0], 40)
    scores = fact_metrics([cheat] * len(test), test, contexts_of=slot_contexts)
    assert scores["late_fact_recall"] > 0.1 and scores["attributed_late_fact_recall"] <= CHEAT_BOUND
