"""Every exercise's solution passes its self-check, and every notebook has at least two."""
from __future__ import annotations

import contextlib
import io
import re

import pytest
import torch

from dca_course.exercises import load_solution, solution, solution_keys

KEYS = solution_keys()


@pytest.mark.parametrize("key", KEYS)
def test_solution_passes_its_check(key):
    answer, check = load_solution(key)
    torch.manual_seed(0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ok = check(answer)
    assert ok is True, out.getvalue()
    assert out.getvalue().startswith("PASS"), out.getvalue()


@pytest.mark.parametrize("notebook", [f"{n:02d}" for n in range(1, 9)])
def test_every_notebook_has_two_checked_exercises(notebook):
    mine = [k for k in KEYS if k.startswith(notebook + ".")]
    assert len(mine) >= 2, f"notebook {notebook} has solutions for {mine}"


def test_solution_prints_the_answer_and_names_its_check():
    key = KEYS[0]
    answer, check = load_solution(key)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        solution(key)
    assert check.__name__ in out.getvalue() and f"def {answer.__name__}" in out.getvalue()


@pytest.mark.parametrize("bad", ["5.1", "05", "99.1", "01.99"])
def test_a_wrong_key_says_what_a_key_looks_like(bad):
    with pytest.raises(KeyError, match=re.escape(bad[:2]) if bad[0] != "5" else "05.1"):
        load_solution(bad)


@pytest.mark.parametrize("key", KEYS)
def test_every_solution_prints(key):
    """solution() prints classes too (inspect finds a class's source through sys.modules)."""
    answer, _ = load_solution(key)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        solution(key)
    assert f"# Solution to exercise {key}" in out.getvalue()
    assert f"{'class' if isinstance(answer, type) else 'def'} {answer.__name__}" in out.getvalue()


def _notebook(number):
    import json
    from pathlib import Path
    path = next((Path(__file__).resolve().parents[1] / "notebooks").glob(f"{number}_*.ipynb"))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(c["cell_type"], "".join(c["source"])) for c in cells]


@pytest.mark.parametrize("key", KEYS)
def test_the_text_names_each_exercise_by_its_key(key):
    """What the learner reads is the key solution() takes: "exercise 05.1" in the text, the stub's docstring
    says "Exercise 05.1" and its cell calls that exercise's check."""
    cells = _notebook(key[:2])
    text = " ".join(src for kind, src in cells if kind == "markdown")
    assert re.search(rf"\b[Ee]xercise {re.escape(key)}\b", text), f"notebook {key[:2]}'s text never says 'exercise {key}'"
    _, check = load_solution(key)
    stubs = [src for kind, src in cells if kind == "code" and f"Exercise {key}" in src]
    assert len(stubs) == 1 and f"{check.__name__}(" in stubs[0], f"no one stub cell 'Exercise {key}' calling {check.__name__}"


@pytest.mark.parametrize("notebook", [f"{n:02d}" for n in range(1, 9)])
def test_no_other_number_for_a_checked_exercise(notebook):
    """A numbered item or an 'Exercise N' label that names a key must be exercise K of that key (05's
    "4. ... (05.1)" once sent the learner to solution("05.1") for what the text called exercise 4)."""
    for kind, src in _notebook(notebook):
        if kind != "markdown":
            continue
        for line in src.splitlines():
            item = re.match(r"\s*(\d+)\. .*?\b(\d\d)\.(\d+)\b", line)
            if item and item.group(2) == notebook:
                assert item.group(1) == item.group(3), f"notebook {notebook}: item {item.group(1)} names key " \
                                                       f"{item.group(2)}.{item.group(3)}: {line.strip()[:100]}"
            label = re.match(r"\s*Exercise (\d+)\b(?!\.\d)", line)
            assert not label, f"notebook {notebook}: '{line.strip()[:60]}' should name the key ({notebook}.N)"
