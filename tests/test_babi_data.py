"""Tests for dca_course.data.babi: reading, writing, generating and downloading bAbI.

The generator is checked against small solvers written here from the *text* alone (they
know English phrases, not the generator's tables), so a generator bug cannot hide behind
the same bug in its checker.
"""
from __future__ import annotations

import hashlib
import io
import os
import random
import tarfile
from collections import defaultdict
from pathlib import Path

import pytest

from dca_course.data.babi import (
    GENERATED_TASKS,
    TASK_NAMES,
    BabiExample,
    BabiFormatError,
    ChecksumError,
    Question,
    Statement,
    Story,
    default_cache_dir,
    download_babi,
    examples_to_stories,
    format_babi,
    generate_examples,
    generate_task,
    load_generated,
    load_task,
    parse_babi_lines,
    read_babi,
    read_babi_stories,
    stories_to_examples,
    tokenize,
    vocabulary,
    write_babi,
)

REAL_BABI = Path(os.environ.get("DCA_BABI_DIR", "/work/shared/data/babi"))
TASKS = sorted(GENERATED_TASKS)


# --------------------------------------------------------------------------------------------
# Tokens and a hand-written file
# --------------------------------------------------------------------------------------------

def test_tokenize():
    assert tokenize("Mary moved to the bathroom.") == ["mary", "moved", "to", "the", "bathroom"]
    assert tokenize("Where is Mary? ") == ["where", "is", "mary"]
    assert tokenize("Don't drop it, John!") == ["don't", "drop", "it", ",", "john"]
    assert tokenize(" . ") == []


SNIPPET = (
    "1 Mary got the milk there.\n"
    "2 John moved to the bedroom.\n"
    "3 What is Mary carrying? \tmilk\t1\n"
    "4 Mary went to the kitchen.\n"
    "5 Mary took the football there.\n"
    "6 What is Mary carrying?\tmilk,football\t5 1\n"
    "7 Mary dropped the milk.\n"
    "8 Mary put down the football there.\n"
    "9 What is Mary carrying? \tnothing\t1 5 7 8\n"
    "1 Sandra went to the garden.\n"
    "2 Where is Sandra? \tgarden\t1\n"
)


def _check_snippet(examples):
    assert len(examples) == 4
    first, second, third, last = examples
    assert first.story == [["mary", "got", "the", "milk", "there"], ["john", "moved", "to", "the", "bedroom"]]
    assert first.question == ["what", "is", "mary", "carrying"]
    assert (first.answer, first.supporting) == (["milk"], [0])
    # the question at line 3 is not part of the story: line 5 is story position 3
    assert second.story == first.story + [["mary", "went", "to", "the", "kitchen"],
                                          ["mary", "took", "the", "football", "there"]]
    assert second.line_ids == [1, 2, 4, 5] and second.question_id == 6
    assert second.answer == ["milk", "football"]
    assert second.supporting == [3, 0]  # the file's order is kept
    assert second.supporting_sentences[0] == ["mary", "took", "the", "football", "there"]
    assert third.answer == ["nothing"] and third.supporting == [0, 3, 4, 5]
    assert third.line_ids == [1, 2, 4, 5, 7, 8] and len(third.story) == 6
    # a new story: nothing carries over
    assert last.story == [["sandra", "went", "to", "the", "garden"]]
    assert (last.answer, last.supporting, last.line_ids, last.question_id) == (["garden"], [0], [1], 2)


def test_parse_hand_written_snippet(tmp_path):
    _check_snippet(parse_babi_lines(SNIPPET))
    _check_snippet(parse_babi_lines(SNIPPET.replace("\n", "\r\n")))  # Windows line ends
    path = tmp_path / "qa8_lists-sets_train.txt"
    path.write_text(SNIPPET)
    examples = read_babi(path)
    _check_snippet(examples)
    assert {ex.task for ex in examples} == {8}  # from the file name
    assert {ex.task for ex in read_babi(path, task=3)} == {3}
    stories = read_babi_stories(path)
    assert [s.n_questions for s in stories] == [3, 1]
    assert stories[0].lines[5] == Question("What is Mary carrying?", ["milk", "football"], [5, 1])
    assert format_babi(stories) == SNIPPET.replace("?\tmilk", "? \tmilk")  # the release's layout


