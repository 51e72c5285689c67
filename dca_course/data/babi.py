r"""bAbI question answering: read, write, generate and download the tasks.

The bAbI tasks (Weston et al. 2015, "Towards AI-Complete Question Answering: A Set of
Prerequisite Toy Tasks", arXiv:1502.05698) are twenty small reading tests.  Each *story* is a
few simple sentences about people, places and objects, with questions asked along the way::

    1 Mary moved to the bathroom.
    2 John went to the hallway.
    3 Where is Mary? \tbathroom\t1
    4 Daniel went back to the hallway.
    5 Sandra moved to the garden.
    6 Where is Daniel? \thallway\t4
    1 Sandra travelled to the office.
    ...

The v1.2 text format, which this module reads and writes:

* every line is ``ID text``; the ids count 1, 2, 3, ... through a story and a new story starts
  when the id goes back to 1;
* a *question* line has three tab-separated fields: the question, the answer and the ids of
  the *supporting facts* (the statements one needs to answer it), separated by spaces.  The
  release writes a space before the first tab (``Where is Mary? \tbathroom\t1``);
* an answer of several words is written with commas (``milk,football``); ``nothing`` and
  ``none`` are ordinary answers (task 8 lists, task 7 counts).

A model does not see the file: it sees one :class:`BabiExample` per *question*, whose story
holds the statements of the story that come before the question (earlier questions are left
out, as in the memory-network papers).  The supporting fact ids become positions in that story,
ready to supervise an attention over sentences.

What is here:

* :func:`tokenize` and the data types :class:`BabiExample` (what models read) and
  :class:`Story` (a list of :class:`Statement` and :class:`Question` lines, what files hold);
* :func:`read_babi` / :func:`parse_babi_lines` (examples) and :func:`read_babi_stories` /
  :func:`parse_babi_stories` (stories), which reject a malformed line with a
  :class:`BabiFormatError` naming the file and line;
* :func:`format_babi` / :func:`write_babi`, the inverse of the readers;
* :func:`generate_task` / :func:`generate_examples` / :func:`load_generated`: tasks 1, 2, 3, 6,
  7, 8, 11 and 15 simulated afresh from a small world, so the course runs without any download
  and the answers are right by construction;
* :data:`TASK_NAMES`, :func:`load_task` for the released files, and the opt-in
  :func:`download_babi`.

Everything here is plain Python (no torch): turning tokens into tensors is the job of a
vocabulary and a batching function.
"""
from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence, Union

__all__ = [
    "BabiExample", "Statement", "Question", "Story", "BabiFormatError", "ChecksumError",
    "tokenize", "parse_babi_stories", "parse_babi_lines", "read_babi_stories", "read_babi",
    "stories_to_examples", "examples_to_stories", "format_babi", "write_babi",
    "GENERATED_TASKS", "generate_task", "generate_examples", "load_generated",
    "TASK_NAMES", "load_task", "vocabulary",
    "BABI_URL", "BABI_SHA256", "default_cache_dir", "download_babi",
]


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


class BabiFormatError(ValueError):
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


def stories_to_examples(stories: Iterable[Story]) -> list[BabiExample]:
    """Expand stories into one :class:`BabiExample` per question, in order."""
    return [ex for story in stories for ex in story.examples()]


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
    with open(path, encoding="utf-8") as f:
        return parse_babi_stories(f, source=str(path), task=task)


def read_babi(path: str | os.PathLike, task: int = 0) -> list[BabiExample]:
    """Read a bAbI v1.2 file: one :class:`BabiExample` per question.

    ``task=0`` takes the task number from a file name like ``qa6_yes-no-questions_train.txt``.
    Errors name the file and line: ``BabiFormatError("data/qa1.txt:7: empty answer")``.
    """
    return stories_to_examples(read_babi_stories(path, task))


