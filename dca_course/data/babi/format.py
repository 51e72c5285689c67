"""The bAbI v1.2 text format: parse and read it (checking every line), write it back.

Every line is ``ID text``; a question line has three tab-separated fields (question, answer,
supporting ids).  A malformed line raises :class:`BabiFormatError`, whose message starts with
``FILE:LINE:``, as compilers print it, so an editor can jump to it.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Sequence

from ...errors import InputError
from ...io import text_lines, write_text
from .story import BabiExample, Question, Statement, Story, stories_to_examples, tokenize


class BabiFormatError(InputError):
    """A line that is not valid bAbI v1.2; the message starts with ``"<file>:<line>: "``."""

    def __init__(self, source: str, lineno: int, reason: str):
        self.source, self.lineno, self.reason = str(source), lineno, reason
        super().__init__(f"{source}:{lineno}: {reason}")

    def __reduce__(self):  # keep the exception picklable (multiprocessing data loaders)
        return (type(self), (self.source, self.lineno, self.reason))


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

_TASK_IN_NAME_RE = re.compile(r"qa([0-9]+)_")


def _is_empty(text: str) -> bool:
    """True when ``tokenize(text)`` would be empty (only spaces and final punctuation)."""
    return not text.strip(".?! \t\r\n\f\v")


def parse_babi_stories(lines: Iterable[str] | str, source: str = "<string>", task: int = 0) -> list[Story]:
    """Parse bAbI v1.2 lines into :class:`Story` objects, checking every line.

    ``lines`` is an iterable of lines (an open file works) or one string holding them all.
    ``source`` names them in error messages.  Blank lines are skipped.  A malformed line raises
    :class:`BabiFormatError` (``"<source>:<line number>: what is wrong"``): a line without a
    leading integer id, an id that neither follows the previous one nor restarts a story at 1,
    a question line without exactly three tab-separated fields, an empty answer, or a
    supporting id that is not an earlier *statement* of the same story.  A line with a ``?``
    but no tabs is rejected too: it is usually a question whose tabs became spaces.
    """
    if isinstance(lines, str):
        lines = lines.splitlines()
    stories: list[Story] = []
    story: Story | None = None
    prev_id = lineno = 0

    def fail(reason: str):
        raise BabiFormatError(source, lineno, reason)

    for lineno, raw in enumerate(lines, 1):
        head, _, text = raw.rstrip("\r\n").partition(" ")
        if not (head.isdigit() and head.isascii()):
            if not head.strip() and not text.strip():
                continue  # a blank line
            fail(f"expected '<id> <text>' with an integer id, got {raw.rstrip()[:50]!r}")
        line_id = int(head)
        if line_id == 1:
            story = Story(task=task)
            stories.append(story)
        elif story is None:
            fail(f"the first story must start at id 1, not {line_id}")
        elif line_id != prev_id + 1:
            fail(f"line id {line_id} neither follows the previous id {prev_id} "
                 "nor starts a new story at 1")
        prev_id = line_id

        if "\t" not in text:  # a statement
            text = text.strip()
            if "?" in text:
                fail("this line looks like a question but has no tab-separated answer and "
                     "supporting ids (were the tabs turned into spaces?)")
            if not text[:1].isalnum() and _is_empty(text):
                fail("empty statement")
            story.lines.append(Statement(text))
            continue

        fields_ = text.split("\t")
        if len(fields_) != 3:
            fail(f"a question line needs exactly 3 tab-separated fields "
                 f"(question, answer, supporting ids), found {len(fields_)}")
        question, answer_field, support_field = fields_
        question = question.strip()
        if _is_empty(question):
            fail("empty question")
        if not answer_field.strip():
            fail("empty answer")
        answer = [word.strip() for word in answer_field.split(",")]
        if not all(answer):
            fail(f"answer {answer_field!r} has an empty word between its commas")
        support_tokens = support_field.split()
        if not support_tokens:
            fail("a question needs at least one supporting fact id")
        supporting = []
        for tok in support_tokens:
            if not (tok.isascii() and tok.isdigit()):
                fail(f"supporting fact id {tok!r} is not a positive integer")
            sid = int(tok)
            if not 1 <= sid < line_id:
                fail(f"supporting fact id {sid} is not an earlier line of this story "
                     f"(the question is line {line_id})")
            if not isinstance(story.lines[sid - 1], Statement):
                fail(f"supporting fact id {sid} points at a question, not a statement")
            supporting.append(sid)
        story.lines.append(Question(question, answer, supporting))
    return stories


def parse_babi_lines(lines: Iterable[str] | str, source: str = "<string>", task: int = 0) -> list[BabiExample]:
    """Parse bAbI v1.2 lines into examples (see :func:`parse_babi_stories` for the checks)."""
    return stories_to_examples(parse_babi_stories(lines, source, task))


def _task_from_name(path: Path) -> int:
    match = _TASK_IN_NAME_RE.match(path.name)
    return int(match.group(1)) if match else 0


def read_babi_stories(path: str | os.PathLike, task: int = 0) -> list[Story]:
    """Read a bAbI file into stories.  ``task=0`` takes the number from a ``qaN_`` file name."""
    path = Path(path)
    task = task or _task_from_name(path)
    return parse_babi_stories((text for _, text in text_lines(path)), source=str(path), task=task)


def read_babi(path: str | os.PathLike, task: int = 0) -> list[BabiExample]:
    """Read a bAbI v1.2 file: one :class:`BabiExample` per question.

    ``task=0`` takes the task number from a file name like ``qa6_yes-no-questions_train.txt``.
    Errors name the file and line: ``BabiFormatError("data/qa1.txt:7: empty answer")``.
    """
    return stories_to_examples(read_babi_stories(path, task))




# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------

def _check_story(story: Story, k: int) -> None:
    """Raise ValueError if ``story`` cannot be written so that it reads back the same."""
    where = f"story {k}"
    if not story.lines:
        raise ValueError(f"{where} is empty")
    for line_id, line in enumerate(story.lines, 1):
        at = f"{where}, line {line_id}"
        if any(c in line.text for c in "\t\n\r"):
            raise ValueError(f"{at}: text {line.text!r} holds a tab or a line break")
        if line.text != line.text.strip():
            raise ValueError(f"{at}: text {line.text!r} has leading or trailing spaces")
        if isinstance(line, Statement):
            if not tokenize(line.text) or "?" in line.text:
                raise ValueError(f"{at}: a statement must have words and no '?': {line.text!r}")
            continue
        if not tokenize(line.text):
            raise ValueError(f"{at}: empty question")
        if not line.answer:
            raise ValueError(f"{at}: empty answer")
        for word in line.answer:
            if not word or word != word.strip() or any(c in word for c in ",\t\n\r"):
                raise ValueError(f"{at}: answer word {word!r} is empty or holds a comma, a tab, "
                                 "a line break or outer spaces")
        if not line.supporting:
            raise ValueError(f"{at}: a question needs at least one supporting fact")
        for sid in line.supporting:
            if not (isinstance(sid, int) and 1 <= sid < line_id
                    and isinstance(story.lines[sid - 1], Statement)):
                raise ValueError(f"{at}: supporting id {sid!r} is not an earlier statement")


def _format_story(story: Story, k: int) -> list[str]:
    _check_story(story, k)
    out = []
    for line_id, line in enumerate(story.lines, 1):
        if isinstance(line, Statement):
            out.append(f"{line_id} {line.text}")
        else:  # the release's layout: "ID question? \tanswer\tids"
            out.append(f"{line_id} {line.text} \t{','.join(line.answer)}\t"
                       f"{' '.join(str(s) for s in line.supporting)}")
    return out


def _sentence_text(tokens: Sequence[str], end: str) -> str:
    """Tokens back to a sentence (``['mary', 'moved']`` -> ``"Mary moved."``), checked."""
    text = " ".join(tokens)
    text = text[:1].upper() + text[1:] + end
    if tokenize(text) != list(tokens):
        raise ValueError(f"tokens {list(tokens)!r} cannot be written so that they read back the "
                         "same (they must be lower-case tokens as tokenize() makes them)")
    return text


def _continues(prev: BabiExample, ex: BabiExample) -> bool:
    """Is ``ex`` a later question of the same story as ``prev``?"""
    n = len(prev.story)
    return (ex.task == prev.task and prev.question_id > 0 and ex.question_id > prev.question_id
            and len(prev.line_ids) == n and len(ex.line_ids) == len(ex.story)
            and len(ex.story) >= n and ex.line_ids[:n] == prev.line_ids and ex.story[:n] == prev.story)


def story_ids(examples: Sequence[BabiExample]) -> list[int]:
    """The story of each example, numbered 0, 1, ... in order: consecutive examples whose file line
    ids show a later question of the same story (as :func:`read_babi` gives them) share a number.
    Examples without line ids each get a story of their own."""
    ids: list[int] = []
    for k, ex in enumerate(examples):
        ids.append(ids[-1] if k and _continues(examples[k - 1], ex) else (ids[-1] + 1 if ids else 0))
    return ids


def _story_from_line_ids(group: list[BabiExample]) -> Story | None:
    """Rebuild one story from its examples' line ids; None if the ids do not fit together."""
    lines: dict[int, tuple] = {}
    for ex in group:
        for line_id, sent in zip(ex.line_ids, ex.story):
            if lines.setdefault(line_id, ("s", sent)) != ("s", sent):
                return None
        if ex.question_id in lines:
            return None
        lines[ex.question_id] = ("q", ex)
    if sorted(lines) != list(range(1, len(lines) + 1)):
        return None
    for ex in group:  # each example must see exactly the statements before its question
        before = [i for i in range(1, ex.question_id) if lines[i][0] == "s"]
        if before != ex.line_ids:
            return None
    story = Story(task=group[0].task)
    for line_id in range(1, len(lines) + 1):
        kind, item = lines[line_id]
        if kind == "s":
            story.add_statement(_sentence_text(item, "."))
        else:
            story.add_question(_sentence_text(item.question, "?"), item.answer,
                               [item.line_ids[i] for i in item.supporting])
    return story


