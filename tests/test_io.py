"""dca_course.io: atomic writes leave the old file or the new one, never half of one, and
the library has one atomic writer, not a copy per module."""
from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from dca_course import io

PACKAGE = Path(io.__file__).resolve().parent


class Boom(RuntimeError):
    pass


def test_a_writer_that_raises_leaves_no_file(tmp_path):
    target = tmp_path / "sub" / "out.txt"

    def broken(tmp):
        Path(tmp).write_text("half of it")
        raise Boom("disk full")

    with pytest.raises(Boom):
        io.atomic_write(target, broken)
    assert not target.exists()
    assert os.listdir(target.parent) == [], "the temporary file must be removed"


def test_a_writer_that_raises_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.json"
    io.write_json(target, {"a": 1})

    def broken(tmp):
        Path(tmp).write_text('{"a": ')
        raise Boom("interrupted")

    with pytest.raises(Boom):
        io.atomic_write(target, broken)
    assert json.loads(target.read_text()) == {"a": 1}
    assert os.listdir(tmp_path) == ["out.json"]


def test_the_file_is_replaced_in_one_step(tmp_path, monkeypatch):
    """The new content goes to a temporary file in the same folder, and only ``os.replace``
    puts it at the path: until then a reader sees the old content."""
    target = tmp_path / "out.txt"
    io.write_text(target, "old\n")
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append((Path(src).parent, Path(dst), target.read_text(), Path(src).read_text()))
        real_replace(src, dst)

    monkeypatch.setattr(io.os, "replace", spy)
    path = io.write_text(target, "new\n")
    assert path == target and target.read_text() == "new\n"
    assert seen == [(tmp_path, target, "old\n", "new\n")]
    assert os.listdir(tmp_path) == ["out.txt"]


def test_helpers_write_what_they_say(tmp_path):
    assert io.write_json(tmp_path / "a.json", {"b": 2, "a": [1]}).read_text() == '{\n  "a": [\n    1\n  ],\n  "b": 2\n}\n'
    assert io.write_lines(tmp_path / "l.txt", ["x y", "z"]).read_bytes() == b"x y\nz\n"
    assert io.write_lines(tmp_path / "e.txt", []).read_bytes() == b""
    assert io.write_text(tmp_path / "deep" / "t.txt", "é\n").read_bytes() == "é\n".encode()


# -- one atomic writer ------------------------------------------------------------------------
IO_HELPERS = {"atomic_write", "write_text", "write_json", "write_lines"}
TEMP_FILES = {"mkstemp", "NamedTemporaryFile"}


def _called(fn: ast.AST) -> set[str]:
    """Names of the functions ``fn`` calls (``os.replace`` -> ``replace``)."""
    names = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return names


def own_atomic_writers(path: Path) -> list[str]:
    """Functions in ``path`` that copy dca_course.io: one named like its helpers (``_write_lines``,
    ``_atomic_write_text``), or one that makes a temporary file and ``os.replace``s it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name.lstrip("_")
            calls = _called(node)
            if name in IO_HELPERS or "atomic_write" in name or ("replace" in calls and calls & TEMP_FILES):
                found.append(node.name)
    return found


SOURCES = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if p.name != "io.py"
                 or p.parent != PACKAGE)


def test_the_scan_finds_a_copy(tmp_path):
    copy = tmp_path / "copy.py"
    copy.write_text("import os, tempfile\n"
                    "def save(path, text):\n"
                    "    fd, tmp = tempfile.mkstemp(dir='.')\n"
                    "    os.replace(tmp, path)\n"
                    "def _write_lines(path, lines):\n"
                    "    pass\n")
    assert own_atomic_writers(copy) == ["save", "_write_lines"]
    assert own_atomic_writers(PACKAGE / "io.py") == ["atomic_write", "write_text", "write_json", "write_lines"]


@pytest.mark.parametrize("source", SOURCES)
def test_no_second_atomic_writer(source):
    assert own_atomic_writers(PACKAGE / source) == [], f"{source}: write files with dca_course.io instead"
