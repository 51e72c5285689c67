"""One measured table of notebook times, and the three places that show it.

``notebooks/times.json`` holds each notebook's time under ``pytest --nbval`` (seed 0, one
thread: CPU seconds of the kernel and pytest, which is the wall time of the notebook run alone),
measured by ``python tools/notebook_claims.py --seeds 0 --times`` together with the
machine's single-thread speed.  From it this module writes the time in the README's notebook
table, in notebook 00's course map and in each notebook's first cell (its ``**Time.**`` line),
so the three never disagree; ``tests/test_notebook_times.py`` checks that they match.

    python tools/notebook_times.py            # regenerate the three from times.json
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TIMES = NOTEBOOKS / "times.json"
README = ROOT / "README.md"
WELCOME = NOTEBOOKS / "00_welcome.ipynb"


def format_time(seconds: float) -> str:
    """``8 -> 'under 10 s'``, ``47 -> 'about 45 s'``, ``163 -> 'about 2 min 40 s'``."""
    if seconds < 10:
        return "under 10 s"
    if seconds < 60:
        return f"about {5 * round(seconds / 5):.0f} s"
    tens = 10 * round(seconds / 10)
    minutes, rest = divmod(int(tens), 60)
    return f"about {minutes} min" + (f" {rest} s" if rest else "")


def time_line(seconds: float) -> str:
    """The ``**Time.**`` line of a notebook's first cell."""
    return (f"**Time.** {format_time(seconds).capitalize()} with `pytest --nbval` on the project's 2-core CPU "
            "machine (one thread; measured in [times.json](times.json)).")


def load_times() -> dict:
    return json.loads(TIMES.read_text(encoding="utf-8"))


def _replace_last_column(table_text: str, name: str, value: str) -> str:
    """In a markdown table, the row that names notebook ``name`` gets ``value`` as its last cell."""
    pattern = re.compile(rf"^(\|[^\n]*{re.escape(name)}[^\n]*\|)[^|\n]*\|[ \t]*$", re.MULTILINE)
    new, n = pattern.subn(lambda m: f"{m.group(1)} {value} |", table_text, count=1)
    if n != 1:
        raise ValueError(f"no table row for {name}")
    return new


def render(times: dict) -> dict[Path, str]:
    """The new text of the README and of every notebook file, from ``times``."""
    out: dict[Path, str] = {}
    readme = README.read_text(encoding="utf-8")
    for name, seconds in times["notebooks"].items():
        readme = _replace_last_column(readme, f"[{name}]", format_time(seconds))
    speed = times.get("lstm_limit_fast_step_ms")
    footnote = (f"\\*Measured under `pytest --nbval` (seed 0, one thread; CPU seconds, the wall time of the notebook "
                f"run alone) on the project's "
                f"2-core CPU machine" + (f" (a `benchmarks/lstm_limit.py --profile fast` step: {speed:.0f} ms; "
                                          f"machines here differ by up to 3x)" if speed else "")
                + "; the table is generated from [notebooks/times.json](notebooks/times.json).")
    readme, n = re.subn(r"^\\\*Measured under[^\n]*(?:\n(?!\n)[^\n]*)*", lambda m: footnote, readme, count=1,
                        flags=re.MULTILINE)
    if n != 1:
        raise ValueError("README: no footnote starting with '\\*Measured under'")
    out[README] = readme
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        seconds = times["notebooks"].get(path.stem)
        if seconds is None:
            raise ValueError(f"{TIMES.name} has no time for {path.stem}")
        first = "".join(nb["cells"][0]["source"])
        first, n = re.subn(r"^\*\*Time\.\*\*[^\n]*$", lambda m: time_line(seconds), first, count=1, flags=re.MULTILINE)
        if n != 1:
            raise ValueError(f"{path.name}: its first cell has no '**Time.**' line")
        nb["cells"][0]["source"] = first.splitlines(keepends=True)
        if path == WELCOME:
            for cell in nb["cells"]:
                text = "".join(cell["source"])
                if cell["cell_type"] == "markdown" and "## The course map" in text:
                    for name, secs in times["notebooks"].items():
                        text = _replace_last_column(text, f"`{name}`", format_time(secs))
                    cell["source"] = text.splitlines(keepends=True)
        out[path] = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    return out


def update_docs() -> None:
    from dca_course.io import write_text

    for path, text in render(load_times()).items():
        if path.read_text(encoding="utf-8") != text:
            write_text(path, text)


def update_times(seconds_by_notebook: dict, speed_ms: float | None) -> None:
    """Merge newly measured times into times.json (the other notebooks keep theirs), then the docs."""
    from dca_course.io import write_text

    times = load_times() if TIMES.is_file() else {"notebooks": {}}
    times["notebooks"].update({k: round(v) for k, v in seconds_by_notebook.items()})
    times["notebooks"] = dict(sorted(times["notebooks"].items()))
    if speed_ms:
        times["lstm_limit_fast_step_ms"] = speed_ms
    times["how"] = ("CPU seconds (kernel + pytest) under `pytest --nbval`, seed 0, OMP_NUM_THREADS=1: the wall time "
                    "of one notebook run alone; "
                    "made by `python tools/notebook_claims.py --seeds 0 --times`")
    write_text(TIMES, json.dumps(times, indent=2) + "\n")
    update_docs()


if __name__ == "__main__":
    update_docs()
