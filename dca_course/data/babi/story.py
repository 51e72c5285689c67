"""bAbI's data types: the tokens of a sentence, a :class:`Story` as a file holds it and a
:class:`BabiExample` (one question with the statements before it) as a model reads it.

Plain Python (no torch).  Reading and writing are in :mod:`.format`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence, Union

# --------------------------------------------------------------------------------------------
# Tokens and data types
# --------------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\w+(?:['-]\w+)*|[^\w\s]")
_FINAL_PUNCT = frozenset(".?!")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of one sentence, without its final ``.``/``?``/``!``.

    >>> tokenize("Where is Mary? ")
    ['where', 'is', 'mary']
    >>> tokenize("Mary got the milk there.")
    ['mary', 'got', 'the', 'milk', 'there']

    Words are runs of letters and digits (``don't`` and ``well-known`` stay whole); any other
    punctuation mark becomes a token of its own (``"a, b"`` -> ``['a', ',', 'b']``).  Only the
    sentence-final marks are dropped: in bAbI every statement ends in ``.`` and every question
    in ``?``, so they carry no information (which line is a question is known from the tabs).
    """
    text = text.lower()
    body = text.rstrip(".?! \t\r\n\f\v")
    if body.replace(" ", "").isalnum():  # fast path, every bAbI line: words and spaces only
        return body.split()
    tokens = _TOKEN_RE.findall(text)
    while tokens and tokens[-1] in _FINAL_PUNCT:
        tokens.pop()
    return tokens


@dataclass
class BabiExample:
    """One question with the story before it: what a QA model reads.

    * ``story``: the story's *statements* up to the question, each tokenized (questions asked
      earlier in the story are not part of it).  The examples of one story share these
      sentence lists (a 10k-question file would otherwise hold millions of copies): build new
      lists rather than changing them in place;
    * ``question``: the tokenized question;
    * ``answer``: the answer words, lower-cased (``"milk,football"`` -> ``["milk", "football"]``;
      most tasks have exactly one word);
    * ``supporting``: positions *in* ``story`` (0-based) of the supporting facts, in the file's
      order (for task 3 that is: object fact, then the moves from the latest backwards);
    * ``task``: the bAbI task number (0 when unknown);
    * ``line_ids``: the file's line id of each story sentence and ``question_id`` the question's
      own line id; with them :func:`write_babi` can put the examples of a story back together.
    """

    story: list[list[str]]
    question: list[str]
    answer: list[str]
    supporting: list[int]
    task: int = 0
    line_ids: list[int] = field(default_factory=list)
    question_id: int = 0

    @property
    def supporting_sentences(self) -> list[list[str]]:
        """The supporting facts themselves, as token lists."""
        return [self.story[i] for i in self.supporting]


@dataclass
class Statement:
    """A story line that states a fact: ``Mary moved to the bathroom.``"""

    text: str


@dataclass
class Question:
    """A story line that asks: text, answer words, and supporting fact *line ids* (1-based).

    Here ``supporting`` holds the file's line ids, as in the file; :class:`BabiExample` turns
    them into positions in its story.
    """

    text: str
    answer: list[str]
    supporting: list[int]


StoryLine = Union[Statement, Question]


@dataclass
class Story:
    """A bAbI story as the file holds it: statements with questions interleaved.

    Line ``i`` of the file (1-based) is ``lines[i - 1]``.  The generator builds stories with
    :meth:`add_statement` / :meth:`add_question`, the writer prints them and the readers
    return them; :meth:`examples` expands a story into one :class:`BabiExample` per question.
    """

    lines: list[StoryLine] = field(default_factory=list)
    task: int = 0

    def add_statement(self, text: str) -> int:
        """Append a statement; returns its line id (1-based)."""
        self.lines.append(Statement(text))
        return len(self.lines)

    def add_question(self, text: str, answer: Sequence[str], supporting: Sequence[int]) -> int:
        """Append a question (``supporting`` are line ids); returns its line id."""
        self.lines.append(Question(text, list(answer), list(supporting)))
        return len(self.lines)

    @property
    def n_questions(self) -> int:
        return sum(isinstance(line, Question) for line in self.lines)

    @property
    def n_statements(self) -> int:
        return sum(isinstance(line, Statement) for line in self.lines)

    def examples(self) -> list[BabiExample]:
        """One :class:`BabiExample` per question, its story being the statements before it."""
        out: list[BabiExample] = []
        sentences: list[list[str]] = []
        ids: list[int] = []
        position: dict[int, int] = {}  # file line id -> index into `sentences`
        for line_id, line in enumerate(self.lines, 1):
            if isinstance(line, Statement):
                position[line_id] = len(sentences)
                sentences.append(tokenize(line.text))
                ids.append(line_id)
            else:
                try:
                    supporting = [position[s] for s in line.supporting]
                except KeyError as err:
                    raise ValueError(f"question at line {line_id} names supporting line {err.args[0]}, "
                                     "which is not an earlier statement of its story") from None
                out.append(BabiExample(
                    story=list(sentences),  # the sentence lists are shared, see the class doc
                    question=tokenize(line.text),
                    answer=[a.lower() for a in line.answer],
                    supporting=supporting,
                    task=self.task,
                    line_ids=list(ids),
                    question_id=line_id,
                ))
        return out


def stories_to_examples(stories: Iterable[Story]) -> list[BabiExample]:
    """Expand stories into one :class:`BabiExample` per question, in order."""
    return [ex for story in stories for ex in story.examples()]


def vocabulary(examples: Iterable[BabiExample], first: Sequence[str] = ()) -> list[str]:
    """The words of the examples' stories, questions and answers: ``first`` in its order, then
    the others sorted.

    ``first`` puts marks that are not words of the file ahead of the rest, at fixed ids: the
    DMN's end-of-sentence mark ``.`` (:func:`dca_course.data.babi.batching.babi_vocab`).  A
    word of ``first`` that also occurs in the examples is listed once, in front.
    """
    words: set[str] = set()
    for ex in examples:
        for sent in ex.story:
            words.update(sent)
        words.update(ex.question)
        words.update(ex.answer)
    return list(first) + sorted(words.difference(first))
