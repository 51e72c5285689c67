"""The browser test's checks and the README's pictures (neither needs a browser to test)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"script_{name}", ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cell(index, source="x = 1", tags=(), count=1, outputs=()):
    return {"index": index, "source": source, "tags": list(tags), "execution_count": count, "outputs": list(outputs)}


def test_browser_checks_allow_only_the_deliberate_exception():
    bt = _script("browser_test")
    error = {"type": "error", "ename": "RuntimeError", "evalue": "shapes", "mimes": []}
    state = {"cells": [_cell(1), _cell(2, "# NBVAL_RAISES_EXCEPTION\n1/0", ["raises-exception"], 2, [error]),
                       _cell(3, count=3)], "text": "all fine", "done": {"ok": False}}
    assert bt.check_cells(state) == ([], [2])
    state["cells"].append(_cell(4, count=None))
    state["cells"].append(_cell(5, count=5, outputs=[error]))
    state["cells"].append(_cell(6, "   ", count=None))                  # an empty cell need not run
    state["text"] += " Error displaying widget: model not found"
    problems, _ = bt.check_cells(state)
    assert problems == ["cell 5: RuntimeError: shapes", "1 code cell(s) did not run: 4",
                        "'Error displaying widget' in the page"]
    state["cells"][1]["outputs"] = []
    assert "cell 2 is marked to raise an exception but did not" in bt.check_cells(state)[0]


def test_browser_test_is_not_part_of_make_test():
    makefile = (ROOT / "Makefile").read_text()
    test_rule = re.search(r"^test:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "browser" not in test_rule and "browser-test:" in makefile
    assert "runs/" in (ROOT / ".gitignore").read_text().split()


def test_readme_images_exist_are_small_and_shown():
    readme = (ROOT / "README.md").read_text()
    assert "python tools/readme_images.py" in readme
    for name in ("attention.png", "dmn_explorer.png", "coverage.png", "dca_agents.png"):
        path = ROOT / "docs" / "images" / name
        assert path.is_file() and path.stat().st_size < 150_000, name
        assert f"docs/images/{name}" in readme


def test_readme_figures_are_found_in_the_notebooks():
    ri = _script("readme_images")
    for prefix, marker in (("02", "attention_heatmap("), ("03", "memory_gates_heatmap("), ("05", "attention_heatmap("),
                           ("06", "agent_attention_heatmaps(ck_g")):
        image = ri.stored_figure(ri.notebook(prefix), marker)
        assert image.width > 200 and image.height > 100


def test_every_model_notebook_saves_its_diagram(tmp_path):
    """``--diagrams`` finds the saved picture each notebook opens its model with (00's lineage too)."""
    ri = _script("readme_images")
    assert ri.main(["--diagrams", str(tmp_path)]) == 0
    written = sorted(p.stem for p in tmp_path.glob("*.png"))
    for stem in ("00_lineage", "01_gru", "02_seq2seq", "03_dmn", "04_copynet", "05_pointer-generator", "06_dca",
                 "07_self-critical"):
        assert stem in written, (stem, written)


def test_notebook_06s_article_is_pictured_in_05_06_and_07(tmp_path):
    """``--one-article`` finds each notebook's figure of notebook 06's article, and the three cells pick the same
    article: the first long test article with a key fact after word 400."""
    ri = _script("readme_images")
    assert ri.main(["--one-article", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.glob("*.png")) == [f"{n}_one_article.png" for n in ("05", "06", "07")]
    rule = "if any(not {}contains(e.source[:{}], f) for f in e.facts"
    sources = {n: ri.notebook(n).read_text(encoding="utf-8") for n in ("05", "06", "07")}
    assert "late_facts(e.source, e.facts)" in sources["05"]            # 05: the first with a late fact
    assert rule.format("", "PG_SRC") in sources["06"] and "MAX_SRC, PG_SRC, MAX_TGT, AGENTS = 800, 400" in sources["06"]
    assert rule.format("metrics.", "400") in sources["07"]