def _story_from_example(ex: BabiExample) -> Story:
    """One example as a story of its own, renumbered 1..n with the question last."""
    story = Story(task=ex.task)
    for sent in ex.story:
        story.add_statement(_sentence_text(sent, "."))
    story.add_question(_sentence_text(ex.question, "?"), ex.answer, [i + 1 for i in ex.supporting])
    return story


def examples_to_stories(examples: Iterable[BabiExample]) -> list[Story]:
    """Put examples back into stories, the inverse of :func:`stories_to_examples`.

    Consecutive examples whose ``line_ids`` show that they come from one story (as
    :func:`read_babi` and :func:`generate_examples` leave them) become that story again, with
    its original line ids.  Any other example (hand-made, filtered, shuffled) is written as a
    story of its own: its statements numbered 1..n and its question n+1.  Either way reading
    the result back gives the same stories, questions, answers and supporting facts.
    """
    examples = list(examples)
    for k, ex in enumerate(examples):
        if not ex.answer or not all(0 <= i < len(ex.story) for i in ex.supporting):
            raise ValueError(f"example {k}: empty answer or supporting index outside its story")
    groups: list[list[BabiExample]] = []
    for ex in examples:
        if groups and _continues(groups[-1][-1], ex):
            groups[-1].append(ex)
        else:
            groups.append([ex])
    stories: list[Story] = []
    for group in groups:
        story = _story_from_line_ids(group)
        if story is None:
            stories.extend(_story_from_example(ex) for ex in group)
        else:
            stories.append(story)
    return stories