# --------------------------------------------------------------------------------------------
# Malformed files
# --------------------------------------------------------------------------------------------

GOOD = "1 Mary moved to the hallway.\n2 John went to the office.\n"

MALFORMED = [
    # (file text, line number of the bad line, part of the message)
    (GOOD + "Mary went to the garden.\n", 3, "integer id"),
    (GOOD + "x3 Where is Mary? \thallway\t1\n", 3, "integer id"),
    ("2 Mary moved to the hallway.\n", 1, "start at id 1"),
    (GOOD + "4 Where is Mary? \thallway\t1\n", 3, "neither follows the previous id 2"),
    (GOOD + "3 Where is Mary? \thallway\n", 3, "exactly 3 tab-separated fields"),
    (GOOD + "3 Where is Mary? \thallway\t1\t2\n", 3, "exactly 3 tab-separated fields"),
    (GOOD + "3 Where is Mary? \t \t1\n", 3, "empty answer"),
    (GOOD + "3 What is Mary carrying? \tmilk,,apple\t1\n", 3, "empty word"),
    (GOOD + "3 Where is Mary? \thallway\t\n", 3, "at least one supporting"),
    (GOOD + "3 Where is Mary? \thallway\tone\n", 3, "not a positive integer"),
    (GOOD + "3 Where is Mary? \thallway\t3\n", 3, "not an earlier line"),
    (GOOD + "3 Where is Mary? \thallway\t0\n", 3, "not an earlier line"),
    (GOOD + "3 Where is Mary? \thallway\t1\n4 Where is John? \toffice\t3\n", 4, "points at a question"),
    # a supporting id may not reach into the previous story
    (GOOD + "3 Where is Mary? \thallway\t1\n1 Sandra went to the garden.\n2 Where is John? \toffice\t2\n",
     5, "not an earlier line"),
    (GOOD + "3 Where is Mary? hallway 1\n", 3, "tabs turned into spaces"),
    (GOOD + "3 .\n", 3, "empty statement"),
    (GOOD + "\n3 Where is Mary? \t\t1\n", 4, "empty answer"),  # blank lines still count
]