def vocabulary(examples: Iterable[BabiExample]) -> list[str]:
    """Sorted list of the words in the examples' stories, questions and answers."""
    words: set[str] = set()
    for ex in examples:
        for sent in ex.story:
            words.update(sent)
        words.update(ex.question)
        words.update(ex.answer)
    return sorted(words)


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


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_babi(items: Story | BabiExample | Iterable[Story | BabiExample], path: str | os.PathLike) -> Path:
    """Write stories or examples to ``path`` in the v1.2 format; returns the path.

    The file appears whole or not at all (written to a temporary file, then renamed), so
    ``read_babi(write_babi(generate_task(1, 100, seed=0), "qa1.txt"))`` always round-trips.
    """
    path = Path(path)
    _atomic_write_text(path, format_babi(items))
    return path


# --------------------------------------------------------------------------------------------
# Generating: a small simulated world
# --------------------------------------------------------------------------------------------
#
# Each story is simulated: the world keeps the true state (who is where, who holds what) and
# every sentence is written *from* that state, so each answer is read off the state and each
# supporting fact is the line that set the part of the state the answer depends on.

PEOPLE = ("Mary", "John", "Sandra", "Daniel")
PRONOUN = {"Mary": "she", "Sandra": "she", "John": "he", "Daniel": "he"}
PLACES = ("bathroom", "hallway", "garden", "office", "kitchen", "bedroom")
OBJECTS = ("football", "apple", "milk")
MOVE_VERBS = ("moved to", "went to", "journeyed to", "travelled to", "went back to")
GET_VERBS = ("got", "grabbed", "picked up", "took")
DROP_VERBS = ("dropped", "put down", "discarded", "left")
GIVE_VERBS = ("gave", "handed", "passed")
THEN = ("Then", "After that", "Afterwards", "Following that")
ANIMALS = {"mouse": "mice", "sheep": "sheep", "wolf": "wolves", "cat": "cats"}  # singular -> plural
ANIMAL_NAMES = ("Gertrude", "Winona", "Emily", "Jessica")
COUNT_WORDS = ("none", "one", "two", "three", "four", "five")

#: The tasks :func:`generate_task` can simulate, with what each one tests.
GENERATED_TASKS = {
    1: "single supporting fact: where is a person (one move)",
    2: "two supporting facts: where is an object (who took it, where they went)",
    3: "three supporting facts: where was an object before a place",
    6: "yes/no questions: is a person in a place",
    7: "counting: how many objects a person carries",
    8: "lists/sets: which objects a person carries",
    11: "basic coreference: he/she refers to the person of the previous sentence",
    15: "basic deduction: a member of a species fears what the species fears",
}

_QUESTIONS_PER_STORY = {15: 4}  # the release: 4 per story in task 15, 5 in the others
_MAX_BLOCKS = 60  # statement pairs to wait for an askable question before starting over


