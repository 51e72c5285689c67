"""The models' diagrams (``viz.diagram(NAME)``): each draws boxes and arrows with its notebook's symbols,
no two labels overlap and none leaves the figure, every box label sits inside its box, and each role
has one colour in every diagram."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

from dca_course import diagrams, viz  # noqa: E402

# name -> (at least this many boxes, at least this many arrows, symbols that must be among the labels)
EXPECTED = {
    "gru": (8, 12, ["x_t", "h_{t-1}", "r_t", "z_t", "\\tilde h_t", "h_t", "reset gate", "update gate"]),
    "seq2seq": (11, 14, ["x_{1}", "x_{T_x}", "h_j", "h_{1}", "s_{i-1}", "s_i", "e_{ij}", "\\alpha_{ij}", "c_i", "y_i"]),
    "dmn": (8, 9, ["input module", "question module", "episodic memory", "answer module", "c_t", "q", "g^i_t",
                    "e^i", "m^i", "m^{i-1}", "m^{T_M}", "y_t"]),
    "copynet": (8, 10, ["generate mode", "copy mode", "one softmax", "selective read", "\\psi_g", "\\psi_c",
                        "\\zeta(y_{t-1})", "\\rho_{tj}", "s_t", "h_j", "Z"]),
    "pointer-generator": (8, 10, ["p_{gen}", "P_{vocab}", "a^t", "h^*_t", "c^t", "extended vocabulary", "coverage",
                                  "P(w)", "s_t", "h_i"]),
    "dca": (15, 20, ["paragraph", "word attention", "agent attention", "z^{(k)}", "l^t_a", "c^t_a", "g^t",
                     "c^*_t", "s_t", "pointer", "h^{(K)}", "p^a_t"]),
    "self-critical": (9, 10, ["\\tilde y", "\\hat y", "r(\\tilde y)", "r(\\hat y)", "ROUGE", "\\gamma",
                              "L_{RL}", "L_{MLE}", "L_{MIXED}", "\\log p", "\\nabla_\\theta"]),
    "lineage": (7, 0, ["2014", "2015", "2016", "2017", "2018", "Cho", "Bahdanau", "Kumar", "Xiong", "Gu", "See",
                       "Celikyilmaz", "Rennie", "Paulus"] + [f"notebook 0{i}" for i in range(1, 8)]),
}


def texts(fig):
    """Every non-empty label of the figure: the axes' texts, the legends' and the figure's own."""
    found = [t for ax in fig.axes for t in ax.texts]
    found += [t for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    found += list(fig.texts)
    return [t for t in found if t.get_visible() and t.get_text().strip()]


def boxes(fig):
    return [p for ax in fig.axes for p in ax.patches if isinstance(p, FancyBboxPatch)]


def arrows(fig):
    return [p for ax in fig.axes for p in ax.patches if isinstance(p, FancyArrowPatch)]


def layout_problems(fig) -> list[str]:
    """What makes the figure unreadable: labels that overlap each other, a label or box that leaves
    the figure, a box label that is not inside a box, an arrow's symbol or a note that covers a box,
    an arrow that points at no box."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    labels = [(t, t.get_window_extent(renderer)) for t in texts(fig)]
    shapes = [(p, p.get_window_extent(renderer)) for p in boxes(fig)]
    problems = []
    for i, (t, e) in enumerate(labels):
        if e.x0 < 1 or e.y0 < 1 or e.x1 > width - 1 or e.y1 > height - 1:
            problems.append(f"{t.get_text()!r} leaves the figure")
        problems += [f"{t.get_text()!r} overlaps {u.get_text()!r}" for u, f in labels[i + 1:] if e.overlaps(f)]
        if t.get_gid() == "box-label" and not any(_inside(e, s) for _, s in shapes):
            problems.append(f"{t.get_text()!r} is not inside its box")
        if t.get_gid() in ("arrow-label", "note"):
            problems += [f"{t.get_text()!r} covers a box" for p, s in shapes
                         if p.get_gid() != "group" and not p.get_gid().endswith(":container") and e.overlaps(s)]
    problems += [f"a box leaves the figure at {s}" for _, s in shapes
                 if s.x0 < 0 or s.y0 < 0 or s.x1 > width or s.y1 > height]
    for a in arrows(fig):
        for x, y in a.axes.transData.transform(a.heads):
            if not any(s.x0 - 2 <= x <= s.x1 + 2 and s.y0 - 2 <= y <= s.y1 + 2 for p, s in shapes
                       if p.get_gid() != "group"):
                problems.append(f"an arrow points at no box ({x:.0f}, {y:.0f})")
    return problems


def _inside(inner, outer) -> bool:
    return inner.x0 >= outer.x0 and inner.x1 <= outer.x1 and inner.y0 >= outer.y0 and inner.y1 <= outer.y1


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def drawn(request):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fig = viz.diagram(request.param)
    yield request.param, fig, out.getvalue()
    plt.close(fig)


def test_every_diagram_draws_its_boxes_arrows_and_symbols_and_prints_nothing(drawn):
    name, fig, printed = drawn
    assert isinstance(fig, Figure) and printed == ""
    n_boxes, n_arrows, symbols = EXPECTED[name]
    assert len(boxes(fig)) >= n_boxes and len(arrows(fig)) >= n_arrows, (len(boxes(fig)), len(arrows(fig)))
    words = "\n".join(t.get_text() for t in texts(fig))
    assert [s for s in symbols if s not in words] == []


def test_no_label_overlaps_or_leaves_the_figure(drawn):
    name, fig, _ = drawn
    assert layout_problems(fig) == []


def test_every_role_has_one_colour_in_every_diagram(drawn):
    name, fig, _ = drawn
    roles = set()
    for patch in boxes(fig):
        kind, _, role = patch.get_gid().partition(":")
        if kind == "group":
            continue
        role = role.removesuffix(":container")
        fill, edge = diagrams.OP if role == "op" else diagrams.PALETTE[role]
        assert patch.get_facecolor() == to_rgba(fill) and patch.get_edgecolor() == to_rgba(edge), (name, role)
        roles.add(role)
    legend = {t.get_text() for t in fig.axes[0].get_legend().get_texts()}
    assert legend == {diagrams.ROLE_NAMES[r] for r in roles - {"op"}}, name


def test_the_palette_gives_each_role_its_own_colour():
    fills = [fill for fill, _ in diagrams.PALETTE.values()]
    assert len(set(fills)) == len(fills) and set(diagrams.PALETTE) == set(diagrams.ROLE_NAMES)
    assert {"input", "state", "attention", "copy", "output", "loss"} <= set(diagrams.PALETTE)


def test_the_layout_check_finds_overlapping_and_escaping_labels():
    ax = diagrams.canvas(4.0, 2.0)
    diagrams.box(ax, 1.0, 1.0, "reset gate $r_t$", "state", w=1.6)
    diagrams.box(ax, 1.3, 1.05, "update gate $z_t$", "state", w=1.6)       # drawn over the first
    diagrams.arrow(ax, (2.5, 1.0), (3.5, 1.0), "$h_{t-1}$ runs off the edge", at=(3.9, 1.0))
    fig = ax.figure
    problems = layout_problems(fig)
    assert "'reset gate $r_t$' overlaps 'update gate $z_t$'" in problems
    assert "'$h_{t-1}$ runs off the edge' leaves the figure" in problems
    plt.close(fig)
    ax = diagrams.canvas(4.0, 2.0)
    diagrams.box(ax, 2.0, 1.0, "a label far wider than its box", "input", w=0.8)
    diagrams.arrow(ax, (0.2, 0.2), (0.8, 0.2))
    assert layout_problems(ax.figure) == ["'a label far wider than its box' is not inside its box",
                                          "an arrow points at no box (80, 65)"]
    plt.close(ax.figure)


def test_a_diagram_draws_into_given_axes():
    fig, ax = plt.subplots(figsize=(9, 5))
    assert viz.diagram("gru", ax=ax) is fig and len(ax.patches) >= 8
    plt.close(fig)


def test_an_unknown_name_raises_and_names_the_valid_ones():
    with pytest.raises(ValueError, match="gru, seq2seq, dmn, copynet, pointer-generator, dca, self-critical, lineage"):
        viz.diagram("transformer")


def test_the_readme_shows_the_dca_diagram_that_tools_readme_images_draws():
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    image = root / "docs" / "images" / "dca_diagram.png"
    assert image.is_file() and image.stat().st_size < 150_000
    assert "](docs/images/dca_diagram.png)" in readme.split("## ")[0]        # above the first section
    assert 'library_diagram("dca")' in (root / "tools" / "readme_images.py").read_text(encoding="utf-8")


def test_the_sizes_the_notebooks_stored_are_the_diagrams_sizes():
    """nbval compares a figure's text form, ``<Figure size WxH ...>``, so a diagram's size is part of every
    notebook that shows it: redrawing inside the same canvas is free, resizing means re-executing them."""
    import json
    import re

    root = Path(__file__).resolve().parents[1]
    seen = 0
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            called = re.search(r'viz\.diagram\("([\w-]+)"\)', "".join(cell["source"]))
            if cell["cell_type"] != "code" or not called:
                continue
            for out in cell.get("outputs", []):
                stored = re.search(r"<Figure size (\d+)x(\d+)", "".join(out.get("data", {}).get("text/plain", "")))
                if stored:
                    fig = viz.diagram(called.group(1))
                    w, h = fig.get_size_inches()
                    plt.close(fig)
                    assert (round(80 * w), round(80 * h)) == tuple(map(int, stored.groups())), (path.name, called[1])
                    seen += 1
    assert seen or not list((root / "notebooks").glob("*.ipynb"))
