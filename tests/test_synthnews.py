"""SynthNews: determinism, article and summary structure, facts, statistics, saving."""
from __future__ import annotations

import os
import random
import time

import pytest

from dca_course.data import synthnews as sn
from dca_course.data.examples import Example
from dca_course.data.synthnews import (EVENT_KINDS, contains, dataset_stats, fact_recall, generate,
                                       hallucinated_entities, load_synthnews, read_jsonl, write_jsonl)

REQUIRED_KINDS = {"acquisition", "match_result", "election", "storm", "court_ruling",
                  "product_launch", "player_transfer", "scientific_discovery"}


@pytest.fixture(scope="module")
def corpus():
    return generate(500, seed=0)


@pytest.fixture(scope="module")
def long_corpus():
    train, valid, test = load_synthnews(0, 0, 200, seed=0, long=True)
    return test


def flat(sents):
    return [t for s in sents for t in s]


# -- determinism ---------------------------------------------------------------------------
def test_same_seed_same_examples_and_prefix_stable():
    a, b = generate(40, seed=3), generate(40, seed=3)
    assert a == b
    assert generate(15, seed=3) == a[:15]
    c = generate(40, seed=4)
    assert [e.source for e in a] != [e.source for e in c]


def test_independent_of_global_random_state():
    random.seed(1)
    a = generate(20, seed=7)
    random.seed(999)
    state = random.getstate()
    b = generate(20, seed=7)
    assert a == b
    assert random.getstate() == state, "generate must not consume the global random stream"


def test_load_synthnews_is_deterministic_and_splits_are_disjoint():
    tr, va, te = load_synthnews(150, 50, 50, seed=1)
    tr2, va2, te2 = load_synthnews(150, 50, 50, seed=1)
    assert (tr, va, te) == (tr2, va2, te2)
    assert (len(tr), len(va), len(te)) == (150, 50, 50)
    sources = [tuple(e.source) for e in tr + va + te]
    assert len(set(sources)) == len(sources), "splits share an example"
    ids = [e.id for e in tr + va + te]
    assert len(set(ids)) == len(ids)
    assert load_synthnews(5, 0, 0, seed=2)[0] != tr[:5]


# -- articles ------------------------------------------------------------------------------
def test_paragraph_counts_and_roles(corpus):
    counts = {len(e.paragraphs) for e in corpus}
    assert counts == {3, 4, 5, 6}
    for e in corpus:
        roles = e.facts["paragraph_roles"]
        assert len(roles) == len(e.paragraphs)
        assert roles[0] == "lead" and "figures" in roles
        assert len(set(roles)) == len(roles)
        if len(roles) >= 4:
            assert "distractor" in roles
    orders = {tuple(e.facts["paragraph_roles"]) for e in corpus}
    assert len(orders) > 50, "paragraph orders after the lead should vary"


def test_custom_paragraph_range_and_validation():
    assert {len(e.paragraphs) for e in generate(60, seed=2, min_paragraphs=4, max_paragraphs=4)} == {4}
    with pytest.raises(ValueError):
        generate(3, min_paragraphs=1)
    with pytest.raises(ValueError):
        generate(3, min_paragraphs=5, max_paragraphs=4)


def test_long_articles_have_5_to_6_paragraphs(long_corpus, corpus):
    assert {len(e.paragraphs) for e in long_corpus} == {5, 6}
    mean_long = sum(len(e.source) for e in long_corpus) / len(long_corpus)
    mean_short = sum(len(e.source) for e in corpus) / len(corpus)
    assert 300 <= mean_long <= 600
    assert mean_long > mean_short + 80


def test_tokens_and_structure(corpus):
    for e in corpus[:200]:
        assert e.source == flat(flat(e.paragraphs))
        assert e.target == flat(e.target_sents)
        for tok in e.source + e.target:
            assert tok and tok == tok.lower() and " " not in tok
        for s in e.source_sents + e.target_sents:
            assert s[-1] in {".", '"'}, s
        assert e.meta["dataset"] == "synthnews"


