"""Every reader fed malformed variants of a good file: empty lines, bytes that are not UTF-8,
NUL bytes, CRLF line ends, a truncated last line.  Each variant is read as the good file is, or
gives one line naming the file (and the line, for text), which the command line prints as
``dca-course: error: FILE:LINE: ...`` with exit status 2."""
from __future__ import annotations

import re

import pytest
import torch

from dca_course.__main__ import main
from dca_course.data.babi import read_babi
from dca_course.data.cnndm import read_line_files, read_story_folder
from dca_course.errors import InputError
from dca_course.train import load_checkpoint, save_checkpoint

BABI = (b"1 Mary moved to the bathroom.\n2 John went to the hallway.\n3 Where is Mary? \tbathroom\t1\n"
        b"1 Sandra journeyed to the garden.\n2 Where is Sandra? \tgarden\t1\n")
SOURCE = b"the cat sat on the mat . it was happy .\nrain fell on the town . people stayed in .\n"
TARGET = b"the cat sat .\tit was happy .\nrain fell .\n"
STORY = (b"The cat sat on the mat.\n\nIt was happy.\n\n@highlight\n\nthe cat sat\n\n@highlight\n\n"
         b"it was happy\n")


def crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


def no_final_newline(data: bytes) -> bytes:
    return data[:-1]


def replace_line(data: bytes, lineno: int, line: bytes) -> bytes:
    lines = data.split(b"\n")
    lines[lineno - 1] = line
    return b"\n".join(lines)


def outcome(read):
    """("read", value) or ("error", message), failing on any error but an InputError."""
    try:
        return "read", read()
    except InputError as exc:
        return "error", str(exc)


def assert_one_line_at(message: str, path, lineno: int | None):
    assert "\n" not in message, message
    where = re.escape(str(path)) + (f":{lineno}: " if lineno else r":")
    assert re.match(where, message), (message, where)


def babi_questions(examples):
    return [(ex.story, ex.question, ex.answer, ex.supporting) for ex in examples]


# -- bAbI ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant,error_line", [
    (crlf, None), (no_final_newline, None),
    (lambda d: replace_line(d, 4, b"\n1 Sandra journeyed to the garden."), None),          # an empty line
    (lambda d: replace_line(d, 2, b"2 John went to the h\xe9llway."), 2),                  # Latin-1
    (lambda d: replace_line(d, 2, b"2 John went to the\x00hallway."), 2),                  # NUL
    (lambda d: d[: d.index(b"\tgarden")] + b"\tgar", 5),                                   # cut mid-line
])
def test_babi_reader(tmp_path, variant, error_line):
    good, bad = tmp_path / "qa1_good_train.txt", tmp_path / "qa1_bad_train.txt"
    good.write_bytes(BABI)
    bad.write_bytes(variant(BABI))
    kind, value = outcome(lambda: read_babi(bad))
    if error_line is None:
        assert kind == "read", value
        assert babi_questions(value) == babi_questions(read_babi(good))
    else:
        assert kind == "error"
        assert_one_line_at(value, bad, error_line)


