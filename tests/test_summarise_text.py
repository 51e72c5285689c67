"""dca_course.summarise: a learner's own text summarised by a shipped checkpoint, with p_gen and attention per
summary word.  The SynthNews checkpoints stand in for a real-news model: what is tested is the reading, the
search and the bookkeeping, not the summary's quality."""
from __future__ import annotations

import fnmatch
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from dca_course.data.cnndm import tokenize
from dca_course.decoding import greedy
from dca_course.errors import InputError
from dca_course.recipes import load_run
from dca_course.shipped import checkpoint_folder
from dca_course.summarise import (ArticleTextError, article_explorer, error_line, example_article, summarise_text,
                                  summary_html, text_example)

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = ("pg400-synthnews-long", "dca3-synthnews-long")


@pytest.fixture(scope="module")
def runs():
    torch.set_num_threads(1)
    return {name: load_run(checkpoint_folder(name), "cpu")[:3] for name in CHECKPOINTS}


@pytest.fixture(scope="module")
def summaries(runs):
    """Each checkpoint's summary of the stored example, twice (determinism)."""
    return {name: (summarise_text(*run, ""), summarise_text(*run, "")) for name, run in runs.items()}


# -- the stored example article -------------------------------------------------------------------------------

def test_the_example_article_is_long_enough_to_be_truncated_and_says_it_may_ship():
    text = example_article()
    tokens = tokenize(text)
    assert 450 <= len(text.split()) <= 700 and len(tokens) > 400
    header = (ROOT / "dca_course" / "data" / "example_article.txt").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("#") and "fictional" in header and "CC0" in header
    assert not text.lstrip().startswith("#")
    assert text_example("").source == text_example(text).source == tokens      # every line ends a sentence


def test_the_wheel_ships_the_example_article(course_wheel):
    rules = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    assert any(fnmatch.fnmatch("example_article.txt", p) for p in rules["dca_course.data"])
    assert "dca_course/data/example_article.txt" in zipfile.ZipFile(course_wheel).namelist()


# -- reading the text -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "   \n\n  \t"])
def test_empty_text_is_the_stored_example(runs, text):
    result = summarise_text(*runs["pg400-synthnews-long"], text)
    assert result.stored_example and result.tokens == tokenize(example_article())


@pytest.mark.parametrize("text", ["!!! ... ???", "-- ; :", "\u201c \u201d"])
def test_text_with_no_words_is_one_line_error(runs, text):
    with pytest.raises(ArticleTextError) as caught:
        summarise_text(*runs["pg400-synthnews-long"], text)
    assert isinstance(caught.value, InputError)
    line = error_line(caught.value)
    assert line.startswith("dca-course: error: the text holds no words") and "\n" not in line


def test_only_the_pointer_generator_and_dca(runs):
    recipe, model, vocab = runs["pg400-synthnews-long"]
    copynet = type("CopyNetRecipe", (), {"name": "copynet"})()
    with pytest.raises(InputError, match="a pointer-generator or dca run, not a copynet run"):
        summarise_text(copynet, model, vocab, "")


def test_lines_and_paragraphs_are_read_as_the_story_reader_reads_them():
    ex = text_example("Bridge to reopen\n\nThe bridge reopens on Saturday. It cost 4 million pounds.\nMore later")
    assert [len(p) for p in ex.paragraphs] == [1, 3]                  # headline; two sentences and a line
    assert ex.paragraphs[0] == [["bridge", "to", "reopen", "."]]      # a line without a full stop gets one
    assert ex.source[-3:] == ["more", "later", "."] and ex.target == []


# -- what a summary holds -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CHECKPOINTS)
def test_shapes_p_gen_and_attention(summaries, runs, name):
    result, again = summaries[name]
    recipe = runs[name][0]
    T, n = len(result.words), len(result.tokens)
    assert T > 0 and result.p_gen.shape == (T,) and result.attention.shape == (T, n)
    assert result.read == min(n, recipe.config.max_src)
    assert ((result.p_gen >= 0) & (result.p_gen <= 1)).all()
    assert np.allclose(result.attention[:, : result.read].sum(1), 1.0, atol=1e-5)
    assert (result.attention[:, result.read:] == 0).all() and (result.attention >= 0).all()
    assert again.words == result.words and np.array_equal(again.p_gen, result.p_gen)
    assert np.array_equal(again.attention, result.attention)


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_the_summary_is_the_recipes_own(summaries, runs, name):
    recipe, model, vocab = runs[name]
    assert summaries[name][0].words == recipe.predict(model, [text_example("")], vocab, "cpu")[0]


