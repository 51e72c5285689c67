"""The wheel's one addition to pyproject.toml: copies of the files the notebooks read beside the library.

The stored results named in ``dca_course/shipped.py`` and every folder of ``data/checkpoints/`` are copied into the
built package (``dca_course/shipped_files/``), so that a pip install with no repository (Colab) has them. The
repository's ``results/`` and ``data/checkpoints/`` stay the only copies in git. An editable install copies
nothing: the package reads the repository's folders there.
"""
from __future__ import annotations

import ast
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def shipped_constant(name: str):
    """A constant of dca_course/shipped.py, read as text: importing the package would need its dependencies."""
    tree = ast.parse((ROOT / "dca_course" / "shipped.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise LookupError(f"dca_course/shipped.py defines no {name}")


def shipped_files() -> list[tuple[Path, str]]:
    """(file in the repository, its path inside the package) for every file the wheel ships beside the code."""
    packaged = Path("dca_course") / shipped_constant("PACKAGED")
    results = [(ROOT / "results" / name, packaged / "results" / name) for name in shipped_constant("SHIPPED_RESULTS")]
    folder = ROOT / "data" / "checkpoints"
    checkpoints = [(path, packaged / "checkpoints" / path.relative_to(folder))
                   for path in sorted(folder.rglob("*")) if path.is_file() and not path.name.startswith(".")]
    missing = [str(src.relative_to(ROOT)) for src, _ in results if not src.is_file()] + \
        ([] if checkpoints else ["data/checkpoints/*"])
    if missing:     # such a wheel would install, then fail in the notebooks: build it from a whole clone
        raise FileNotFoundError(f"the wheel ships files this tree lacks: {', '.join(missing)}")
    return [(src, str(dest)) for src, dest in results + checkpoints]


class BuildWithShippedFiles(build_py):
    """setuptools' build_py, then the shipped files copied into the build folder that the wheel is made of."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):     # the package reads the repository's own folders
            return
        for src, dest in shipped_files():
            target = Path(self.build_lib) / dest
            self.mkpath(str(target.parent))
            self.copy_file(str(src), str(target))

    def get_outputs(self, include_bytecode=True):
        extra = [] if getattr(self, "editable_mode", False) else \
            [str(Path(self.build_lib) / dest) for _, dest in shipped_files()]
        return super().get_outputs(include_bytecode) + extra


setup(cmdclass={"build_py": BuildWithShippedFiles})
