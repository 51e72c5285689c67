"""CNN/DailyMail readers: .story files, line files (plain and TAB-separated), truncation."""
from __future__ import annotations

import os
import sys
import time

import pytest

from dca_course.data.cnndm import (count_lines, load_cnndm, load_hf, parse_story, read_line_files,
                                   read_story_folder, split_sentences, tokenize, truncate)
from dca_course.data.examples import Example

REAL = "/work/shared/data/cnndm"
needs_real = pytest.mark.skipif(not os.path.isfile(os.path.join(REAL, "test.source")),
                                reason="the CNN/DailyMail test files are not on this machine")

STORY = """(CNN) -- The storm hit the coast on Monday. It was "the worst in years," officials said.

Mr. Smith didn't agree with the U.S. plan, a spokesman said

Residents were told to leave by 5 p.m. on Monday. Nobody knows how many stayed!

@highlight

The storm hit the coast on Monday

@highlight

Mr. Smith didn't agree with the plan.
"""


def flat(sents):
    return [t for s in sents for t in s]


# -- tokenizing and sentences ----------------------------------------------------------------
@pytest.mark.parametrize("text, tokens", [
    ('He said: "It isn\'t over," at 10:30.', ["he", "said", ":", "``", "it", "is", "n't", "over", ",", "''",
                                               "at", "10:30", "."]),
    ("Mr. O'Neill paid $5.2 million (40%) in the U.S.", ["mr.", "o'neill", "paid", "$", "5.2", "million", "(",
                                                         "40", "%", ")", "in", "the", "u.s."]),
    ("The dogs' toys -- 12,000 of them... weren't cheap", ["the", "dogs", "'", "toys", "--", "12,000", "of",
                                                           "them", "...", "were", "n't", "cheap"]),
    ("\u201cGreat,\u201d she said. It\u2019s over.", ["``", "great", ",", "''", "she", "said", ".", "it", "'s",
                                                      "over", "."]),
])
def test_tokenize_approximates_ptb(text, tokens):
    assert tokenize(text) == tokens


def test_split_sentences_keeps_closing_quotes_and_brackets():
    toks = "he left . `` why ? '' she asked . ( it was late . ) then nothing".split()
    assert split_sentences(toks) == [["he", "left", "."], ["``", "why", "?", "''"], ["she", "asked", "."],
                                     ["(", "it", "was", "late", ".", ")"], ["then", "nothing"]]
    assert split_sentences([]) == []


# -- .story files ----------------------------------------------------------------------------
def test_parse_story_paragraphs_sentences_highlights():
    ex = parse_story(STORY, id="abc")
    assert ex.id == "abc"
    assert len(ex.paragraphs) == 3
    assert [len(p) for p in ex.paragraphs] == [2, 1, 2]
    assert ex.paragraphs[0][0][:4] == ["(", "cnn", ")", "--"]
    assert ex.paragraphs[0][1][-5:] == [",", "''", "officials", "said", "."]
    assert ex.paragraphs[1][0][-3:] == ["spokesman", "said", "."], "a missing full stop is added"
    assert "p.m." in ex.paragraphs[2][0]
    assert ex.target_sents == [["the", "storm", "hit", "the", "coast", "on", "monday", "."],
                               ["mr.", "smith", "did", "n't", "agree", "with", "the", "plan", "."]]
    assert ex.source == flat(flat(ex.paragraphs)) and ex.target == flat(ex.target_sents)
    assert parse_story("no highlights here.\n") is None
    assert parse_story("@highlight\n\nonly a highlight\n") is None


