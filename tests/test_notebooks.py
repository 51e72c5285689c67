"""Notebook hygiene: saved executed in order, kernel python3, no errors, nothing machine-specific."""
import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]
MACHINE_SPECIFIC = [
    (re.compile(r"/home/\w+|/Users/\w+|/root/|C:\\\\Users"), "a home path"),
    (re.compile(r"NVIDIA|GeForce|Tesla [A-Z]\d|\bH100\b|\bA100\b|\bH200\b|Apple M\d"), "a device name"),
]


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]


def _texts(cell):
    for out in cell.get("outputs", []):
        if "text" in out:
            yield "".join(out["text"])
        for key, val in out.get("data", {}).items():
            if key.startswith("text/"):
                yield "".join(val)


def test_notebooks_exist_and_are_numbered():
    assert NOTEBOOKS, "no notebooks found"
    for p in NOTEBOOKS:
        assert re.fullmatch(r"\d\d[a-z]?_[a-z0-9_]+\.ipynb", p.name), f"{p.name}: use NN_lower_case.ipynb (NNb_ for an aside after NN)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_kernel_is_python3(path):
    assert _load(path)["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_saved_executed_top_to_bottom(path):
    counts = [c["execution_count"] for c in _code_cells(_load(path))]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: run it top to bottom in a fresh kernel, then save"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_stored_errors(path):
    for i, cell in enumerate(_code_cells(_load(path))):
        if "NBVAL_RAISES_EXCEPTION" in "".join(cell["source"]):
            continue
        kinds = [o["output_type"] for o in cell.get("outputs", [])]
        assert "error" not in kinds, f"{path.name}: code cell {i} has a stored error"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_machine_specific_output(path):
    for i, cell in enumerate(_code_cells(_load(path))):
        for text in _texts(cell):
            for pattern, what in MACHINE_SPECIFIC:
                assert not pattern.search(text), f"{path.name}: code cell {i} prints {what}: {pattern.search(text)[0]!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_starts_with_badges_for_its_own_path(path):
    first = "".join(_load(path)["cells"][0]["source"])
    assert f"colab.research.google.com/github/dca-course/dca-course/blob/main/notebooks/{path.name}" in first
    assert f"labpath=notebooks%2F{path.name}" in first


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_blanket_ignores(path):
    nb = _load(path)
    code = _code_cells(nb)
    ignored = sum("NBVAL_IGNORE_OUTPUT" in "".join(c["source"]) or "NBVAL_SKIP" in "".join(c["source"]) for c in code)
    assert ignored <= len(code) // 3, f"{path.name}: {ignored} of {len(code)} cells are not compared"
    assert "nbval" not in json.dumps(nb["metadata"]).lower()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_seed_comes_from_dca_seed(path):
    """setup() must take DCA_SEED, so `DCA_SEED=1 make notebooks` really trains on another seed."""
    for i, cell in enumerate(_code_cells(_load(path))):
        src = "".join(cell["source"])
        assert "setup(seed=" not in src, f"{path.name}: code cell {i} fixes setup()'s seed; use dca_course.setup()"
    sources = ["".join(c["source"]) for c in _code_cells(_load(path))]
    assert any("dca_course.setup()" in s for s in sources), f"{path.name}: no dca_course.setup() call"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_full_size_runs_start_only_when_asked(path):
    """A GPU alone must never start a full-profile run: only DCA_FULL=1 (outputs.full_requested) does."""
    for i, cell in enumerate(_code_cells(_load(path))):
        src = "".join(cell["source"])
        if "profile full" in src or '"full"' in src:
            runs = "subprocess.run" in src or "fit(" in src or ".train(" in src
            if runs:
                assert "full_requested()" in src, f"{path.name}: code cell {i} may start a full-size run without DCA_FULL=1"
            assert "cuda.is_available()" not in src or "full_requested()" in src, (
                f"{path.name}: code cell {i} decides a full-size run by the presence of CUDA")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_bare_asserts_on_trained_numbers_in_training_notebooks(path):
    """Claims about trained models go through outputs.claim (logged, margin measured over seeds)."""
    for i, cell in enumerate(_code_cells(_load(path))):
        src = "".join(cell["source"])
        for line in src.splitlines():
            stripped = line.strip()
            if stripped.startswith("assert ") and any(
                    key in stripped for key in ("rouge", "accuracy", "fact_recall", "val_", "reward")):
                pytest.fail(f"{path.name}: code cell {i} asserts a trained number without claim(): {stripped[:80]}")
