"""CNN/DailyMail: readers for the usual file layouts, all yielding :class:`Example`.

Three layouts are read:

* a folder of ``.story`` files (the original CNN and DailyMail downloads): the article, then
  highlights, each after a line ``@highlight``.  Paragraphs are split at blank lines,
  sentences with a small splitter, and the text is tokenized like the Stanford PTB tokenizer
  that See et al. (2017) used (:func:`tokenize`): lower case, punctuation split off, double
  quotes as `````` and ``''``;
* line files, one example per line: ``{split}.source`` (articles, already tokenized and
  lower-cased) with ``{split}.target`` (reference on one line) or ``{split}.target.sents.tsv``
  (reference sentences separated by TABs; use it for ROUGE-Lsum, which needs the breaks);
* the Hugging Face ``cnn_dailymail`` data set (:func:`load_hf`, needs ``pip install datasets``
  and a network connection).

:func:`load_cnndm` picks the layout of a folder by itself.  :func:`truncate` cuts an example to
the first 400 source and 100 target tokens, as See et al. (2017) trained and tested.

Nothing here downloads or ships the data: point the readers at a copy you have.
"""
from __future__ import annotations

import glob
import os
import re
import warnings
from itertools import islice
from typing import Iterable, Sequence

from ..errors import InputError
from ..io import text_lines
from .examples import Example

__all__ = [
    "read_cnndm_splits", "tokenize", "split_sentences", "parse_story", "read_story_folder", "read_line_files",
    "count_lines", "truncate", "load_hf", "load_cnndm", "fix_missing_period",
]

SENTENCE_ENDERS = frozenset((".", "!", "?"))
# Tokens that close a sentence together with its full stop: '... he said . ''' or '... ) .'
_CLOSERS = frozenset(("''", "'", ")", "]", "}", "-rrb-", "-rsb-"))