def format_babi(items: Story | BabiExample | Iterable[Story | BabiExample]) -> str:
    """The bAbI v1.2 text of stories or examples (not a mixture of both).

    Stories are written line for line (a question as ``ID question? \\tanswer\\tids``, like the
    release, so that formatting a released file that was read with :func:`read_babi_stories`
    gives it back byte for byte for the files that use that layout).  Examples are first put
    back into stories by :func:`examples_to_stories`.  Raises ValueError for anything that
    would not read back the same (a tab inside a sentence, a comma inside an answer word, ...).
    """
    if isinstance(items, (Story, BabiExample)):
        items = [items]
    items = list(items)
    if all(isinstance(x, Story) for x in items):
        stories = items
    elif all(isinstance(x, BabiExample) for x in items):
        stories = examples_to_stories(items)
    else:
        raise TypeError("format_babi takes Story objects or BabiExample objects, not a mixture")
    lines = [line for k, story in enumerate(stories) for line in _format_story(story, k)]
    return "".join(line + "\n" for line in lines)


def write_babi(items: Story | BabiExample | Iterable[Story | BabiExample], path: str | os.PathLike) -> Path:
    """Write stories or examples to ``path`` in the v1.2 format; returns the path.

    The file appears whole or not at all (written to a temporary file, then renamed), so
    ``read_babi(write_babi(generate_task(1, 100, seed=0), "qa1.txt"))`` always round-trips.
    """
    path = Path(path)
    write_text(path, format_babi(items))
    return path
