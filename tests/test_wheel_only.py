"""The notebooks that read stored results and checkpoints run from the wheel alone, as on Colab.

The wheel is installed into a throwaway virtual environment that sees the test environment's packages (PyTorch,
Jupyter) but not the repository: its ``.pth`` names their site-packages folder, whose own ``.pth`` files (the
editable install's among them) Python does not read from there. Notebooks 03b and 08, 06 through its sections
that teach from the shipped checkpoints, and 05's set-up cells with its section "Your own article" (the real-news
model), are copied into an empty folder and executed there in a kernel of that environment; any error, any
"skipped" or "none here" fails the test.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import nbformat
import pytest

from dca_course.shipped import PACKAGED, SHIPPED_RESULTS

ROOT = Path(__file__).resolve().parents[1]
WHOLE = ("03b_babi_lab", "08_results")
CHECKPOINT_MARK = "checkpoint_folder("       # how a cell of 06 loads a shipped checkpoint
SECTIONS = {"03_dynamic_memory_networks": "How the gates are taught",   # run alone after the set-up cells
            "05_pointer_generator_coverage": "Your own article"}
MISSING = ("skipped", "none here", "is not here")

# Run first in every notebook: the kernel's dca_course is the wheel's, and it reads the wheel's copies.
WHERE_FROM = """\
import sys
from pathlib import Path

import dca_course
from dca_course.shipped import checkpoint_folder, results_file

assert Path(dca_course.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()), dca_course.__file__
assert "shipped_files" in results_file("dca.json").parts, results_file("dca.json")
assert "shipped_files" in checkpoint_folder("dca3-synthnews-long").parts
print("the wheel's dca_course")
"""


def checkpoint_cells(nb) -> list:
    """06's cells from the first to the end of the section of its last ``checkpoint_folder(...)`` call (a section
    ends where the next ``## `` heading starts): the sections that teach from the shipped checkpoints, with
    everything they build on; the sections after them (training, the Evidence) are left out."""
    heading = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## ")]
    loads = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and CHECKPOINT_MARK in c.source]
    assert loads, f"06 calls {CHECKPOINT_MARK} in no cell"
    end = next((i for i in heading if i > loads[-1]), len(nb.cells))
    return nb.cells[:end]


def environment_without_the_repository(folder: Path) -> tuple[Path, Path]:
    """A virtual environment in ``folder`` that sees this one's installed packages but no dca_course: its Python
    and its site-packages folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "course-dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python, site


def kernel_spec(folder: Path, python: Path) -> dict:
    """A python3 kernel of that environment, found first through JUPYTER_PATH."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [str(python), "-m", "ipykernel_launcher", "-f",
                                                           "{connection_file}"],
                                                  "display_name": "Python 3", "language": "python"}))
    return {"JUPYTER_PATH": str(folder)}


def section_cells(nb, title: str) -> list:
    """The cells before the first ``## `` heading (title, set-up, imports) and those of the section whose heading
    holds ``title``: a section a learner may run on its own after the set-up cells."""
    heading = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.startswith("## ")]
    start = next(i for i in heading if title in nb.cells[i].source.splitlines()[0])
    end = next((i for i in heading if i > start), len(nb.cells))
    return nb.cells[:heading[0]] + nb.cells[start:end]


def notebook_copies(folder: Path) -> list[Path]:
    """03b and 08 whole, 06 through its checkpoint sections, the set-up cells and one section of 03 and of 05
    (SECTIONS); each with the WHERE_FROM check first."""
    folder.mkdir()
    copies = []
    for name in (*WHOLE, "06_deep_communicating_agents", *SECTIONS):
        nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        if name in SECTIONS:
            nb.cells = section_cells(nb, SECTIONS[name])
        elif name not in WHOLE:
            nb.cells = checkpoint_cells(nb)
        nb.cells.insert(0, nbformat.v4.new_code_cell(WHERE_FROM))
        copies.append(folder / f"{name}.ipynb")
        nbformat.write(nb, copies[-1])
    return copies


def printed(cell) -> str:
    return "".join(o.get("text", "") if o.output_type == "stream" else o.get("data", {}).get("text/plain", "")
                   for o in cell.get("outputs", []))


@pytest.fixture(scope="module")
def executed(course_wheel, tmp_path_factory):
    """Each copy executed on its own, {name: (the executed notebook or None, nbconvert's stderr)}."""
    tmp = tmp_path_factory.mktemp("wheel_only")
    python, site = environment_without_the_repository(tmp / "env")
    # --target: into that folder alone, whatever this environment has installed (the editable dca_course)
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(site),
                    str(course_wheel)], check=True, capture_output=True, text=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DCA_", "PYTHON", "JUPYTER", "IPYTHON"))}
    env.update(kernel_spec(tmp / "jupyter", python), IPYTHONDIR=str(tmp / "ipython"))
    runs = {}
    for copy in notebook_copies(tmp / "course"):      # one at a time, so that one failure hides no other result
        run = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--output-dir",
                              str(tmp / "out"), "--ExecutePreprocessor.timeout=600", str(copy)],
                             capture_output=True, text=True, env=env, cwd=copy.parent)
        out = tmp / "out" / copy.name
        runs[copy.stem] = (nbformat.read(out, as_version=4) if run.returncode == 0 else None, run.stderr[-4000:])
    return runs