@pytest.mark.parametrize("text, lineno, fragment", MALFORMED)
def test_malformed_lines_name_file_and_line(tmp_path, text, lineno, fragment):
    path = tmp_path / "broken.txt"
    path.write_text(text)
    with pytest.raises(BabiFormatError) as info:
        read_babi(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{lineno}: "), message
    assert fragment in message, message
    assert info.value.lineno == lineno and isinstance(info.value, ValueError)


def test_a_released_file_with_a_bad_line_names_its_path_and_line(tmp_path):
    """The error reaches the user of load_task (and so the command line) as FILE:LINE: reason."""
    folder = tmp_path / "en"
    folder.mkdir()
    path = folder / f"{TASK_NAMES[1]}_train.txt"
    path.write_text("1 Mary went to the office.\n2 Where is Mary? \toffice\t7\n")
    with pytest.raises(BabiFormatError) as info:
        load_task(tmp_path, 1, "train")
    assert str(info.value).startswith(f"{path}:2: supporting fact id 7"), str(info.value)
    assert (info.value.source, info.value.lineno) == (str(path), 2)


def test_vocabulary_puts_marks_first():
    examples = generate_examples(1, 20, seed=0)
    words = vocabulary(examples)
    assert words == sorted(words) and "mary" in words and "." not in words
    assert vocabulary(examples, first=[".", "mary"]) == [".", "mary"] + [w for w in words if w != "mary"]


def test_error_source_for_strings():
    with pytest.raises(BabiFormatError, match=r"^<string>:1: "):
        parse_babi_lines("hello\n")
    with pytest.raises(BabiFormatError, match=r"^mine:2: "):
        parse_babi_lines(["1 A went to the b.", "3 B went to the c."], source="mine")


# --------------------------------------------------------------------------------------------
# Generated tasks: round trips, shapes, determinism
# --------------------------------------------------------------------------------------------

def _same_examples(got: list[BabiExample], expected: list[BabiExample]) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.story == e.story
        assert g.question == e.question
        assert g.answer == e.answer
        assert g.supporting == e.supporting


@pytest.mark.parametrize("task", TASKS)
def test_generated_round_trip(tmp_path, task):
    stories = generate_task(task, 53, seed=task)
    assert sum(s.n_questions for s in stories) == 53
    path = write_babi(stories, tmp_path / f"qa{task}_generated.txt")
    assert read_babi_stories(path) == stories
    expected = stories_to_examples(stories)
    got = read_babi(path)
    _same_examples(got, expected)
    assert [(g.line_ids, g.question_id, g.task) for g in got] == \
           [(e.line_ids, e.question_id, task) for e in expected]
    # examples are written back as the same stories, with the same line ids
    again = read_babi(write_babi(got, tmp_path / "again.txt"), task=task)
    assert again == got


def test_examples_that_lost_their_story_are_written_alone(tmp_path):
    examples = generate_examples(2, 30, seed=0)
    assert len(examples_to_stories(examples)) == 6  # regrouped: 5 questions a story
    picked = examples[::-3]  # filtered and reversed: ids no longer fit together
    stories = examples_to_stories(picked)
    assert len(stories) == len(picked)
    _same_examples(read_babi(write_babi(picked, tmp_path / "picked.txt")), picked)


@pytest.mark.parametrize("task", TASKS)
def test_generated_story_shape(task):
    stories = generate_task(task, 40, seed=1)
    per_story = 4 if task == 15 else 5
    assert [s.n_questions for s in stories] == [per_story] * (40 // per_story)
    for story in stories:
        assert isinstance(story.lines[0], Statement)
        if task in (1, 11):  # exactly a pair of statements before each question
            assert [isinstance(x, Question) for x in story.lines] == [False, False, True] * 5
        if task == 15:
            assert story.n_statements == 8


@pytest.mark.parametrize("n", [0, 1, 4, 5, 6, 23])
def test_sizes_count_questions(n):
    for task in TASKS:
        assert len(generate_examples(task, n, seed=3)) == n


def test_unknown_task_and_bad_sizes():
    with pytest.raises(ValueError, match=r"\[1, 2, 3, 6, 7, 8, 11, 15\]"):
        generate_task(4, 10, seed=0)
    with pytest.raises(ValueError):
        generate_task(1, -1, seed=0)


@pytest.mark.parametrize("task", TASKS)
def test_generator_is_deterministic_and_ignores_global_random(task):
    random.seed(1)
    a = format_babi(generate_task(task, 40, seed=5))
    random.seed(2)
    random.random()
    state = random.getstate()
    b = format_babi(generate_task(task, 40, seed=5))
    assert random.getstate() == state  # not consumed either
    assert a == b
    assert format_babi(generate_task(task, 40, seed=6)) != a


def test_load_generated():
    train, test = load_generated(6, 30, 20, seed=4)
    assert len(train) == 30 and len(test) == 20
    assert train == generate_examples(6, 30, seed=4)
    assert format_babi(test) != format_babi(generate_examples(6, 20, seed=4))
    assert load_generated(6, 30, 20, seed=4) == (train, test)


# --------------------------------------------------------------------------------------------
# Independent solvers: the generator's answers and supporting facts are right
# --------------------------------------------------------------------------------------------

def _is_move(sent):  # "... to the <place>"
    return sent[-3:-1] == ["to", "the"]


def solve_where_person(ex):
    """Task 1: where is X -> the place of X's latest move."""
    where, line = {}, {}
    for i, sent in enumerate(ex.story):
        if _is_move(sent):
            where[sent[0]], line[sent[0]] = sent[-1], i
    assert ex.question[:2] == ["where", "is"]
    person = ex.question[2]
    return [where[person]], [line[person]]


def solve_yes_no(ex):
    """Task 6: is X in the Y -> yes/no from X's latest move (object sentences are noise)."""
    where, line = {}, {}
    for i, sent in enumerate(ex.story):
        if _is_move(sent):
            where[sent[0]], line[sent[0]] = sent[-1], i
    assert ex.question[0] == "is" and ex.question[2:4] == ["in", "the"]
    person, place = ex.question[1], ex.question[4]
    return ["yes" if where[person] == place else "no"], [line[person]]


def solve_coreference(ex):
    """Task 11: 'he'/'she' is the person of the sentence before."""
    where, lines, subject = {}, {}, None
    for i, sent in enumerate(ex.story):
        if "he" in sent or "she" in sent:
            lines[subject] = [i - 1, i]
        else:
            subject = sent[0]
        where[subject] = sent[-1]
    return [where[ex.question[2]]], lines[ex.question[2]]


TAKE, DROP, GIVE = {"got", "grabbed", "took", "picked"}, {"dropped", "discarded", "left", "put"}, {"gave", "handed", "passed"}


def _objects(ex):
    """Replay who carries what (in order taken) and the object lines of each person."""
    carrying, events = defaultdict(list), defaultdict(list)
    for i, sent in enumerate(ex.story):
        who, verb = sent[0], sent[1]
        if verb in TAKE | DROP | GIVE:
            obj = sent[sent.index("the") + 1]
            if verb in TAKE:
                carrying[who].append(obj)
            else:
                carrying[who].remove(obj)
                if verb in GIVE:
                    carrying[sent[-1]].append(obj)
                    events[sent[-1]].append(i)
            events[who].append(i)
    return carrying, events


NUMBERS = ["none", "one", "two", "three"]


def solve_count(ex):
    carrying, events = _objects(ex)
    assert ex.question[:3] == ["how", "many", "objects"]
    person = ex.question[4]
    return [NUMBERS[len(carrying[person])]], events[person]


def solve_list(ex):
    carrying, events = _objects(ex)
    assert ex.question[:2] == ["what", "is"] and ex.question[-1] == "carrying"
    person = ex.question[2]
    return carrying[person] or ["nothing"], events[person]


def _object_places(ex):
    """Replay where each object is, and the places it has been in."""
    at, holder, history = {}, {}, defaultdict(list)
    for sent in ex.story:
        who, verb = sent[0], sent[1]
        if _is_move(sent):
            at[who] = sent[-1]
            for obj, h in holder.items():
                if h == who:
                    history[obj].append(sent[-1])
        elif verb in TAKE:
            obj = sent[sent.index("the") + 1]
            holder[obj] = who
            if not history[obj] or history[obj][-1] != at[who]:
                history[obj].append(at[who])
        elif verb in DROP:
            del holder[sent[sent.index("the") + 1]]
    return at, holder, history


def solve_where_object(ex):
    at, holder, history = _object_places(ex)
    obj = ex.question[3]
    return [at[holder[obj]] if obj in holder else history[obj][-1]], None


def solve_where_before(ex):
    _, _, history = _object_places(ex)
    assert ex.question[:3] == ["where", "was", "the"] and ex.question[4:6] == ["before", "the"]
    obj, place = ex.question[3], ex.question[6]
    last_visit = len(history[obj]) - 1 - history[obj][::-1].index(place)
    return [history[obj][last_visit - 1]], None


SINGULAR = {"mice": "mouse", "sheep": "sheep", "wolves": "wolf", "cats": "cat"}


def solve_deduction(ex):
    fears, kind, line = {}, {}, {}
    for i, sent in enumerate(ex.story):
        if sent[1:4] == ["are", "afraid", "of"]:
            fears[SINGULAR[sent[0]]] = SINGULAR[sent[4]]
            line[SINGULAR[sent[0]]] = i
        elif sent[1:3] == ["is", "a"]:
            kind[sent[0]] = sent[3]
            line[sent[0]] = i
    name = ex.question[2]
    return [fears[kind[name]]], [line[name], line[kind[name]]]


SOLVERS = {1: solve_where_person, 2: solve_where_object, 3: solve_where_before, 6: solve_yes_no,
           7: solve_count, 8: solve_list, 11: solve_coreference, 15: solve_deduction}


@pytest.mark.parametrize("task", TASKS)
def test_independent_solver_agrees(task):
    n = 300 if task in (1, 6) else 150
    examples = generate_examples(task, n, seed=11)
    assert len(examples) == n
    for ex in examples:
        answer, supporting = SOLVERS[task](ex)
        assert ex.answer == answer, (task, ex)
        if supporting is not None:
            assert ex.supporting == supporting, (task, ex)
        else:  # tasks 2 and 3: the first supporting fact is the object's latest sentence
            obj = ex.question[3]
            mentions = [i for i, s in enumerate(ex.story) if obj in s]
            assert ex.supporting[0] == mentions[-1]
            assert len(ex.supporting) == (2 if task == 2 else 3)
    answers = [" ".join(ex.answer) for ex in examples]
    if task == 6:  # both answers are common, so a constant answer would fail
        assert 0.3 < answers.count("yes") / n < 0.7
    if task == 7:
        assert {"none", "one", "two"} <= set(answers)
    if task == 8:
        assert "nothing" in answers and any(len(ex.answer) >= 2 for ex in examples)


def test_solver_catches_a_wrong_answer():
    """The check above can fail: corrupt one answer and the solver disagrees."""
    ex = generate_examples(1, 1, seed=0)[0]
    assert solve_where_person(ex)[0] == ex.answer
    ex.answer = ["nowhere"]
    assert solve_where_person(ex)[0] != ex.answer


# --------------------------------------------------------------------------------------------
# Writing errors, folders
# --------------------------------------------------------------------------------------------

def test_writer_refuses_what_would_not_read_back(tmp_path):
    bad_text = Story([Statement("Mary went\tto the garden.")])
    bad_answer = Story([Statement("Mary got the milk."), Question("What is Mary carrying?", ["milk,apple"], [1])])
    bad_support = Story([Statement("Mary got the milk."), Question("What is Mary carrying?", ["milk"], [2])])
    for story in (bad_text, bad_answer, bad_support):
        with pytest.raises(ValueError):
            write_babi([story], tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists() and list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError):
        format_babi([bad_text, generate_examples(1, 1)[0]])
    upper = BabiExample(story=[["Mary", "went"]], question=["where"], answer=["x"], supporting=[0])
    with pytest.raises(ValueError, match="read back"):
        format_babi([upper])


def test_load_task_folder_layouts(tmp_path):
    stories = generate_task(6, 10, seed=0)
    name = f"{TASK_NAMES[6]}_test.txt"
    write_babi(stories, tmp_path / "release" / "en" / name)
    write_babi(stories, tmp_path / "flat" / name)
    expected = stories_to_examples(stories)
    assert load_task(tmp_path / "release", 6, "test") == expected
    assert load_task(tmp_path / "flat", 6, "test") == expected
    with pytest.raises(FileNotFoundError) as info:
        load_task(tmp_path / "release", 6, "test", variant="en-10k")
    assert str(tmp_path / "release") in str(info.value) and name in str(info.value)
    with pytest.raises(FileNotFoundError, match="qa6_yes-no-questions_train.txt"):
        load_task(tmp_path / "flat", 6, "train")
    with pytest.raises(ValueError):
        load_task(tmp_path / "flat", 21, "train")
    assert len(TASK_NAMES) == 20 and TASK_NAMES[1] == "qa1_single-supporting-fact"


@pytest.mark.skipif(not (REAL_BABI / "en").is_dir(), reason=f"no bAbI release in {REAL_BABI}")
def test_real_release_parses():
    for task in range(1, 21):  # every line of all 40 files passes the checks
        for split in ("train", "test"):
            stories = read_babi_stories(REAL_BABI / "en" / f"{TASK_NAMES[task]}_{split}.txt")
            assert sum(s.n_questions for s in stories) == 1000, (task, split)
    for task in (3, 8, 19):  # the longest stories; lists; two-word answers ("n,w")
        examples = load_task(REAL_BABI, task, "test")
        assert len(examples) == 1000
        assert all(ex.task == task and ex.answer and ex.supporting for ex in examples)
        assert all(i < len(ex.story) for ex in examples for i in ex.supporting)
    assert any(len(ex.answer) == 2 for ex in examples)
    # the writer reproduces a released file byte for byte
    path = REAL_BABI / "en" / f"{TASK_NAMES[1]}_train.txt"
    assert format_babi(read_babi_stories(path)) == path.read_text()
    first = load_task(REAL_BABI / "en", 1, "train")[0]
    assert (first.answer, first.supporting, first.story[0]) == (["bathroom"], [0], ["mary", "moved", "to", "the", "bathroom"])


# --------------------------------------------------------------------------------------------
# Download, with a local file:// archive (no network)
# --------------------------------------------------------------------------------------------

def _tarball(folder: Path, members: dict[str, str], name: str = "tasks_1-20_v1-2.tar.gz") -> tuple[Path, str]:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with tarfile.open(path, "w:gz") as tar:
        for member, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


QA1 = f"tasks_1-20_v1-2/en/{TASK_NAMES[1]}_train.txt"


def test_download_with_good_checksum(tmp_path):
    text = format_babi(generate_task(1, 10, seed=0))
    archive, digest = _tarball(tmp_path / "server", {QA1: text})
    cache = tmp_path / "cache"
    folder = download_babi(cache, url=archive.as_uri(), sha256=digest, quiet=True)
    assert folder == cache / "babi" / "tasks_1-20_v1-2"
    assert load_task(folder, 1, "train") == generate_examples(1, 10, seed=0)
    assert sorted(p.name for p in (cache / "babi").iterdir()) == ["tasks_1-20_v1-2", "tasks_1-20_v1-2.tar.gz"]
    archive.unlink()  # a second call finds the folder and needs no download
    assert download_babi(cache, url=archive.as_uri(), sha256=digest, quiet=True) == folder


def test_download_with_bad_checksum_keeps_nothing(tmp_path):
    archive, digest = _tarball(tmp_path / "server", {QA1: "1 Mary went to the garden.\n"})
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError, match=digest):
        download_babi(cache, url=archive.as_uri(), sha256="0" * 64, quiet=True)
    assert list((cache / "babi").iterdir()) == []  # no archive, no partial download
    with pytest.raises(OSError):  # a failed transfer leaves nothing either
        download_babi(cache, url=(tmp_path / "missing.tar.gz").as_uri(), sha256=digest, quiet=True)
    assert list((cache / "babi").iterdir()) == []


def test_download_refuses_paths_outside_the_target(tmp_path):
    archive, digest = _tarball(tmp_path / "server", {"tasks_1-20_v1-2/en/x.txt": "ok", "../../evil.txt": "boo"})
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match="unsafe path"):
        download_babi(cache, url=archive.as_uri(), sha256=digest, quiet=True)
    assert not list(tmp_path.rglob("evil.txt"))
    assert sorted(p.name for p in (cache / "babi").iterdir()) == ["tasks_1-20_v1-2.tar.gz"]  # no folder


def test_download_trust_on_first_use(tmp_path, monkeypatch, capsys):
    archive, digest = _tarball(tmp_path / "server", {QA1: format_babi(generate_task(1, 5, seed=1))})
    monkeypatch.setenv("DCA_COURSE_CACHE", str(tmp_path / "env-cache"))
    assert default_cache_dir() == tmp_path / "env-cache"
    folder = download_babi(url=archive.as_uri(), sha256=None, quiet=True)
    assert folder == tmp_path / "env-cache" / "babi" / "tasks_1-20_v1-2"
    assert digest in capsys.readouterr().out
    assert (folder.parent / "tasks_1-20_v1-2.tar.gz.sha256").read_text().strip() == digest
    monkeypatch.delenv("DCA_COURSE_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "dca_course"
