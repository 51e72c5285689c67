"""The README's pictures, from the notebooks' own figures: ``python tools/readme_images.py``.

* ``docs/images/attention.png``: notebook 02's attention heatmaps (the figure of the code cell
  that calls ``attention_heatmap(``), as saved in the notebook;
* ``docs/images/dmn_explorer.png``: notebook 03's DMN explorer in JupyterLab, the screenshot
  ``make browser-test`` saved of it after moving its slider (``runs/browser/03_*_explorer1.png``;
  ``--browser`` runs the browser test on notebook 03 first).  Without a screenshot it falls
  back to the same picture as notebook 03 saved it (the cell that calls ``memory_gates_heatmap(``);
* ``docs/images/coverage.png``: notebook 05's coverage picture (the cell that calls
  ``attention_heatmap(``: attention without and with coverage, and the coverage left);
* ``docs/images/dca_agents.png``: notebook 06's trained DCA, the agent and word attention of one
  summary (the cell that calls ``agent_attention_heatmaps(ck_g``);
* ``docs/images/dca_diagram.png``: the DCA's diagram at the top of the README, drawn by the library
  (``viz.diagram("dca")``, the picture notebook 06 opens its model with).

A figure is found by the code that draws it, not by its cell number, so that editing a notebook
does not move it; each image is scaled down and reduced to a palette to stay under 150 KB.

``--diagrams DIR`` writes instead every model diagram as its notebook saved it, one PNG per notebook
(``DIR/01_gru.png``, ..., the cell that calls ``diagram("NAME")``), full size: the pictures a reviewer
looks at without opening the notebooks.  ``--one-article DIR`` writes the figures of notebook 06's
article (the first long test article with a key fact after word 400) as notebooks 05, 06 and 07
saved them: the 400-word pointer-generator's attention (``DIR/05_one_article.png``), the trained
DCA's agent and word attention (``06_one_article.png``) and the same after RL (``07_one_article.png``).
"""
from __future__ import annotations

import argparse
import base64
import io
import json
import re
import subprocess
import sys
from pathlib import Path

from PIL import Image, ImageChops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
MAX_BYTES = 150_000


def notebook(prefix: str) -> Path:
    found = sorted(NOTEBOOKS.glob(f"{prefix}_*.ipynb"))
    if not found:
        sys.exit(f"readme_images: no notebook {prefix}_*.ipynb in {NOTEBOOKS}")
    return found[0]


def stored_figure(path: Path, marker: str) -> Image.Image:
    """The first PNG saved in the outputs of the first code cell whose source contains ``marker``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or marker not in "".join(cell["source"]):
            continue
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                return Image.open(io.BytesIO(base64.b64decode("".join(png)))).convert("RGB")
    sys.exit(f"readme_images: {path.name} has no saved figure in a cell calling {marker!r}; "
             "execute and save the notebook first")


def library_diagram(name: str) -> Image.Image:
    """``dca_course.viz.diagram(name)`` as an image (the library draws it; no notebook needed)."""
    import matplotlib

    matplotlib.use("Agg")
    from dca_course import viz

    fig = viz.diagram(name)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, facecolor="white")
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def explorer_screenshot(run_browser: bool) -> Image.Image | None:
    stem = notebook("03").stem
    shots = ROOT / "runs" / "browser"
    if run_browser:
        rc = subprocess.run([sys.executable, str(ROOT / "tools" / "browser_test.py"), "03"]).returncode
        if rc != 0:
            sys.exit("readme_images: the browser test of notebook 03 failed (see above)")
    shot = shots / f"{stem}_explorer1.png"
    return Image.open(shot).convert("RGB") if shot.is_file() else None


def trim(image: Image.Image, margin: int = 8) -> Image.Image:
    """``image`` without the white space around its content (a screenshot is page-wide)."""
    box = ImageChops.difference(image, Image.new("RGB", image.size, "white")).getbbox()
    if not box:
        return image
    left, top, right, bottom = box
    return image.crop((max(left - margin, 0), max(top - margin, 0),
                       min(right + margin, image.width), min(bottom + margin, image.height)))


def save_small(image: Image.Image, path: Path, width: int) -> int:
    """``image`` scaled to at most ``width`` pixels wide, as a palette PNG under MAX_BYTES."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for w, colors in ((width, 128), (width, 64), (int(width * 0.8), 64), (int(width * 0.65), 48)):
        image = trim(image)
        scaled = image
        if image.width > w:
            scaled = image.resize((w, round(image.height * w / image.width)), Image.LANCZOS)
        buf = io.BytesIO()
        scaled.quantize(colors=colors, method=Image.Quantize.MEDIANCUT).save(buf, "PNG", optimize=True)
        if buf.tell() <= MAX_BYTES:
            path.write_bytes(buf.getvalue())
            return buf.tell()
    sys.exit(f"readme_images: could not bring {path.name} under {MAX_BYTES:,} bytes")