def test_read_story_folder(tmp_path):
    for name in ("b", "a", "c"):
        (tmp_path / f"{name}.story").write_text(STORY.replace("Monday", name))
    (tmp_path / "d.story").write_text("an article without highlights .\n")
    (tmp_path / "notes.txt").write_text("ignored")
    with pytest.warns(UserWarning, match="1 .story file"):
        exs = read_story_folder(tmp_path)
    assert [e.id for e in exs] == ["a", "b", "c"]
    assert exs[1].target_sents[0][-2] == "b"
    assert [e.id for e in read_story_folder(tmp_path, limit=2)] == ["a", "b"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no .story files"):
        read_story_folder(empty)


# -- line files ------------------------------------------------------------------------------
SOURCES = [
    "the first article . it has two sentences !",
    "second article here ? yes . `` quoted . ''",
    "third article without a full stop",
]
TARGETS = [
    ["first summary .", "second sentence ."],
    ["only one sentence ."],
    ["a . b .", "c ."],
]


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_read_line_files_tab_separated_targets(tmp_path):
    src = write_lines(tmp_path / "test.source", SOURCES)
    tgt = write_lines(tmp_path / "test.target.sents.tsv", ["\t".join(t) for t in TARGETS])
    exs = read_line_files(src, tgt)
    assert [e.id for e in exs] == ["test-1", "test-2", "test-3"]
    assert exs[0].target_sents == [["first", "summary", "."], ["second", "sentence", "."]]
    assert exs[2].target_sents == [["a", ".", "b", "."], ["c", "."]], "TABs, not full stops, split a .tsv"
    assert exs[0].paragraphs == [[["the", "first", "article", "."]], [["it", "has", "two", "sentences", "!"]]]
    assert exs[1].source_sents[-1] == ["``", "quoted", ".", "''"]
    assert exs[2].source_sents == [["third", "article", "without", "a", "full", "stop"]]
    assert exs[0].meta["line"] == 1


def test_read_line_files_plain_target_and_ranges(tmp_path):
    src = write_lines(tmp_path / "val.source", SOURCES)
    tgt = write_lines(tmp_path / "val.target", [" ".join(t) for t in TARGETS])
    exs = read_line_files(src, tgt)
    assert exs[2].target_sents == [["a", "."], ["b", "."], ["c", "."]]
    assert [e.id for e in read_line_files(src, tgt, start=1)] == ["val-2", "val-3"]
    assert [e.id for e in read_line_files(src, tgt, start=1, limit=1)] == ["val-2"]
    assert [e.id for e in read_line_files(src, tgt, limit=2)] == ["val-1", "val-2"]
    assert read_line_files(src, tgt, start=5) == []
    with pytest.raises(ValueError):
        read_line_files(src, tgt, start=-1)


def test_mismatched_line_counts_name_both_files(tmp_path):
    src = write_lines(tmp_path / "test.source", SOURCES)
    tgt = write_lines(tmp_path / "test.target", ["one .", "two ."])
    with pytest.raises(ValueError) as err:
        read_line_files(src, tgt, limit=1)
    msg = str(err.value)       # the shorter file, at the line it lacks, and the longer one's count
    assert msg.startswith(f"{tgt}:3: the file ends here, but {src} has 3 lines")


def test_empty_line_is_named(tmp_path):
    src = write_lines(tmp_path / "test.source", ["a .", "", "c ."])
    tgt = write_lines(tmp_path / "test.target", ["x .", "y .", "z ."])
    assert len(read_line_files(src, tgt, limit=1)) == 1
    with pytest.raises(ValueError, match=r"test\.source:2: empty line"):
        read_line_files(src, tgt)


def test_count_lines(tmp_path):
    assert count_lines(write_lines(tmp_path / "a", ["x", "y"])) == 2
    (tmp_path / "b").write_text("x\ny")
    assert count_lines(tmp_path / "b") == 2
    (tmp_path / "c").write_text("")
    assert count_lines(tmp_path / "c") == 0


# -- truncation ------------------------------------------------------------------------------
def test_truncate_to_400_and_100_keeps_structure():
    paragraphs = [[[f"p{p}s{s}t{t}" for t in range(20)] for s in range(3)] for p in range(10)]  # 600 tokens
    summary = [[f"s{s}t{t}" for t in range(30)] for s in range(5)]  # 150 tokens
    ex = Example.from_document(paragraphs, summary, facts={"k": 1}, id="x")
    cut = truncate(ex)
    assert len(cut.source) == 400 and len(cut.target) == 100
    assert cut.source == ex.source[:400] and cut.target == ex.target[:100]
    assert cut.source == flat(flat(cut.paragraphs)) and cut.target == flat(cut.target_sents)
    assert len(cut.paragraphs) == 7 and len(cut.paragraphs[-1]) == 2 and len(cut.paragraphs[-1][-1]) == 20
    assert [len(s) for s in cut.target_sents] == [30, 30, 30, 10]
    assert cut.facts == {"k": 1} and cut.id == "x"
    assert ex.source != cut.source, "the original is not changed"
    odd = truncate(ex, max_source=405, max_target=7)
    assert [len(s) for s in odd.paragraphs[-1]] == [20, 20, 5] and odd.target_sents == [summary[0][:7]]


def test_truncate_short_and_flat_examples():
    ex = Example.from_document([[["a", "b", "."]]], [["c", "."]])
    cut = truncate(ex)
    assert (cut.source, cut.target, cut.paragraphs, cut.target_sents) == \
           (ex.source, ex.target, ex.paragraphs, ex.target_sents)
    flat_ex = Example(list("abcdef"), list("xyz"))
    cut = truncate(flat_ex, max_source=4, max_target=2)
    assert cut.source == list("abcd") and cut.target == list("xy") and cut.paragraphs is None


# -- load_cnndm and load_hf ------------------------------------------------------------------
def test_load_cnndm_finds_each_layout(tmp_path):
    lines = tmp_path / "lines"
    lines.mkdir()
    write_lines(lines / "test.source", SOURCES)
    write_lines(lines / "test.target", [" ".join(t) for t in TARGETS])
    assert load_cnndm(lines)[2].target_sents == [["a", "."], ["b", "."], ["c", "."]]
    write_lines(lines / "test.target.sents.tsv", ["\t".join(t) for t in TARGETS])
    exs = load_cnndm(lines, limit=2, start=1)
    assert [len(e.target_sents) for e in exs] == [1, 2], "the .sents.tsv variant is preferred"
    assert load_cnndm(lines / "test.source")[0].id == "test-1"
    cut = load_cnndm(lines, max_source=3, max_target=2)
    assert all(len(e.source) <= 3 and len(e.target) <= 2 for e in cut)

    stories = tmp_path / "stories_root" / "stories"
    stories.mkdir(parents=True)
    (stories / "x.story").write_text(STORY)
    assert [e.id for e in load_cnndm(tmp_path / "stories_root")] == ["x"]
    assert [e.id for e in load_cnndm(stories)] == ["x"]


def test_load_cnndm_says_what_it_looked_for(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        load_cnndm(tmp_path, split="valid")
    msg = str(err.value)
    assert "valid.source" in msg and ".story" in msg and str(tmp_path) in msg
    with pytest.raises(FileNotFoundError):
        load_cnndm(tmp_path / "missing")


def test_load_hf_without_datasets_explains(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes `import datasets` fail
    with pytest.raises(ImportError, match="pip install datasets"):
        load_hf("test", limit=2)
    with pytest.raises(ValueError, match="unknown split"):
        load_hf("dev")


# -- the real test set (skipped where it is absent) ------------------------------------------
@needs_real
def test_real_cnndm_first_lines_and_counts():
    t = time.time()
    for name in ("test.source", "test.target", "test.target.sents.tsv"):
        assert count_lines(os.path.join(REAL, name)) == 11_490
    exs = load_cnndm(REAL, limit=5)
    assert [e.id for e in exs] == [f"test-{i}" for i in range(1, 6)]
    with open(os.path.join(REAL, "test.target.sents.tsv"), encoding="utf-8") as f:
        heads = [next(f).rstrip("\n") for _ in range(5)]
    for ex, line in zip(exs, heads):
        assert [" ".join(s) for s in ex.target_sents] == line.split("\t")
        assert len(ex.source) > 50 and ex.source == flat(flat(ex.paragraphs))
        assert len(ex.source_sents) > 2
    plain = read_line_files(os.path.join(REAL, "test.source"), os.path.join(REAL, "test.target"), limit=5)
    assert [e.target for e in plain] == [e.target for e in exs]
    icc = read_line_files(os.path.join(REAL, "test.source"), os.path.join(REAL, "test.target.sents.tsv"),
                          start=625, limit=1)[0]
    assert icc.id == "test-626" and "palestinian" in icc.source[:20]
    assert " ".join(icc.target).endswith("war crimes investigations against israelis .")
    cut = truncate(icc)
    assert len(cut.source) == 400 and len(cut.target) <= 100
    assert time.time() - t < 10