def test_distractor_paragraph_is_about_other_entities(corpus):
    with_distractor = [e for e in corpus if "distractor" in e.facts["paragraph_roles"]]
    assert len(with_distractor) > 300
    for e in with_distractor:
        i = e.facts["paragraph_roles"].index("distractor")
        para = set(flat(e.paragraphs[i]))
        d_toks = set(e.facts["distractor_entity_tokens"])
        assert d_toks and d_toks <= para
        assert e.facts["distractor_entities"]
        assert not d_toks & set(e.facts["entity_tokens"])
        assert e.facts["distractor_event"] in EVENT_KINDS
    without = [e for e in corpus if "distractor" not in e.facts["paragraph_roles"]]
    assert all(e.facts["distractor_entity_tokens"] == [] for e in without)


def test_several_phrasings_per_role():
    for kind, spec in sn.KINDS.items():
        for key in ("lead", "context", "outlook", "reaction", "quotes", "sum_main", "sum_figure", "sum_extra"):
            assert len(spec[key]) >= 3, (kind, key)
        for key in ("background", "figures"):
            assert len(spec[key]) >= 3, (kind, key)
            for group in spec[key]:
                assert len(group) >= 3, (kind, key)
        for t in spec["lead"]:
            assert set(spec["core"]) <= t.slots, (kind, "every lead must state the core slots")
    assert len(sn.QUOTE_FIRST) >= 3 and len(sn.QUOTE_SECOND) >= 3


def test_summary_templates_are_not_article_templates():
    for kind, spec in sn.KINDS.items():
        article = set(spec["lead"]) | set(spec["context"]) | set(spec["outlook"]) | set(spec["reaction"])
        for group in spec["background"] + spec["figures"]:
            article |= set(group)
        for key in ("sum_main", "sum_figure", "sum_extra"):
            for tmpl in spec[key]:
                assert tmpl not in article, (kind, key, tmpl)


def test_every_template_slot_is_filled_by_its_facts():
    rng = random.Random(0)
    world = sn.World(0)
    for kind, spec in sn.KINDS.items():
        for _ in range(5):
            slots = spec["facts"](rng, world, set())
            groups = [t for g in spec["background"] + spec["figures"] for t in g]
            for tmpl in (list(spec["lead"]) + list(spec["context"]) + list(spec["outlook"])
                         + list(spec["reaction"]) + list(spec["quotes"]) + list(spec["sum_main"])
                         + list(spec["sum_figure"]) + list(spec["sum_extra"]) + groups):
                missing = tmpl.slots - set(slots)
                assert not missing, (kind, missing)


# -- summaries -----------------------------------------------------------------------------
def test_summaries_have_2_to_3_sentences_and_state_every_key_fact(corpus):
    lengths = [len(e.target_sents) for e in corpus]
    assert set(lengths) == {2, 3}
    for e in corpus:
        keys = e.facts["key_facts"]
        assert keys
        for f in keys:
            assert contains(e.target, f), (e.id, f)
            assert contains(e.source, f), (e.id, f)
        assert fact_recall(e.target, e.facts) == 1.0


def test_summary_uses_a_fact_found_only_outside_the_lead(corpus):
    for e in corpus:
        lead = flat(e.paragraphs[0])
        rest = flat(flat(e.paragraphs[1:]))
        outside = e.facts["outside_lead_facts"]
        assert outside, e.id
        for f in outside:
            assert f in e.facts["key_facts"]
            assert contains(e.target, f) and contains(rest, f) and not contains(lead, f), (e.id, f)
            assert 0 not in e.facts["fact_paragraphs"][f]


def test_summaries_never_mention_distractor_entities(corpus):
    for e in corpus:
        assert not set(e.facts["distractor_entity_tokens"]) & set(e.target), e.id
        assert not any(contains(e.target, name) for name in e.facts["distractor_entities"])


def test_summaries_paraphrase_and_name_key_entities(corpus):
    for e in corpus:
        assert e.facts["entities"], e.id
        for name in e.facts["entities"]:
            assert contains(e.target, name)
        assert set(e.facts["entity_tokens"]) <= set(e.target)
        assert hallucinated_entities(e.target, e) == []
        source_sents = {tuple(s) for s in e.source_sents}
        assert not any(tuple(s) in source_sents for s in e.target_sents), "a summary copied a sentence"


