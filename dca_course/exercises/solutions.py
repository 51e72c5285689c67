"""Find and print the exercises' solutions (``dca_course/exercises/answers/NN_*.py``, shipped with the
package as data, so that ``solution()`` works in any install, Colab's included) and the library's source."""
from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from pathlib import Path
from types import ModuleType

SOLUTIONS_DIR = Path(__file__).resolve().parent / "answers"
_KEY = re.compile(r"^(\d\d)\.(\d+)$")


def _module(notebook: str) -> ModuleType:
    files = sorted(SOLUTIONS_DIR.glob(f"{notebook}_*.py"))
    if not files:
        raise KeyError(f"no solutions for notebook {notebook} in {SOLUTIONS_DIR}")
    name = f"dca_course_solutions_{notebook}"
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(files[0]):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, files[0])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # inspect.getsource(a class) looks its module up here
    spec.loader.exec_module(module)
    return module


def solution_keys() -> list[str]:
    """Every exercise key with a solution, e.g. ``["01.1", "01.2", ...]``."""
    keys = []
    for path in sorted(SOLUTIONS_DIR.glob("[0-9][0-9]_*.py")):
        keys += sorted(_module(path.name[:2]).SOLUTIONS, key=lambda k: int(k.split(".")[1]))
    return keys


def load_solution(key: str):
    """``(solution, check)`` for exercise ``key`` ("NN.K"): the check called on the solution passes."""
    match = _KEY.match(key)
    if not match:
        raise KeyError(f"an exercise key looks like '05.1' (notebook 05, exercise 1), not {key!r}")
    solutions = _module(match.group(1)).SOLUTIONS
    if key not in solutions:
        raise KeyError(f"notebook {match.group(1)} has solutions for {', '.join(solutions)}, not {key}")
    return solutions[key]


def solution(key: str) -> None:
    """Print the solution to exercise ``key``, e.g. ``solution("05.1")``: try the exercise first."""
    answer, check = load_solution(key)
    print(f"# Solution to exercise {key}; check it with {check.__name__}(...)\n")
    print(inspect.getsource(answer))


def show_source(obj) -> None:
    """Print the source of a library function, class or method, with the file it lives in."""
    target = inspect.unwrap(obj)
    path = Path(inspect.getsourcefile(target)).resolve()
    root = Path(__file__).resolve().parents[2]
    where = path.relative_to(root) if path.is_relative_to(root) else path
    lines, start = inspect.getsourcelines(target)
    print(f"# {where}, line {start}")
    print("".join(lines), end="")