def executed_notebook(executed, name):
    nb, stderr = executed[name]
    assert nb is not None, f"{name} failed from the wheel:\n{stderr}"
    return nb


@pytest.mark.parametrize("name", [*WHOLE, "06_deep_communicating_agents", *SECTIONS])
def test_runs_from_the_wheel_with_nothing_missing(executed, name):
    cells = [c for c in executed_notebook(executed, name).cells if c.cell_type == "code"]
    assert printed(cells[0]).strip() == "the wheel's dca_course"
    assert all(c.execution_count for c in cells)
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]
    missing = [line for c in cells for line in printed(c).splitlines() if any(m in line for m in MISSING)]
    assert not missing, missing


@pytest.mark.parametrize("name, pattern", [("08_results", r"of \d+ claims$"),               # the scoreboard's count
                                           ("06_deep_communicating_agents", r"^trained by: ")])  # the checkpoint's
def test_the_wheel_reads_what_the_repository_stores(executed, name, pattern):
    """A line printed from the stored files comes out as in the notebook saved from the repository."""
    def line(nb):
        return next(line for c in nb.cells if c.cell_type == "code" for line in printed(c).splitlines()
                    if re.search(pattern, line))

    assert line(executed_notebook(executed, name)) == line(nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4))


@pytest.mark.parametrize("name, checkpoint", [("05_pointer_generator_coverage", "pg400-cnndm"),
                                              ("06_deep_communicating_agents", "dca3-cnndm")])
def test_the_own_article_cell_from_the_wheel_gives_the_shipped_models_stored_summary(executed, name, checkpoint):
    """05's "Your own article" and 06's section 8 from the wheel alone: the summary of the stored example article is
    the one the shipped real-news checkpoint stores (checkpoint.json), and the notebook saved from the repository
    prints the same."""
    stored = json.loads((ROOT / "data" / "checkpoints" / checkpoint / "checkpoint.json").read_text())

    def summary(nb):
        return next(line for c in nb.cells if c.cell_type == "code" for line in printed(c).splitlines()
                    if line.startswith("\u2248 summary ("))

    line = summary(executed_notebook(executed, name))
    print(f"{name} from the wheel: {line}")          # pytest -rP shows it
    assert line.endswith("): " + stored["example"]["summary"])
    assert line == summary(nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4))


def test_the_wheel_ships_what_the_notebooks_read_and_no_other_result(course_wheel):
    """Its copies are byte for byte the repository's: the results of SHIPPED_RESULTS and every checkpoint file."""
    packaged = f"dca_course/{PACKAGED}/"
    with zipfile.ZipFile(course_wheel) as wheel:
        copies = {name[len(packaged):]: wheel.read(name) for name in wheel.namelist() if name.startswith(packaged)}
    checkpoints = ROOT / "data" / "checkpoints"
    expected = {f"results/{name}": ROOT / "results" / name for name in SHIPPED_RESULTS}
    expected.update({f"checkpoints/{p.relative_to(checkpoints)}": p for p in checkpoints.rglob("*")
                     if p.is_file() and not p.name.startswith(".")})
    assert sorted(copies) == sorted(expected)
    assert all(copies[name] == path.read_bytes() for name, path in expected.items())
