"""A saved notebook shows each training cell's progress bar finished ("100%| 94/94"), not the state its widget had
when first drawn ("0%| 0/94", what GitHub shows of a bar saved as a widget)."""
import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
BAR = re.compile(r"(\d+)%\|[^|\n]*\|\s*(\d+)/(\d+)")


def bars(path: Path):
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        for out in cell.get("outputs", []):
            text = "".join(out.get("data", {}).get("text/plain", "")) if out["output_type"] == "display_data" else ""
            for m in BAR.finditer(text):
                yield i, out, m


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_saved_progress_bars_read_as_finished(path):
    for i, out, m in bars(path):
        percent, n, total = (int(g) for g in m.groups())
        assert percent == 100 and n == total, f"{path.name} cell {i}: a bar saved unfinished: {m.group(0)!r}"
        assert "application/vnd.jupyter.widget-view+json" not in out["data"], \
            f"{path.name} cell {i}: a widget bar (a viewer without its state shows its first text)"


def test_the_course_saves_some_bars():
    assert sum(1 for p in NOTEBOOKS for _ in bars(p)) >= 10