def repeated_trigrams(words) -> int:
    trigrams = list(zip(words, words[1:], words[2:]))
    return len(trigrams) - len(set(trigrams))


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_no_trigram_twice_when_asked_as_predict_does(runs, name):
    """A text that says one sentence 60 times: the SynthNews DCA repeats itself unless told not to."""
    recipe, model, vocab = runs[name]
    text = "the council closed the bridge on monday .\n" * 60
    result = summarise_text(recipe, model, vocab, text, block_ngram_repeat=3)
    assert result.words == recipe.predict(model, [text_example(text)], vocab, "cpu", block_ngram_repeat=3)[0]
    assert repeated_trigrams(result.words) == 0 < len(result.words)
    if name.startswith("dca3"):
        assert repeated_trigrams(summarise_text(recipe, model, vocab, text).words) > 0
        explorer = article_explorer(recipe, model, vocab, text, block_ngram_repeat=3)
        assert explorer.children[2].value == summary_html(result, 0)                # the explorer decodes alike


def test_greedy_when_beam_size_is_one(runs):
    recipe, model, vocab = runs["pg400-synthnews-long"]
    result = summarise_text(recipe, model, vocab, "", beam_size=1, max_words=12)
    batch = recipe.make_batch([text_example("")], vocab)
    ids = greedy(model, batch, 12).ids[0]
    assert result.words == vocab.decode(ids, batch.oovs[0]) and len(result.words) <= 12


def test_the_pointer_generator_reads_400_tokens_of_the_example(summaries):
    result = summaries["pg400-synthnews-long"][0]
    assert result.read == 400 < len(result.tokens)


def test_dca_attention_lies_on_the_article_as_its_agents_read_it(runs):
    """A text longer than DCA's 800 tokens: the agents' chunks, in order, are the first 800 tokens, and the
    attention laid back on them is 0 after them."""
    recipe, model, vocab = runs["dca3-synthnews-long"]
    text = "\n\n".join([example_article()] * 2)
    result = summarise_text(recipe, model, vocab, text, max_words=10)
    chunks = recipe.make_batch([text_example(text)], vocab).chunks[0]
    assert [t for c in chunks for t in c] == result.tokens[: result.read] and result.read == 800
    assert np.allclose(result.attention.sum(1), 1.0, atol=1e-5) and (result.attention[:, 800:] == 0).all()


# -- the pictures -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CHECKPOINTS)
def test_html_has_one_span_per_summary_word_and_a_legend(summaries, name):
    result = summaries[name][0]
    page = summary_html(result, word=2)
    assert page.count('class="dca-word"') == len(result.words)
    assert page.count('class="dca-legend"') == 1 and "copied (p_gen 0)" in page and "generated (p_gen 1)" in page
    assert page.count("outline:") == 1 and "<script" not in page
    assert page.count('class="dca-cut"') == (result.read < len(result.tokens))


def test_the_explorer_shows_its_picture_without_a_widget_front_end_and_reports_bad_text(runs, summaries):
    explorer = article_explorer(*runs["pg400-synthnews-long"])
    bundle = explorer._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["text/html"] == summary_html(summaries["pg400-synthnews-long"][0], 0)
    box, (button, slider), picture = explorer.children[0], explorer.children[1].children, explorer.children[2]
    slider.value = 3
    assert picture.value == summary_html(summaries["pg400-synthnews-long"][0], 3)
    box.value = "?!"
    button.click()
    assert picture.value.count("dca-course: error: ") == 1 and "dca-word" not in picture.value


def test_the_explorer_opens_at_the_word_asked_for_and_a_new_summary_starts_at_word_0(runs, summaries):
    result = summaries["pg400-synthnews-long"][0]
    explorer = article_explorer(*runs["pg400-synthnews-long"], word=2)
    (button, slider), picture = explorer.children[1].children, explorer.children[2]
    assert slider.value == 2 and picture.value == summary_html(result, 2)
    button.click()
    assert slider.value == 0 and picture.value == summary_html(result, 0)
    far = article_explorer(*runs["pg400-synthnews-long"], word=10_000)      # past the summary: its last word
    assert far.children[1].children[1].value == len(result.words) - 1
    for bad in (-1, 1.5, True):
        with pytest.raises(InputError, match="word"):
            article_explorer(*runs["pg400-synthnews-long"], word=bad)


def test_checkpoints_load_with_weights_only(monkeypatch):
    calls, load = [], torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: calls.append(k.get("weights_only")) or load(*a, **k))
    load_run(checkpoint_folder("pg400-synthnews-long"), "cpu")
    assert calls == [True]