class _World:
    """People moving between places and handling objects; the state behind tasks 1-8."""

    def __init__(self, rng: random.Random, story: Story, *, objects: bool, give: bool,
                 p_object: float, p_get_there: float, p_drop_there: float):
        self.rng, self.story = rng, story
        self.objects, self.give = objects, give
        self.p_object, self.p_get_there, self.p_drop_there = p_object, p_get_there, p_drop_there
        self.place: dict[str, str | None] = {p: None for p in PEOPLE}  # None: not yet told
        self.last_move: dict[str, int] = {}  # person -> line id of their latest move
        # objects: a hidden start place each; revealed when first handled
        self.obj_place = {o: rng.choice(PLACES) for o in OBJECTS}
        self.holder: dict[str, str | None] = {o: None for o in OBJECTS}
        self.carrying: dict[str, list[str]] = {p: [] for p in PEOPLE}  # in order taken
        self.last_obj_fact: dict[str, int] = {}  # object -> line of its latest get/drop
        self.drop_move: dict[str, int] = {}  # object -> dropper's move that says where
        self.events: dict[str, list[int]] = {p: [] for p in PEOPLE}  # object lines per person
        # object -> [(place, line id of the move that tells it was there)], consecutive
        # places differ; it starts where the object was first picked up
        self.trajectory: dict[str, list[tuple[str, int]]] = {o: [] for o in OBJECTS}

    # ---- actions --------------------------------------------------------------------------
    def step(self) -> None:
        """One random sentence: a move, or (when possible) taking, dropping or giving."""
        rng, person = self.rng, self.rng.choice(PEOPLE)
        here = self.place[person]
        options = []
        if self.objects and here is not None:
            if any(self.holder[o] is None and self.obj_place[o] == here for o in OBJECTS):
                options.append(self.get)
            if self.carrying[person]:
                options.append(self.drop)
                if self.give and self._others_here(person):
                    options.append(self.pass_on)
        if options and rng.random() < self.p_object:
            rng.choice(options)(person)
        else:
            self.move(person)

    def _others_here(self, person: str) -> list[str]:
        return [q for q in PEOPLE if q != person and self.place[q] == self.place[person]]

    def move(self, person: str, template: str = "{who} {verb} the {place}.") -> int:
        here = self.place[person]
        place = self.rng.choice([p for p in PLACES if p != here])
        line = self.story.add_statement(template.format(
            who=person, verb=self.rng.choice(MOVE_VERBS), place=place,
            pronoun=PRONOUN[person], then=self.rng.choice(THEN)))
        self.place[person], self.last_move[person] = place, line
        for obj in self.carrying[person]:
            self.obj_place[obj] = place
            self.trajectory[obj].append((place, line))
        return line

    def get(self, person: str) -> None:
        here = self.place[person]
        obj = self.rng.choice([o for o in OBJECTS if self.holder[o] is None and self.obj_place[o] == here])
        there = " there" if self.rng.random() < self.p_get_there else ""
        line = self.story.add_statement(f"{person} {self.rng.choice(GET_VERBS)} the {obj}{there}.")
        self.holder[obj] = person
        self.carrying[person].append(obj)
        self.last_obj_fact[obj] = line
        self.events[person].append(line)
        # the taker's latest move is now the fact that says the object was here
        if self.trajectory[obj]:
            assert self.trajectory[obj][-1][0] == here
            self.trajectory[obj][-1] = (here, self.last_move[person])
        else:
            self.trajectory[obj].append((here, self.last_move[person]))

    def drop(self, person: str) -> None:
        obj = self.rng.choice(self.carrying[person])
        there = " there" if self.rng.random() < self.p_drop_there else ""
        line = self.story.add_statement(f"{person} {self.rng.choice(DROP_VERBS)} the {obj}{there}.")
        self.carrying[person].remove(obj)
        self.holder[obj] = None
        self.last_obj_fact[obj] = line
        self.drop_move[obj] = self.last_move[person]
        self.events[person].append(line)

    def pass_on(self, person: str) -> None:
        obj = self.rng.choice(self.carrying[person])
        other = self.rng.choice(self._others_here(person))
        line = self.story.add_statement(f"{person} {self.rng.choice(GIVE_VERBS)} the {obj} to {other}.")
        self.carrying[person].remove(obj)
        self.carrying[other].append(obj)
        self.holder[obj] = other
        self.last_obj_fact[obj] = line
        self.events[person].append(line)
        self.events[other].append(line)

    # ---- questions: each returns (text, answer, supporting line ids) or None -------------
    def known_people(self) -> list[str]:
        return [p for p in PEOPLE if self.place[p] is not None]

    def ask_where_person(self):  # tasks 1 and 11
        people = self.known_people()
        if not people:
            return None
        p = self.rng.choice(people)
        return f"Where is {p}?", [self.place[p]], self.where_support(p)

    def where_support(self, person: str) -> list[int]:
        """The lines that tell where ``person`` is: their latest move."""
        return [self.last_move[person]]

    def ask_yes_no(self):  # task 6
        people = self.known_people()
        if not people:
            return None
        p = self.rng.choice(people)
        if self.rng.random() < 0.5:
            place, answer = self.place[p], "yes"
        else:
            place, answer = self.rng.choice([x for x in PLACES if x != self.place[p]]), "no"
        return f"Is {p} in the {place}?", [answer], [self.last_move[p]]

    def ask_where_object(self):  # task 2
        objs = [o for o in OBJECTS if o in self.last_obj_fact]
        if not objs:
            return None
        obj = self.rng.choice(objs)
        holder = self.holder[obj]
        if holder is not None:  # carried: where the carrier is now
            return f"Where is the {obj}?", [self.place[holder]], [self.last_obj_fact[obj], self.last_move[holder]]
        return f"Where is the {obj}?", [self.obj_place[obj]], [self.last_obj_fact[obj], self.drop_move[obj]]

    def ask_where_before(self):  # task 3
        # only about an object's current place, and only if it has been there once: then
        # "before the kitchen" cannot mean two different moments
        objs = [o for o in OBJECTS if len(self.trajectory[o]) >= 2
                and all(place != self.trajectory[o][-1][0] for place, _ in self.trajectory[o][:-1])]
        if not objs:
            return None
        obj = self.rng.choice(objs)
        (prev, prev_line), (now, now_line) = self.trajectory[obj][-2:]
        return (f"Where was the {obj} before the {now}?", [prev],
                [self.last_obj_fact[obj], now_line, prev_line])

    def ask_count(self):  # task 7
        people = [p for p in PEOPLE if self.events[p]]
        if not people:
            return None
        p = self.rng.choice(people)
        return (f"How many objects is {p} carrying?", [COUNT_WORDS[len(self.carrying[p])]],
                list(self.events[p]))

    def ask_list(self):  # task 8
        people = [p for p in PEOPLE if self.events[p]]
        if not people:
            return None
        p = self.rng.choice(people)
        return f"What is {p} carrying?", list(self.carrying[p]) or ["nothing"], list(self.events[p])


