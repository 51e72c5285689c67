"""The library's shape: no module over 500 lines (the SynthNews template data aside), no import
cycles between modules, the layer rule (a module imports only from its own layer and the ones
below it, its two exceptions named), and no registry that a plugin import has to fill first."""
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
    return _imports(name, path, names, anywhere=False)


def all_imports(name: str, path: Path, names: dict) -> set[str]:
    """The package modules that ``name`` imports anywhere in its file (inside functions too)."""
    return _imports(name, path, names, anywhere=True)


def _imports(name: str, path: Path, names: dict, *, anywhere: bool) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in (ast.walk(tree) if anywhere else tree.body):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in names else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in names and m != name}


# The layers, lowest first: data -> nn -> models -> losses/train -> fast -> recipes -> CLI, on top of
# the basics every layer may use (fast: the models' faster forms, which the recipes turn on).  A module
# imports from its own layer and the ones below it only.
LAYERS = [
    ("basics", ("dca_course", "errors", "io", "outputs", "metrics", "shipped")),
    ("data", ("data",)),
    ("nn", ("nn",)),
    ("models", ("models",)),
    ("losses/train", ("losses", "decoding", "train")),
    ("fast", ("fast",)),
    ("recipes", ("recipes", "registry")),
    ("CLI", ("__main__",)),
]
# Beside the layers: the notebooks' helpers, which may import any layer and which no layer imports.
BESIDE = ("viz", "diagrams", "exercises", "gpu", "device_check", "scoreboard", "summarise")
# The exceptions, each with its reason: the package's own setup() and device() (at most two; the data's
# id map and teacher forcing live on their layers).  Remove an entry when the import goes (a test says so).
ALLOWED = {
    ("dca_course", "dca_course.device_check"): "setup() and device() turn the device check on",
    ("dca_course", "dca_course.viz"): "setup() sets the plot defaults",
}


def layer_of(module: str) -> int | None:
    """The layer's index, ``None`` for a module beside the layers; a module in none is an error."""
    top = module.split(".")[1] if "." in module else "dca_course"
    if top in BESIDE:
        return None
    for i, (_, tops) in enumerate(LAYERS):
        if top in tops:
            return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS (or BESIDE) in tests/test_layout.py")


def layer_violations(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) pairs that break the layer rule."""
    bad = set()
    for importer, imported in graph.items():
        mine = layer_of(importer)
        for target in imported:
            theirs = layer_of(target)
            if mine is None:                      # beside: anything
                continue
            if theirs is None or theirs > mine:   # a layer importing a helper, or a higher layer
                bad.add((importer, target))
    return bad


def import_graph() -> dict[str, set[str]]:
    names = module_names()
    return {n: all_imports(n, p, names) for n, p in names.items()}


def test_layer_rule():
    bad = layer_violations(import_graph()) - set(ALLOWED)
    assert not bad, "imports against the layer rule (data -> nn -> models -> losses/train -> fast -> recipes " \
        "-> CLI): " + \
        ", ".join(f"{a} imports {b}" for a, b in sorted(bad))


def test_at_most_two_exceptions_and_only_the_packages_own():
    assert len(ALLOWED) <= 2 and {importer for importer, _ in ALLOWED} == {"dca_course"}


def test_every_allowed_exception_is_still_needed():
    stale = set(ALLOWED) - layer_violations(import_graph())
    assert not stale, f"no longer imported (remove from ALLOWED): {sorted(stale)}"


def test_the_layer_rule_catches_an_upward_import():
    graph = {"dca_course.data.vocab": {"dca_course.models.dmn"}, "dca_course.models.dmn": {"dca_course.data.vocab"},
             "dca_course.viz": {"dca_course.recipes.base"}, "dca_course.losses": {"dca_course.viz"}}
    assert layer_violations(graph) == {("dca_course.data.vocab", "dca_course.models.dmn"),
                                       ("dca_course.losses", "dca_course.viz")}


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


# -- the scripts' folders (CONTRIBUTING.md, "Scripts") ---------------------------------------------
#: benchmarks/ holds the speed benchmarks and nothing else: a script that trains or scores models for
#: their quality is an experiment (experiments/), one that keeps the course in order is a tool (tools/).
SPEED_BENCHMARKS = {"beam_search", "lstm_limit", "opennmt_throughput", "step_profile", "train_throughput"}
SCRIPT_FOLDERS = ("experiments", "benchmarks", "tools")


def script_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def speed_benchmark_problems(folder: Path) -> list[str]:
    """Why ``folder`` is not a folder of speed benchmarks only: a script that is not one of
    SPEED_BENCHMARKS, one that does not time with ``benchmarks.timing``, or one whose docstring
    says nothing of time or speed."""
    problems = []
    for path in sorted(folder.glob("*.py")):
        if path.stem in ("__init__", "timing"):
            continue
        doc = (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").lower()
        if path.stem not in SPEED_BENCHMARKS:
            problems.append(f"{path.name}: not a speed benchmark (experiments/ or tools/?)")
        elif "benchmarks.timing" not in script_imports(path):
            problems.append(f"{path.name}: does not time with benchmarks.timing")
        elif not any(word in doc for word in ("time", "per second", "throughput", "speed")):
            problems.append(f"{path.name}: its docstring says nothing of time or speed")
    return problems


def test_benchmarks_holds_only_speed_benchmarks():
    assert speed_benchmark_problems(ROOT / "benchmarks") == []
    assert {p.stem for p in (ROOT / "benchmarks").glob("*.py")} == SPEED_BENCHMARKS | {"__init__", "timing"}


def test_the_speed_benchmark_check_finds_a_quality_experiment(tmp_path):
    (tmp_path / "babi_real.py").write_text('"""DMN accuracy on bAbI."""\nfrom tools.provenance import ROOT\n')
    (tmp_path / "lstm_limit.py").write_text('"""Accuracy only."""\nfrom benchmarks.timing import sync\n')
    assert speed_benchmark_problems(tmp_path) == ["babi_real.py: not a speed benchmark (experiments/ or tools/?)",
                                                  "lstm_limit.py: its docstring says nothing of time or speed"]


def test_scripts_live_in_experiments_benchmarks_and_tools_and_results_in_results():
    """Three script folders, each a package (``python -m FOLDER.NAME`` works too), no ``scripts/``, and
    the stored results in the top-level ``results/``, which holds no script."""
    for folder in SCRIPT_FOLDERS:
        assert (ROOT / folder / "__init__.py").is_file(), folder
        assert not (ROOT / folder / "results").exists(), f"{folder}/results: results live in results/"
    assert not (ROOT / "scripts").exists()
    assert (ROOT / "results" / "README.md").is_file() and not list((ROOT / "results").glob("*.py"))
    # the quality experiments write with tools.provenance, and none of them times with benchmarks.timing
    for path in (ROOT / "experiments").glob("*.py"):
        if path.stem != "__init__":
            assert "benchmarks.timing" not in script_imports(path), path.name
