"""The solutions reach an installed copy: build the wheel, install it into a fresh folder with no
repository beside it, and print every exercise's solution from there (what Colab's set-up cell gets)."""
from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(course_wheel) -> Path:
    return course_wheel           # built once for the session (tests/conftest.py)


def test_the_wheel_holds_every_solution_file(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    here = sorted(p.name for p in (ROOT / "dca_course" / "exercises" / "answers").glob("[0-9][0-9]_*.py"))
    shipped = sorted(Path(n).name for n in names if n.startswith("dca_course/exercises/answers/") and n.endswith(".py"))
    assert here and shipped == here


def test_solution_works_from_an_installed_wheel(wheel, tmp_path):
    target, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(target),
                    str(wheel)], check=True, capture_output=True, text=True)
    code = (
        "import contextlib, io, json, dca_course\n"
        "from dca_course.exercises import load_solution, solution, solution_keys\n"
        "results = {}\n"
        "for key in solution_keys():\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out):\n"
        "        solution(key)\n"
        "        answer, check = load_solution(key)\n"
        "        ok = check(answer)\n"
        "    results[key] = [ok, out.getvalue()[:200]]\n"
        "print(json.dumps({'file': dca_course.__file__, 'results': results}))\n")
    # Only the fresh folder on the path ahead of the environment's packages; run from a folder with no
    # repository in it or above it, so that nothing can read the working tree's files.
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "HOME": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=elsewhere, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(report["file"]).resolve().is_relative_to(target.resolve()), report["file"]
    from dca_course.exercises import solution_keys
    assert sorted(report["results"]) == sorted(solution_keys())
    for key, (ok, printed) in report["results"].items():
        assert printed.startswith(f"# Solution to exercise {key}"), (key, printed)
        assert ok is True, (key, printed)