class _CorefWorld(_World):
    """Task 11: every move is a pair, the second sentence naming its person by a pronoun."""

    def __init__(self, rng: random.Random, story: Story):
        super().__init__(rng, story, objects=False, give=False, p_object=0.0,
                         p_get_there=0.0, p_drop_there=0.0)
        self.pair: dict[str, list[int]] = {}

    def step(self) -> None:
        person = self.rng.choice(PEOPLE)
        first = self.move(person)
        second = self.move(person, "{then} {pronoun} {verb} the {place}.")
        self.pair[person] = [first, second]

    def where_support(self, person: str) -> list[int]:
        """Both sentences of the person's latest pair: the name, then the pronoun's move."""
        return list(self.pair[person])


_WORLD_TASKS = {
    # task: (world options, the method that asks the task's question)
    1: (dict(objects=False, give=False, p_object=0.0, p_get_there=0.0, p_drop_there=0.0), "ask_where_person"),
    2: (dict(objects=True, give=False, p_object=0.7, p_get_there=1.0, p_drop_there=0.2), "ask_where_object"),
    3: (dict(objects=True, give=False, p_object=0.6, p_get_there=0.2, p_drop_there=0.2), "ask_where_before"),
    6: (dict(objects=True, give=False, p_object=0.6, p_get_there=1.0, p_drop_there=0.2), "ask_yes_no"),
    7: (dict(objects=True, give=True, p_object=0.7, p_get_there=1.0, p_drop_there=0.2), "ask_count"),
    8: (dict(objects=True, give=False, p_object=0.7, p_get_there=1.0, p_drop_there=0.2), "ask_list"),
}


def _world_story(task: int, n_questions: int, rng: random.Random) -> Story:
    """Statements two at a time; after each pair, a question if one can be asked."""
    while True:  # start over in the (rare) case no question becomes askable for a long time
        story = Story(task=task)
        if task == 11:
            world, ask, per_block = _CorefWorld(rng, story), "ask_where_person", 1
        else:
            options, ask = _WORLD_TASKS[task]
            world, per_block = _World(rng, story, **options), 2
        for _ in range(n_questions):
            for _block in range(_MAX_BLOCKS):
                for _ in range(per_block):
                    world.step()
                question = getattr(world, ask)()
                if question is not None:
                    story.add_question(*question)
                    break
            else:
                break
        else:
            return story


