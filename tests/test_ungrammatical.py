"""The marks of broken grammar that notebook 07 counts in RL's summaries, computed by hand."""
import pytest

from dca_course import metrics
from dca_course.data.synthnews import SUMMARY_VERBS, VERBS, load_synthnews
from dca_course.data.synthnews import templates

HAND_VERBS = {"beat", "praised", "has", "been"}


def test_repeated_bigram_and_stutter_by_hand():
    assert metrics.has_repeated_ngram("in the park in the rain".split(), 2)        # "in the" twice
    assert not metrics.has_repeated_ngram("the cat saw the dog".split(), 2)        # "the" twice, no bigram
    assert metrics.has_repeated_ngram("59 59 59".split(), 2)                       # overlapping "59 59"
    assert not metrics.has_repeated_ngram(["a"], 2) and not metrics.has_repeated_ngram([], 2)
    assert metrics.has_repeated_ngram("a b c a b c".split(), 3)
    assert metrics.has_stutter("least 59 59 wednesday".split())
    assert not metrics.has_stutter("the cat saw the dog".split())


def test_verbless_sentences_by_hand():
    tokens = "kolvar beat trinsby . least 59 wednesday in the vunnuul . coach morrow praised the defence . least 59".split()
    assert metrics.verbless_sentences(tokens, HAND_VERBS) == [
        "least 59 wednesday in the vunnuul .".split(), "least 59".split()]     # the unfinished last one counts
    assert metrics.verbless_sentences("kolvar beat trinsby .".split(), HAND_VERBS) == []
    assert metrics.verbless_sentences([], HAND_VERBS) == []


def test_ungrammatical_rates_by_hand():
    preds = ["kolvar beat trinsby . coach morrow praised the defence .".split(),  # clean
             "kolvar beat beat trinsby .".split(),                                  # stutter, no bigram twice
             "least 59 has been in in charge .".split(),                            # stutter, "in in" once
             "kolvar trinsby 3 - 1 . kolvar trinsby .".split(),                     # no verb, "kolvar trinsby" twice
             []]                                                                     # empty: no verb
    got = metrics.ungrammatical_rates(preds, HAND_VERBS)
    assert [metrics.has_repeated_ngram(p, 2) for p in preds] == [False, False, False, True, False]
    assert got == pytest.approx({"repeated_bigram": 1 / 5, "stutter": 2 / 5, "no_verb": 2 / 5, "any": 4 / 5})
    assert metrics.ungrammatical_rates([], HAND_VERBS) == {"repeated_bigram": 0, "stutter": 0, "no_verb": 0, "any": 0}


def test_every_synthnews_reference_sentence_has_a_verb_of_the_list():
    for long in (False, True):
        for split in load_synthnews(300, 50, 50, seed=3, long=long):
            for ex in split:
                assert metrics.verbless_sentences(ex.target, SUMMARY_VERBS) == [], ex.summary_text()
                assert not metrics.has_stutter(ex.target), ex.summary_text()


def test_few_article_sentences_lack_a_verb_of_the_list():
    train, _, _ = load_synthnews(200, 1, 1, seed=3, long=True)
    sentences = sum(len(metrics.verbless_sentences(ex.source, ())) for ex in train)     # no verbs: every sentence
    verbless = sum(len(metrics.verbless_sentences(ex.source, VERBS)) for ex in train)
    assert sentences > 5000 and verbless / sentences < 0.02, (verbless, sentences)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _strings(v)


def test_the_verb_lists_are_the_templates_own():
    summary = {w for t in templates.EVENT_TEMPLATES.values() for role, texts in t.items() if role.startswith("sum_")
               for w in " ".join(_strings(texts)).split()}
    summary |= {d[k] for d in templates.EARNINGS_DIRS for k in ("past", "move")}     # the slots of "{dir_past}"
    assert SUMMARY_VERBS <= summary, sorted(SUMMARY_VERBS - summary)
    written = {w for name, value in vars(templates).items() if name.isupper() and not name.endswith("VERBS")
               for s in _strings(value) for w in s.split()}
    assert VERBS <= written, sorted(VERBS - written)
