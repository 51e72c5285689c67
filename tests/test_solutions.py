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