def _deduction_story(task: int, n_questions: int, rng: random.Random) -> Story:
    """Task 15: four 'X are afraid of Y.' rules, four 'N is a X.' facts, then questions."""
    story = Story(task=task)
    species = list(ANIMALS)
    fears = {s: rng.choice([t for t in species if t != s]) for s in species}
    kind = {name: rng.choice(species) for name in ANIMAL_NAMES}
    facts = [("rule", s) for s in species] + [("member", n) for n in ANIMAL_NAMES]
    rng.shuffle(facts)
    line_of: dict[tuple[str, str], int] = {}
    for fact in facts:
        what, key = fact
        if what == "rule":
            text = f"{ANIMALS[key].capitalize()} are afraid of {ANIMALS[fears[key]]}."
        else:
            text = f"{key} is a {kind[key]}."
        line_of[fact] = story.add_statement(text)
    for _ in range(n_questions):
        name = rng.choice(ANIMAL_NAMES)
        story.add_question(f"What is {name} afraid of?", [fears[kind[name]]],
                           [line_of[("member", name)], line_of[("rule", kind[name])]])
    return story


def _generate(task: int, n_questions: int, rng: random.Random) -> list[Story]:
    if task not in GENERATED_TASKS:
        raise ValueError(f"task {task!r} cannot be generated; the supported tasks are "
                         f"{sorted(GENERATED_TASKS)}")
    if not isinstance(n_questions, int) or n_questions < 0:
        raise ValueError(f"n_questions must be a non-negative integer, got {n_questions!r}")
    make = _deduction_story if task == 15 else _world_story
    per_story = _QUESTIONS_PER_STORY.get(task, 5)
    stories = []
    remaining = n_questions
    while remaining > 0:
        k = min(per_story, remaining)
        stories.append(make(task, k, rng))
        remaining -= k
    return stories


def generate_task(task: int, n_questions: int, seed: int = 0) -> list[Story]:
    """Simulate ``n_questions`` questions of bAbI task ``task`` as stories, as the release has them.

    Supported: tasks 1, 2, 3, 6, 7, 8, 11 and 15 (see :data:`GENERATED_TASKS`); any other task
    raises ValueError.  A story holds 5 questions (4 in task 15), each after a pair of
    statements, or after more pairs while no question can be asked yet (task 2 needs an object
    that has been handled, for instance); the last story may hold fewer.  The phrasing follows
    the release (Weston et al. 2015): ``Mary journeyed to the office.``, ``John picked up the
    apple there.``, ``Afterwards she went back to the kitchen.``, ``Wolves are afraid of mice.``.

    The answers are computed from the simulated state, never guessed, and the supporting facts
    are the lines that set that state (line ids, in this order):

    ====  ============================================================================
    task  supporting facts
    ====  ============================================================================
    1, 6  the person's latest move
    2     the object's latest take/drop line, then the move that says where its holder was
    3     the object's latest take/drop line, its move into the current place, its move
          into the place before (asked only if it has been in the current place once)
    7, 8  every take/drop/give line of the person so far
    11    the sentence naming the person, then the "then he/she ..." sentence
    15    "Emily is a wolf.", then "Wolves are afraid of mice."
    ====  ============================================================================

    The output depends only on ``seed`` (a private ``random.Random(seed)``; the global random
    state is neither read nor changed).
    """
    return _generate(task, n_questions, random.Random(seed))


def generate_examples(task: int, n: int, seed: int = 0) -> list[BabiExample]:
    """``n`` generated examples of ``task``: :func:`generate_task` expanded per question."""
    return stories_to_examples(generate_task(task, n, seed))


