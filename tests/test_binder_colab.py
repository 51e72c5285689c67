"""Binder and Colab: environment.yml and pyproject.toml agree; the Colab set-up cell does its job."""
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONDA_TO_PIP = {"pytorch-cpu": "torch", "pytorch": "torch"}
NOT_PACKAGES = {"python", "pip"}


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def pyproject_dependencies() -> set:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + project["optional-dependencies"]["dev"]
    return {_name(r) for r in reqs}


def environment_dependencies() -> set:
    names, section = set(), None
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if re.match(r"^\w", line):
            section = line.split(":")[0]
        m = re.match(r"^\s+- ([A-Za-z0-9_.\-]+)", line)
        if section == "dependencies" and m and not line.strip().endswith(":"):
            name = _name(m.group(1))
            names.add(CONDA_TO_PIP.get(name, name))
    return names - NOT_PACKAGES


def test_environment_yml_and_pyproject_name_the_same_dependencies():
    assert environment_dependencies() == pyproject_dependencies()


def _setup_cell(path: Path) -> str:
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return "".join(code[0]["source"])


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
@pytest.mark.parametrize("on_colab", [True, False])
def test_colab_setup_cell_installs_only_on_colab(path, on_colab, monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    if on_colab:  # a stand-in for the module that only Colab has
        google = types.ModuleType("google")
        google.colab = types.ModuleType("google.colab")
        google.__path__ = []
        monkeypatch.setitem(sys.modules, "google", google)
        monkeypatch.setitem(sys.modules, "google.colab", google.colab)
    else:
        monkeypatch.setitem(sys.modules, "google.colab", None)  # import fails, as off Colab
    exec(compile(_setup_cell(path), f"{path.name}:setup", "exec"), {})
    if on_colab:
        assert len(calls) == 1
        cmd = calls[0]
        assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
        assert any("git+https://github.com/dca-course/dca-course" in part for part in cmd)
    else:
        assert calls == []
