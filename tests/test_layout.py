"""The library's shape: no module over 500 lines (the SynthNews template data aside), no import
cycles between modules, and no registry that a plugin import has to fill first."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dca_course"
DATA_ONLY = {"data/synthnews/templates.py"}      # word lists and sentence templates, no code


def module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def module_level_imports(name: str, path: Path, names: dict) -> set[str]:
    """The package modules that ``name`` imports when it is imported (not inside functions)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in names else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in names and m != name}


def test_no_module_over_500_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert set(long) <= DATA_ONLY, long


def test_no_import_cycles():
    names = module_names()
    graph = {n: module_level_imports(n, p, names) for n, p in names.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(node, trail):
        state[node] = 1
        for nxt in graph[node]:
            if nxt.startswith(node + "."):       # a package importing its own parts is not a cycle
                continue
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for n in graph:
        if n not in state:
            visit(n, [n])
    assert not cycles, cycles


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    pkg = tmp_path / "dca_course"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import x\n")
    (pkg / "b.py").write_text("from .a import y\n")
    names = {"dca_course": pkg / "__init__.py", "dca_course.a": pkg / "a.py", "dca_course.b": pkg / "b.py"}
    assert module_level_imports("dca_course.a", pkg / "a.py", names) == {"dca_course.b"}
    assert module_level_imports("dca_course.b", pkg / "b.py", names) == {"dca_course.a"}


def test_models_and_data_specs_known_on_a_bare_import():
    code = ("from dca_course.registry import MODELS, DATA_SPECS, get_model; "
            "print(sorted(MODELS)); print(sorted(DATA_SPECS)); get_model('dca')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "'pointer-generator'" in out and "'babi'" in out and "'synthnews-long'" in out