def load_generated(task: int, n_train: int, n_test: int, seed: int = 0) -> tuple[list[BabiExample], list[BabiExample]]:
    """Generated (train, test) examples of ``task``.

    ``train`` is exactly ``generate_examples(task, n_train, seed)``; ``test`` comes from a
    separate random stream (seeded with ``f"{seed}:test"``), so it holds other stories.
    """
    train = generate_examples(task, n_train, seed)
    test = stories_to_examples(_generate(task, n_test, random.Random(f"{seed}:test")))
    return train, test


# --------------------------------------------------------------------------------------------
# The released files
# --------------------------------------------------------------------------------------------

#: Task number -> file stem of the v1.2 release (files are ``<stem>_train.txt`` / ``_test.txt``).
TASK_NAMES = {
    1: "qa1_single-supporting-fact",
    2: "qa2_two-supporting-facts",
    3: "qa3_three-supporting-facts",
    4: "qa4_two-arg-relations",
    5: "qa5_three-arg-relations",
    6: "qa6_yes-no-questions",
    7: "qa7_counting",
    8: "qa8_lists-sets",
    9: "qa9_simple-negation",
    10: "qa10_indefinite-knowledge",
    11: "qa11_basic-coreference",
    12: "qa12_conjunction",
    13: "qa13_compound-coreference",
    14: "qa14_time-reasoning",
    15: "qa15_basic-deduction",
    16: "qa16_basic-induction",
    17: "qa17_positional-reasoning",
    18: "qa18_size-reasoning",
    19: "qa19_path-finding",
    20: "qa20_agents-motivations",
}


def load_task(folder: str | os.PathLike, task: int, split: str = "train", variant: str = "en") -> list[BabiExample]:
    """Read one released task file: ``split`` is ``"train"`` or ``"test"``.

    ``folder`` may hold the language folders of the release (``en/`` with 1,000 training
    questions per task, ``en-10k/`` with 10,000; ``variant`` picks one), or be such a folder
    itself, holding the ``qaN_*_{train,test}.txt`` files directly.  A missing file raises
    FileNotFoundError naming the folder and the file that was expected.
    """
    if task not in TASK_NAMES:
        raise ValueError(f"bAbI has tasks 1..20, not {task!r}")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', not {split!r}")
    folder = Path(folder)
    name = f"{TASK_NAMES[task]}_{split}.txt"
    for candidate in (folder / variant / name, folder / name):
        if candidate.is_file():
            return read_babi(candidate, task=task)
    raise FileNotFoundError(f"bAbI task {task} ({split}): no {name} in {folder / variant} "
                            f"nor directly in {folder}")


# --------------------------------------------------------------------------------------------
# Downloading (opt-in: nothing else in this module uses the network)
# --------------------------------------------------------------------------------------------

BABI_URL = "https://dl.fbaipublicfiles.com/babi/tasks_1-20_v1-2.tar.gz"
#: sha256 of ``tasks_1-20_v1-2.tar.gz`` (15,719,851 bytes) as recorded by the Hugging Face
#: ``babi_qa`` loader for the release's earlier address; it was not checked against BABI_URL
#: from here.  Pass ``sha256=None`` to trust on first use instead: the digest of the first
#: download is printed and recorded next to the archive, and later uses are checked against it.
BABI_SHA256: str | None = "0364ebde659f14d11bc21744516c5ec49d3d06cb692733f66680771244998898"


class ChecksumError(ValueError):
    """A download whose sha256 is not the expected one (it was deleted, not kept)."""


