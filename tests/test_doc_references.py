"""Every ``dca_course.…`` name that the prose names (results/*.md, README, CONTRIBUTING, docs/, the notebooks'
cells) exists: a module, or an attribute of one.  A module that moves leaves no reader pointed at nothing."""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"\bdca_course(?:\.[A-Za-z_][A-Za-z_0-9]*)+")


def prose() -> dict[str, str]:
    files = sorted(ROOT.glob("results/*.md")) + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"] \
        + sorted(ROOT.glob("docs/**/*.md"))
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files if p.is_file()}
    for p in sorted(ROOT.glob("notebooks/*.ipynb")):
        cells = json.loads(p.read_text(encoding="utf-8"))["cells"]
        texts[str(p.relative_to(ROOT))] = "\n".join("".join(c["source"]) for c in cells)
    return texts


def resolves(name: str) -> bool:
    """The longest importable prefix of ``name``, then its attributes one by one."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_the_resolver_refuses_a_name_that_is_gone():
    assert resolves("dca_course.models.extensions.word_match") and resolves("dca_course.metrics.attributed_fact_recall")
    assert not resolves("dca_course.models.dmn_match") and not resolves("dca_course.models.dmn.time_features")


def test_every_library_name_in_the_prose_exists():
    missing = sorted({(where, name) for where, text in prose().items() for name in set(NAME.findall(text))
                      if not resolves(name)})
    assert not missing, missing