def test_all_event_kinds_appear(corpus):
    kinds = {e.facts["event"] for e in corpus}
    assert REQUIRED_KINDS <= kinds
    assert kinds == set(EVENT_KINDS) and len(kinds) >= 8


def test_entity_tokens_are_names_not_common_words(corpus):
    for e in corpus[:200]:
        ents = set(e.facts["all_entity_tokens"])
        assert set(e.facts["entity_tokens"]) <= ents
        assert set(e.facts["distractor_entity_tokens"]) <= ents
        assert not ents & sn.CLOSED_WORDS
        assert ents <= set(e.source) | set(e.target)
        for n in e.facts["numbers"]:
            assert contains(e.source, n)


def test_metric_helpers():
    e = Example.from_document([[["orvena", "labs", "paid", "$", "4", "billion", "."]]],
                              [["orvena", "labs", "paid", "."]],
                              facts={"key_facts": ["orvena labs", "$ 4 billion"],
                                     "all_entity_tokens": ["orvena", "tamsa"]})
    assert contains(["a", "b", "c"], "b c") and not contains(["a", "b", "c"], "a c")
    assert contains(["a"], ("a",)) and not contains([], "a")
    assert fact_recall(e.target, e.facts) == 0.5
    assert hallucinated_entities(["tamsa", "orvena", "paid"], e) == ["tamsa"]


# -- statistics ----------------------------------------------------------------------------
def test_dataset_stats_at_default_settings():
    train, _, test = load_synthnews(2000, 0, 300, seed=0)
    st = dataset_stats(train, test, vocab_size=2000)
    assert st["vocab_size"] == 2000
    assert st["oov_entity_share"] >= 0.30
    assert st["novel_bigram_rate"] > 0.35
    assert 25 < st["lead3_rouge"]["rouge1"] < 60
    assert 5 < st["lead3_rouge"]["rouge2"] < st["lead3_rouge"]["rouge1"]
    assert 0 < st["lead3_fact_recall"] < 0.9
    assert 150 <= st["mean_source_tokens"] <= 400
    assert 30 <= st["mean_summary_tokens"] <= 70
    assert 2 <= st["mean_summary_sentences"] <= 3


def test_dataset_stats_counts_oov_entities_exactly():
    src = [[["alpha", "alpha", "alpha", "beta", "beta", "zork", ".", ".", "."]]]
    train = [Example.from_document(src, [["alpha", "."]]) for _ in range(2)]
    train.append(Example.from_document([[["rare"]]], [["x"]]))  # counts: . 6, alpha 6, beta 4, zork 2, rare 1
    test = [Example.from_document([[["alpha", "qux", "zork", "."]]], [["qux", "zork", "beta", "."]],
                                  facts={"all_entity_tokens": ["qux", "zork"], "key_facts": ["qux"]})]
    st = dataset_stats(train, test, vocab_size=3)  # vocabulary: '.', 'alpha', 'beta'
    assert st["oov_entity_share"] == pytest.approx(1.0)
    st = dataset_stats(train, test, vocab_size=4)  # + 'zork'
    assert st["oov_entity_share"] == pytest.approx(0.5)
    assert st["novel_bigram_rate"] == pytest.approx(2 / 3)  # (qux zork) is in the source
    assert st["lead3_fact_recall"] == 1.0


def test_generation_is_fast():
    t = time.process_time()
    generate(1000, seed=11)
    assert time.process_time() - t < 3.0


# -- saving --------------------------------------------------------------------------------
def test_jsonl_round_trip(tmp_path, corpus):
    path = tmp_path / "sub" / "synthnews.jsonl"
    examples = corpus[:50] + [Example(["a", "b"], ["c"], id="plain")]
    assert write_jsonl(examples, path) == str(path)
    back = read_jsonl(path)
    assert back == examples
    write_jsonl(corpus[:3], path)  # overwrite in place
    assert read_jsonl(path) == corpus[:3]
    assert os.listdir(path.parent) == ["synthnews.jsonl"], "no temporary files may be left behind"


def test_read_jsonl_names_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x", "source": ["a"], "target": ["b"]}\nnot json\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        read_jsonl(path)