def default_cache_dir() -> Path:
    """``$DCA_COURSE_CACHE`` if set, else ``~/.cache/dca_course``."""
    env = os.environ.get("DCA_COURSE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "dca_course"


def _archive_stem(name: str) -> str:
    for suffix in (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name + ".d"


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url: str, dest: Path, timeout: float) -> tuple[str, str]:
    """Stream ``url`` into a temporary file next to ``dest``; return (temp path, sha256)."""
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
                digest.update(block)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp, digest.hexdigest()


def _safe_members(tar: tarfile.TarFile, dest: Path) -> list[tarfile.TarInfo]:
    """The archive's files and folders, refusing any path that would land outside ``dest``."""
    root = dest.resolve()
    members = []
    for member in tar.getmembers():
        parts = Path(member.name).parts
        target = (root / member.name).resolve()
        if Path(member.name).is_absolute() or ".." in parts or not target.is_relative_to(root):
            raise ValueError(f"unsafe path in archive: {member.name!r} would land outside {dest}")
        if member.isfile() or member.isdir():  # links and device files are skipped
            members.append(member)
    return members


def _safe_extract(archive: Path, dest: Path) -> None:
    with tarfile.open(archive, "r:*") as tar:
        members = _safe_members(tar, dest)
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 / 3.10.12: a second guard
            tar.extractall(dest, members=members, filter="data")
        else:
            tar.extractall(dest, members=members)


def download_babi(cache_dir: str | os.PathLike | None = None, url: str = BABI_URL,
                  sha256: str | None = BABI_SHA256, *, timeout: float = 60.0, quiet: bool = False) -> Path:
    """Download and unpack the bAbI release once; returns the folder holding ``en/``, ``en-10k/``.

    Opt-in: the course runs on generated data and on local files, and nothing calls this for
    you.  The archive goes to ``<cache_dir>/babi/`` (``cache_dir`` defaults to
    :func:`default_cache_dir`) and is unpacked into ``<cache_dir>/babi/tasks_1-20_v1-2/``; when
    that folder exists the call returns at once, without the network.

    Safety, step by step:

    1. the download streams into a temporary file in the same folder while its sha256 is
       computed; on a mismatch the temporary file is deleted and :class:`ChecksumError` is
       raised, so no partial or wrong archive is ever left under the final name;
    2. only a verified download is renamed into place (``os.replace``, atomic on one disk);
    3. every archive member is checked to land inside the target (no absolute paths, no
       ``..``); links and device files are skipped;
    4. the archive is unpacked into a temporary folder that is renamed into place at the end,
       so an interrupted unpack leaves nothing that looks complete.

    ``sha256=None`` trusts on first use: the digest is printed (even with ``quiet=True``) and
    stored in ``<archive>.sha256``, and later calls check the archive against that record.
    """
    root = (Path(cache_dir) if cache_dir is not None else default_cache_dir()).expanduser() / "babi"
    name = Path(urllib.parse.urlparse(url).path).name or "babi.tar.gz"
    folder = root / _archive_stem(name)
    if folder.is_dir():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    archive = root / name
    record = root / (name + ".sha256")
    expected = sha256.lower() if sha256 else (record.read_text().strip() if record.is_file() else None)

    if archive.is_file():  # downloaded before (or put there by hand)
        actual = _sha256_of(archive)
        if expected and actual != expected:
            raise ChecksumError(f"{archive} has sha256 {actual}, expected {expected}; delete it "
                                "to download again")
    else:
        if not quiet:
            print(f"Downloading {url} to {archive}")
        tmp, actual = _download(url, archive, timeout)
        if expected and actual != expected:
            Path(tmp).unlink(missing_ok=True)
            raise ChecksumError(f"download of {url} has sha256 {actual}, expected {expected}; "
                                "nothing was kept (pass sha256=None to accept a new release)")
        os.replace(tmp, archive)
    if not expected:  # trust on first use: say what was accepted, and remember it
        _atomic_write_text(record, actual + "\n")
        print(f"sha256 of {archive.name}: {actual} (recorded in {record})")

    staging = Path(tempfile.mkdtemp(dir=root, prefix=".extract-"))
    try:
        _safe_extract(archive, staging)
        entries = list(staging.iterdir())
        source = entries[0] if len(entries) == 1 and entries[0].is_dir() else staging
        if folder.is_dir():  # someone else finished first
            return folder
        os.replace(source, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not quiet:
        print(f"bAbI tasks unpacked in {folder}")
    return folder