def saved_diagrams() -> dict[str, Image.Image]:
    """Every notebook's diagram as saved in it: ``{"01_gru": image, ...}`` (a notebook may open
    with a diagram another notebook draws too; each is taken from its own notebook)."""
    found = {}
    for path in sorted(NOTEBOOKS.glob("[0-9]*_*.ipynb")):
        text = path.read_text(encoding="utf-8")
        names = sorted(set(re.findall(r'diagram\(\\"([a-z0-9+-]+)\\"\)', text)))
        for name in names:
            found[f"{path.stem.split('_')[0]}_{name}"] = stored_figure(path, f'diagram("{name}")')
    return found


#: Notebook 06's article through the capstone: (notebook, the code that draws its figure of that article).
ONE_ARTICLE = (("05", "on notebook 06's article"), ("06", "agent_attention_heatmaps(ck_g"),
               ("07", "agent_attention_heatmaps(out.info"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--browser", action="store_true",
                        help="run the browser test on notebook 03 first, for a fresh explorer screenshot")
    parser.add_argument("--diagrams", type=Path, metavar="DIR",
                        help="write every notebook's saved model diagram to DIR (NN_NAME.png) instead")
    parser.add_argument("--one-article", type=Path, metavar="DIR",
                        help="write notebooks 05, 06 and 07's figures of notebook 06's article to DIR instead")
    args = parser.parse_args(argv)

    if args.one_article:
        args.one_article.mkdir(parents=True, exist_ok=True)
        for prefix, marker in ONE_ARTICLE:
            image = trim(stored_figure(notebook(prefix), marker))
            image.save(args.one_article / f"{prefix}_one_article.png", optimize=True)
            print(f"{args.one_article / prefix}_one_article.png: {image.width}x{image.height}")
        return 0
    if args.diagrams:
        args.diagrams.mkdir(parents=True, exist_ok=True)
        for stem, image in saved_diagrams().items():
            trim(image).save(args.diagrams / f"{stem}.png", optimize=True)
            print(f"{args.diagrams / stem}.png: {image.width}x{image.height}")
        return 0
    explorer = explorer_screenshot(args.browser)
    source = "the browser test's screenshot"
    if explorer is None:
        explorer, source = stored_figure(notebook("03"), "memory_gates_heatmap("), "notebook 03's saved figure"
    images = {
        "attention.png": (stored_figure(notebook("02"), "attention_heatmap("), 900, "notebook 02's saved figure"),
        "dmn_explorer.png": (explorer, 800, source),
        "coverage.png": (stored_figure(notebook("05"), "attention_heatmap("), 900, "notebook 05's saved figure"),
        "dca_agents.png": (stored_figure(notebook("06"), "agent_attention_heatmaps(ck_g"), 900,
                           "notebook 06's saved figure of its trained DCA"),
        "dca_diagram.png": (library_diagram("dca"), 1000, 'the library\'s viz.diagram("dca")'),
    }
    for name, (image, width, origin) in images.items():
        size = save_small(image, args.out / name, width)
        print(f"{args.out / name}: {size / 1000:.0f} KB, from {origin}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