def test_babi_error_on_the_command_line(tmp_path, capsys):
    en = tmp_path / "en"
    en.mkdir()
    (en / "qa1_single-supporting-fact_train.txt").write_bytes(replace_line(BABI, 2, b"2 J\xffohn went."))
    (en / "qa1_single-supporting-fact_test.txt").write_bytes(BABI)
    assert main(["train", "dmn", "--data", f"babi:{tmp_path}:1", "--device", "cpu", "--out",
                 str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"dca-course: error: {en}/qa1_single-supporting-fact_train.txt:2: ")


# -- CNN/DailyMail line files -------------------------------------------------------------------
@pytest.mark.parametrize("which,variant,error_line", [
    ("both", crlf, None), ("both", no_final_newline, None),
    ("source", lambda d: replace_line(d, 2, b""), 2),                                     # an empty line
    ("target", lambda d: replace_line(d, 1, b"the c\xe4t sat ."), 1),                      # Latin-1
    ("source", lambda d: replace_line(d, 1, b"the cat\x00sat ."), 1),                      # NUL
    ("target", lambda d: d[: d.index(b"\n") + 1], 2),                                      # lost its last line
])
def test_cnndm_line_files(tmp_path, which, variant, error_line):
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder in (good, bad):
        folder.mkdir()
        (folder / "test.source").write_bytes(SOURCE)
        (folder / "test.target.sents.tsv").write_bytes(TARGET)
    names = {"source": ["test.source"], "target": ["test.target.sents.tsv"],
             "both": ["test.source", "test.target.sents.tsv"]}[which]
    for name in names:
        (bad / name).write_bytes(variant((bad / name).read_bytes()))
    kind, value = outcome(lambda: read_line_files(bad / "test.source", bad / "test.target.sents.tsv"))
    if error_line is None:
        assert kind == "read", value
        expected = read_line_files(good / "test.source", good / "test.target.sents.tsv")
        assert [(e.source, e.summary_text()) for e in value] == [(e.source, e.summary_text()) for e in expected]
    else:
        assert kind == "error"
        assert_one_line_at(value, bad / names[0], error_line)


def test_cnndm_empty_line_on_the_command_line(tmp_path, capsys):
    for split in ("train", "val", "test"):
        (tmp_path / f"{split}.source").write_bytes(SOURCE if split != "train" else b"\n" + SOURCE)
        (tmp_path / f"{split}.target.sents.tsv").write_bytes(TARGET if split != "train" else b"x .\n" + TARGET)
    assert main(["train", "pointer-generator", "--data", f"cnndm:{tmp_path}", "--device", "cpu", "--out",
                 str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"dca-course: error: {tmp_path}/train.source:1: empty line"), err


# -- CNN/DailyMail .story files -----------------------------------------------------------------
@pytest.mark.parametrize("variant,error_line", [
    (crlf, None), (no_final_newline, None),
    (lambda d: d.replace(b"happy.\n\n@", b"happy.\n\n\n\n@"), None),                      # more empty lines
    (lambda d: d.replace(b"The cat", b"The c\xe4t"), None),                                # Latin-1: U+FFFD, read
    (lambda d: d.replace(b"It was", b"It\x00was"), 3),                                     # NUL
])
def test_cnndm_story_files(tmp_path, variant, error_line):
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder, data in ((good, STORY), (bad, variant(STORY))):
        folder.mkdir()
        (folder / "a.story").write_bytes(data)
    kind, value = outcome(lambda: read_story_folder(bad))
    if error_line is None:
        assert kind == "read", value
        expected = read_story_folder(good)
        assert [e.summary_text() for e in value] == [e.summary_text() for e in expected]
        if b"\xe4" in variant(STORY):       # the stray byte becomes U+FFFD, the rest is read as it was
            assert "\ufffd" in "".join(value[0].source) and value[0].source[-5:] == expected[0].source[-5:]
        else:
            assert value[0].source == expected[0].source
    else:
        assert kind == "error"
        assert_one_line_at(value, bad / "a.story", error_line)


# -- score files --------------------------------------------------------------------------------
PRED = b"the cat sat on the mat .\nrain fell .\n"
REF = b"the cat sat .\nrain fell on the town .\n"


@pytest.mark.parametrize("variant,error_line", [
    (crlf, None), (no_final_newline, None),
    (lambda d: replace_line(d, 2, b""), None),                                            # an empty summary
    (lambda d: replace_line(d, 2, b"rain f\xe9ll ."), 2),                                  # Latin-1
    (lambda d: replace_line(d, 1, b"the\x00cat ."), 1),                                    # NUL
])
def test_score_files(tmp_path, capsys, variant, error_line):
    ref, good, bad = tmp_path / "ref.txt", tmp_path / "good.txt", tmp_path / "bad.txt"
    ref.write_bytes(REF)
    good.write_bytes(PRED)
    bad.write_bytes(variant(PRED))
    code = main(["score", "--pred", str(bad), "--ref", str(ref)])
    out, err = capsys.readouterr()
    if error_line is None:
        assert code == 0, err
        if variant in (crlf, no_final_newline):
            assert main(["score", "--pred", str(good), "--ref", str(ref)]) == 0
            assert capsys.readouterr().out.replace(str(good), str(bad)) == out
    else:
        assert code == 2 and out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dca-course: error: "), err
        assert_one_line_at(lines[0][len("dca-course: error: "):], bad, error_line)


# -- checkpoints --------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["truncated", "nul", "text", "empty", "crlf"])
def test_checkpoints(tmp_path, capsys, damage):
    run = tmp_path / "run"
    good = save_checkpoint(run / "last.pt", {"model": {"w": torch.arange(100.0)}, "recipe": "dmn"})
    data = good.read_bytes()
    bad = {"truncated": data[: len(data) // 2], "nul": b"\x00" * len(data), "text": b"not a checkpoint\r\n",
           "empty": b"", "crlf": data.replace(b"\n", b"\r\n")}[damage]
    if bad == data:
        pytest.skip("this checkpoint holds no newline byte")
    good.write_bytes(bad)
    kind, value = outcome(lambda: load_checkpoint(good))
    assert kind == "error"
    assert_one_line_at(value, good, None)
    assert main(["evaluate", str(run), "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"dca-course: error: {good}: "), err


def test_score_files_of_different_lengths_name_where_the_shorter_ends(tmp_path, capsys):
    pred, ref = tmp_path / "pred.txt", tmp_path / "ref.txt"
    pred.write_bytes(PRED)
    ref.write_bytes(REF + b"one more .\n")
    assert main(["score", "--pred", str(pred), "--ref", str(ref)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"dca-course: error: {pred}:3: the file ends here, but {ref} has 3")