# -- tokenizing ----------------------------------------------------------------------------
_ABBREVIATIONS = (
    "mr", "mrs", "ms", "dr", "prof", "gen", "sen", "rep", "gov", "lt", "col", "sgt", "capt",
    "jr", "sr", "st", "inc", "co", "corp", "ltd", "vs", "jan", "feb", "aug", "sept",
    "oct", "nov", "dec", "mt", "ft", "rev", "pres",
)
_TOKEN_RE = re.compile(
    r"``|''"                                   # quotes, already in PTB form
    r"|n't(?![a-z])"                           # did|n't
    r"|'(?:s|re|ve|ll|m|d)(?![a-z])"           # he|'s, they|'re
    r"|\.\.\.|--"                              # ellipsis, dash
    r"|(?:" + "|".join(_ABBREVIATIONS) + r")\.(?=\s|$)(?!\s*$)"  # mr. (not at the very end)
    r"|(?:[a-z]\.){2,}"                        # u.s. a.m.
    r"|\d+(?:[.,:/]\d+)+"                      # 12,000 4.2 10:30 9/11
    r"|[a-z0-9]+(?:[-&'][a-z0-9]+)*"           # words, hyphenated words, at&t, o'neill
    r"|\S",                                    # anything else, one character
)
_CONTRACTION_RE = re.compile(r"([a-z])(n't|'s|'re|'ve|'ll|'m|'d)(?![a-z])")


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens, roughly as Stanford's PTB tokenizer (CoreNLP) splits them.

    >>> tokenize('He said: "It isn\\'t over," at 10:30 in the U.S.')
    ['he', 'said', ':', '``', 'it', 'is', "n't", 'over', ',', "''", 'at', '10:30', 'in', 'the', 'u.s.']
    """
    text = text.lower()
    text = (text.replace("\u201c", " `` ").replace("\u201d", " '' ")
            .replace("\u2018", "'").replace("\u2019", "'").replace("\u2014", " -- ")
            .replace("\u2013", " -- ").replace("\u00a0", " "))
    # straight double quotes: opening at the start or after a space/bracket, closing elsewhere
    text = re.sub(r'(^|[\s(\[{])"', r"\1 `` ", text)
    text = text.replace('"', " '' ")
    text = _CONTRACTION_RE.sub(r"\1 \2", text)
    return _TOKEN_RE.findall(text)


def split_sentences(tokens: Sequence[str]) -> list[list[str]]:
    """Split tokens after ``.``, ``!`` or ``?`` (closing quotes and brackets stay with it)."""
    sents, cur = [], []
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        cur.append(tok)
        i += 1
        if tok in SENTENCE_ENDERS:
            while i < n and tokens[i] in _CLOSERS:
                cur.append(tokens[i])
                i += 1
            sents.append(cur)
            cur = []
    if cur:
        sents.append(cur)
    return sents


def fix_missing_period(tokens: list) -> list:
    """See et al. add a full stop to lines that lack final punctuation (headlines, bylines)."""
    if tokens and tokens[-1] not in SENTENCE_ENDERS and tokens[-1] not in _CLOSERS:
        return tokens + ["."]
    return tokens


# -- .story files --------------------------------------------------------------------------
def parse_story(text: str, id: str = "") -> Example | None:
    """One ``.story`` file's text as an example; ``None`` if it has no article or no highlight."""
    article_lines, highlights = [], []
    next_is_highlight = False
    paragraphs, para = [], []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("@highlight"):
            next_is_highlight = True
            continue
        if not line:
            if para and not highlights and not next_is_highlight:
                paragraphs.append(para)
                para = []
            continue
        if next_is_highlight:
            toks = fix_missing_period(tokenize(line))
            if toks:
                highlights.append(toks)
            next_is_highlight = False
            continue
        if highlights:  # text after the highlights began but not after @highlight: keep it too
            highlights[-1] = highlights[-1] + tokenize(line)
            continue
        toks = fix_missing_period(tokenize(line))
        if toks:
            para.extend(toks)
            article_lines.append(toks)
    if para:
        paragraphs.append(para)
    if not article_lines or not highlights:
        return None
    structured = [split_sentences(p) for p in paragraphs]
    return Example.from_document(structured, highlights, id=id, meta={"dataset": "cnndm"})


def read_story_folder(folder, limit: int | None = None) -> list[Example]:
    """The ``.story`` files of a folder (sorted by name; the first ``limit`` of them).

    Stories with no article text or no highlight are skipped with a warning (the CNN
    download holds a few such files).
    """
    folder = os.fspath(folder)
    paths = sorted(glob.glob(os.path.join(folder, "*.story")))
    if not paths:
        raise FileNotFoundError(f"no .story files in {folder}")
    out, skipped = [], 0
    for path in paths:
        if limit is not None and len(out) >= limit:
            break
        ex = parse_story(_story_text(path), id=os.path.splitext(os.path.basename(path))[0])
        if ex is None:
            skipped += 1
        else:
            out.append(ex)
    if skipped:
        warnings.warn(f"{skipped} .story file(s) in {folder} had no article or no highlight and were skipped")
    return out


def _story_text(path) -> str:
    """A ``.story`` file's text.  Bytes that are not UTF-8 become U+FFFD (the text around them is
    kept, as the CNN download's stories are read elsewhere); a NUL byte (a binary or half-written
    file) raises :class:`LineFileError` ``FILE:LINE:``."""
    with open(path, "rb") as f:
        data = f.read()
    nul = data.find(b"\0")
    if nul >= 0:
        lineno = data.count(b"\n", 0, nul) + 1
        raise LineFileError(f"{path}:{lineno}: a NUL byte: not a text file "
                            "(binary, or written only in part)")
    return data.decode("utf-8", errors="replace")


# -- line files ----------------------------------------------------------------------------
class LineFileError(InputError):
    """CNN/DailyMail files that cannot be read as examples; the message starts ``FILE:LINE:`` or ``FILE:``."""


def count_lines(path) -> int:
    """Number of lines in a file (a last line without a newline counts), read in blocks."""
    n, last = 0, b"\n"
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def _source_example(line: str) -> list[list[list[str]]]:
    """A tokenized article line -> paragraphs (one sentence each)."""
    return [[s] for s in split_sentences(line.lower().split())]


def _target_sents(line: str, tab_separated: bool) -> list[list[str]]:
    if tab_separated:
        return [s.lower().split() for s in line.split("\t") if s.strip()]
    return split_sentences(line.lower().split())


def read_line_files(source_path, target_path, limit: int | None = None, start: int = 0) -> list[Example]:
    """Examples from a source file and a target file with one example per line.

    ``start`` lines are skipped and then ``limit`` are read (all if ``None``): ``start=0,
    limit=10_000`` reads lines 1-10,000 (1-based, as an editor numbers them), ``start=10_000,
    limit=5`` lines 10,001-10,005.  The source is split into sentences at ``.``/``!``/``?``
    tokens, each sentence its own paragraph (the line files keep no paragraph breaks).  A
    target ending in ``.tsv``, or with TABs, has one sentence per TAB-separated field;
    otherwise it is split like the source.  Ids are ``{file stem}-{line}`` (1-based).

    Raises :class:`LineFileError` (an :class:`InputError`: one line ``FILE:LINE: ...``) if the two
    files have different numbers of lines, or if a line that is read is empty, not UTF-8 or holds
    a NUL byte.  CRLF line ends read as LF ones; a last line without a newline is read.
    """
    source_path, target_path = os.fspath(source_path), os.fspath(target_path)
    if start < 0 or (limit is not None and limit < 0):
        raise ValueError(f"start and limit must be >= 0, got start={start}, limit={limit}")
    n_src, n_tgt = count_lines(source_path), count_lines(target_path)
    if n_src != n_tgt:
        (short, n_short), (long, n_long) = sorted([(source_path, n_src), (target_path, n_tgt)], key=lambda x: x[1])
        raise LineFileError(f"{short}:{n_short + 1}: the file ends here, but {long} has {n_long:,} lines: "
                            "the files must hold the same examples line by line")
    tsv = target_path.endswith(".tsv")
    stem = os.path.basename(source_path).split(".")[0]
    stop = None if limit is None else start + limit
    out = []
    lines = zip(text_lines(source_path, start), text_lines(target_path, start))
    for (lineno, src), (_, tgt) in islice(lines, 0, None if stop is None else stop - start):
        for path, line in ((source_path, src), (target_path, tgt)):
            if not line.strip():
                raise LineFileError(f"{path}:{lineno}: empty line (one example a line: an article in "
                                    ".source, its summary in .target)")
        paragraphs = _source_example(src)
        sents = _target_sents(tgt, tsv or "\t" in tgt)
        out.append(Example.from_document(paragraphs, sents, id=f"{stem}-{lineno}",
                                         meta={"dataset": "cnndm", "line": lineno}))
    return out


# -- truncation ----------------------------------------------------------------------------
def _cut_sents(sents: Iterable[Sequence[str]], budget: int) -> list[list[str]]:
    out = []
    for s in sents:
        if budget <= 0:
            break
        piece = list(s[:budget])
        if piece:
            out.append(piece)
            budget -= len(piece)
    return out


def truncate(example: Example, max_source: int = 400, max_target: int = 100) -> Example:
    """The example cut to its first ``max_source`` source and ``max_target`` target tokens.

    See et al. (2017) trained and tested on articles truncated to 400 tokens and summaries
    to 100 (120 at test time).  Paragraphs and sentences are cut at the same place, so that
    flattening them still gives ``source``/``target``; empty sentences and paragraphs go.
    """
    paragraphs = None
    if example.paragraphs is not None:
        paragraphs, budget = [], max_source
        for para in example.paragraphs:
            if budget <= 0:
                break
            cut = _cut_sents(para, budget)
            if cut:
                paragraphs.append(cut)
                budget -= sum(len(s) for s in cut)
    target_sents = None
    if example.target_sents is not None:
        target_sents = _cut_sents(example.target_sents, max_target)
    return Example(list(example.source[:max_source]), list(example.target[:max_target]),
                   paragraphs=paragraphs, target_sents=target_sents, facts=example.facts,
                   id=example.id, meta={**example.meta, "truncated": (max_source, max_target)})


# -- Hugging Face --------------------------------------------------------------------------
_HF_SPLITS = {"train": "train", "valid": "validation", "val": "validation",
              "validation": "validation", "test": "test"}


def load_hf(split: str, limit: int | None = None, *, name: str = "abisee/cnn_dailymail",
            version: str = "3.0.0") -> list[Example]:
    """CNN/DailyMail 3.0.0 from the Hugging Face hub (needs ``datasets`` and a network).

    The articles there are raw text without paragraph breaks: they are tokenized with
    :func:`tokenize` and split into sentences, each its own paragraph; highlights are split
    at newlines.  Note the order differs from See et al.'s test files.
    """
    if split not in _HF_SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from train, valid, test")
    try:
        import datasets  # noqa: F401  (optional dependency)
    except ImportError as e:
        raise ImportError("load_hf needs the Hugging Face 'datasets' package: "
                          "pip install datasets (and a network connection)") from e
    hf_split = _HF_SPLITS[split] + (f"[:{limit}]" if limit is not None else "")
    try:
        ds = datasets.load_dataset(name, version, split=hf_split)
    except Exception as e:  # offline, hub unreachable, renamed data set ...
        raise RuntimeError(f"could not load {name} {version} ({hf_split}) from the Hugging Face hub: "
                           f"{e}. Are you online? Otherwise use local files with load_cnndm") from e
    out = []
    for i, row in enumerate(ds):
        sents = split_sentences(tokenize(row["article"]))
        highlights = [fix_missing_period(tokenize(h)) for h in row["highlights"].split("\n") if h.strip()]
        if not sents or not highlights:
            continue
        out.append(Example.from_document([[s] for s in sents], highlights, id=row.get("id", str(i)),
                                         meta={"dataset": "cnndm", "source": "hf"}))
    return out


# -- one entry point -----------------------------------------------------------------------
def load_cnndm(spec_path, split: str = "test", limit: int | None = None, start: int = 0, *,
               max_source: int | None = None, max_target: int | None = None) -> list[Example]:
    """Examples from a folder in any of the local layouts.

    ``spec_path`` is a folder of ``.story`` files (or one with a ``stories`` sub-folder), or a
    folder holding ``{split}.source`` with ``{split}.target.sents.tsv`` (preferred: it keeps
    the sentence breaks) or ``{split}.target``, or a ``.source`` file itself.  ``start`` and
    ``limit`` choose lines as in :func:`read_line_files` (for stories only ``limit``).  With
    ``max_source``/``max_target`` the examples are :func:`truncate`\\ d.
    """
    path = os.fspath(spec_path)
    looked = []
    examples = None
    if os.path.isfile(path) and path.endswith(".source"):
        base = path[: -len(".source")]
        for tgt in (base + ".target.sents.tsv", base + ".target"):
            looked.append(tgt)
            if os.path.isfile(tgt):
                examples = read_line_files(path, tgt, limit=limit, start=start)
                break
    elif os.path.isdir(path):
        src = os.path.join(path, f"{split}.source")
        looked.append(src)
        if os.path.isfile(src):
            for tgt in (os.path.join(path, f"{split}.target.sents.tsv"), os.path.join(path, f"{split}.target")):
                looked.append(tgt)
                if os.path.isfile(tgt):
                    examples = read_line_files(src, tgt, limit=limit, start=start)
                    break
        if examples is None:
            for folder in (path, os.path.join(path, "stories")):
                looked.append(os.path.join(folder, "*.story"))
                if glob.glob(os.path.join(folder, "*.story")):
                    examples = read_story_folder(folder, limit=limit)
                    break
    else:
        looked.append(path)
    if examples is None:
        raise FileNotFoundError(f"no CNN/DailyMail data found at {path}: looked for "
                                + ", ".join(looked) + " (a folder of .story files, or "
                                f"{split}.source with {split}.target.sents.tsv or {split}.target)")
    if max_source is not None or max_target is not None:
        examples = [truncate(ex, max_source or 10**9, max_target or 10**9) for ex in examples]
    return examples


def read_cnndm_splits(folder, limits: dict) -> dict[str, list[Example]]:
    """``{"train": [...], "valid": [...], "test": [...]}`` from a folder, ``limits[split]``
    examples each (None: all).

    Line files ``{train,val,test}.source`` (``valid`` also works for ``val``) give the splits;
    a missing split is empty.  A folder of ``.story`` files has no splits: every 20th story (by
    file name) is held out for testing, the next for validation.
    """
    folder = os.fspath(folder)
    splits: dict[str, list[Example]] = {}
    for name, files in (("train", ("train",)), ("valid", ("val", "valid")), ("test", ("test",))):
        present = [f for f in files if os.path.isfile(os.path.join(folder, f"{f}.source"))]
        splits[name] = load_cnndm(folder, present[0], limit=limits[name]) if present else []
    stories = []
    if not any(splits.values()):
        try:       # no line files: load_cnndm looks for .story files (here or in stories/)
            stories = sorted(load_cnndm(folder), key=lambda ex: ex.id)
        except FileNotFoundError:
            pass
    if stories:
        held_out = {"train": lambda i: i % 20 not in (0, 1), "valid": lambda i: i % 20 == 1,
                    "test": lambda i: i % 20 == 0}
        for name, keep in held_out.items():
            chosen = [ex for i, ex in enumerate(stories) if keep(i)]
            splits[name] = chosen[: limits[name]] if limits[name] else chosen
    if not any(splits.values()):
        raise FileNotFoundError(f"no CNN/DailyMail data in {folder!r}: expected train/val/test .source "
                                "files or .story files")
    return splits
