"""The README's table, notebook 00's map and each notebook's first cell show one measured time table."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"


@pytest.fixture(scope="module")
def notebook_times():
    spec = importlib.util.spec_from_file_location("tool_notebook_times", TOOLS / "notebook_times.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_format_time(notebook_times):
    assert notebook_times.format_time(4) == "under 10 s"
    assert notebook_times.format_time(47) == "about 45 s"
    assert notebook_times.format_time(163) == "about 2 min 40 s"
    assert notebook_times.format_time(118) == "about 2 min"


def test_every_notebook_has_a_measured_time(notebook_times):
    times = notebook_times.load_times()["notebooks"]
    names = sorted(p.stem for p in notebook_times.NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))
    assert sorted(times) == names


def test_the_three_places_agree_with_times_json(notebook_times):
    for path, text in notebook_times.render(notebook_times.load_times()).items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} does not show the times of notebooks/times.json: run python tools/notebook_times.py")


def test_render_changes_the_three_places_when_a_time_changes(notebook_times):
    times = notebook_times.load_times()
    name = sorted(times["notebooks"])[1]
    changed = json.loads(json.dumps(times))
    changed["notebooks"][name] = times["notebooks"][name] + 600       # ten minutes more
    before, after = notebook_times.render(times), notebook_times.render(changed)
    differs = {p.name for p in before if before[p] != after[p]}
    assert {"README.md", "00_welcome.ipynb", f"{name}.ipynb"} <= differs
    assert notebook_times.format_time(times["notebooks"][name] + 600) in after[notebook_times.README]
