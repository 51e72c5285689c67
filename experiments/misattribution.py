"""Misattributed facts beside fact recall, for every model that notebook 05 reports.

    python experiments/misattribution.py                        # both parts; writes results/misattribution.*
    python experiments/misattribution.py --no-notebook          # the command-line runs only

``dca_course.metrics.misattributed_facts`` counts the facts a summary states in the place of another
(a number, a name or a team under the wrong person or relation: "hit 90 goals" where 90 are caps).
Notebook 05 reports two sets of models, and this script scores both on their test articles:

1. the five it trains live (seed 0): the notebook runs in a scratch copy with one more cell, which
   scores its ``decodes`` (greedy summaries) on its ``test`` articles;
2. the five command-line runs of its stored table (``results/copying.json``), trained
   with those commands into ``--runs-dir/NAME`` where no ``last.pt`` is there yet, each scored on
   the test split with the summaries its recipe evaluates (beam search).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import RESULTS, ROOT, write_report  # noqa: E402

from dca_course.data.synthnews import slot_contexts  # noqa: E402  (after the path line above)
from dca_course.metrics import fact_metrics, misattribution, summary_metrics  # noqa: E402

NOTEBOOK = ROOT / "notebooks" / "05_pointer_generator_coverage.ipynb"
# notebook 05's stored table: label, run name, command-line arguments (results/copying.json)
RUNS = [
    ("attention seq2seq (baseline)", "baseline", "pointer-generator --no-pointer"),
    ("CopyNet", "copynet", "copynet"),
    ("pointer-generator, 3 epochs", "pg3", "pointer-generator"),
    ("pointer-generator, 4 epochs", "pg4", "pointer-generator --epochs 4"),
    ("pointer-generator + coverage (3 + 1 epochs)", "pgcov", "pointer-generator --coverage"),
]
SCORE_CELL = """
import json as _json
from dca_course.data.synthnews import slot_contexts as _contexts
_rows = {}
for _name, (_preds, _) in decodes.items():
    _rows[_name] = {**metrics.fact_metrics(_preds, test), **metrics.misattribution(_preds, test, _contexts),
                    "rouge2": metrics.summary_metrics(_preds, [e.summary_text() for e in test],
                                                      [e.source for e in test])["rouge2"]}
print("MISATTRIBUTION " + _json.dumps(_rows))
"""
COLUMNS = [("rouge2", "R-2", ".2f"), ("fact_recall", "fact recall", ".3f"),
           ("hallucinated_entities", "halluc. names", ".3f"),
           ("misattributed_facts", "misattributed facts per summary", ".3f"),
           ("misattributing_summaries", "summaries with one or more", ".3f")]


def notebook_rows() -> dict:
    """Run notebook 05 in a scratch copy with SCORE_CELL at its end; its models' scores."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(SCORE_CELL))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)
    NotebookClient(nb, timeout=1800, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    for out in nb.cells[-1].outputs:
        for line in out.get("text", "").splitlines():
            if line.startswith("MISATTRIBUTION "):
                return json.loads(line[len("MISATTRIBUTION "):])
    raise SystemExit("notebook 05 printed no scores")


def command_line_rows(runs_dir: Path) -> dict:
    """Train what is missing of RUNS, then score each run's test summaries."""
    from dca_course.recipes import load_run
    from dca_course.registry import load_data

    rows = {}
    for label, name, args in RUNS:
        out = runs_dir / name
        if not (out / "last.pt").is_file():
            cmd = [sys.executable, "-m", "dca_course", "train", *args.split(), "--data", "synthnews", "--profile",
                   "fast", "--device", "cpu", "--seed", "0", "--quiet", "--out", str(out)]
            subprocess.run(cmd, check=True, cwd=ROOT)
        recipe, model, vocab, state = load_run(out, "cpu")
        data = load_data(state["data"], recipe.config.profile, int(state.get("seed", 0)))
        recipe.config = recipe.config.for_data(data)
        test = data.split("test")
        preds = recipe.predict(model.eval(), test, vocab, "cpu")
        rows[label] = {**fact_metrics(preds, test), **misattribution(preds, test, slot_contexts),
                       "rouge2": summary_metrics(preds, [e.summary_text() for e in test],
                                                 [e.source for e in test])["rouge2"]}
        print(label, json.dumps(rows[label]), flush=True)
    return rows


def table(rows: dict) -> str:
    lines = ["| model | " + " | ".join(label for _, label, _ in COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    for name, row in rows.items():
        lines.append(f"| {name} | " + " | ".join(format(row[k], fmt) for k, _, fmt in COLUMNS) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    from dca_course import configure_process

    configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs-dir", type=Path, default=ROOT / "runs" / "copying")
    parser.add_argument("--no-notebook", action="store_true", help="skip the notebook's live models")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    parts = {}
    if not args.no_notebook:
        parts["notebook 05, trained live (seed 0, greedy)"] = notebook_rows()
    parts["the command line, fast profile (seed 0, beam search): notebook 05's stored table"] = \
        command_line_rows(args.runs_dir)
    command = "python experiments/misattribution.py" + (" --no-notebook" if args.no_notebook else "")
    text = ("# Misattributed facts beside fact recall (notebook 05's models)\n\nSynthNews test articles. A misattributed fact is one a summary states in "
            "the place of another (`dca_course.metrics.misattributed_facts`).\n")
    for title, rows in parts.items():
        text += f"\n## {title}\n\n" + table(rows) + "\n"
    text += ("\nCommand-line runs (S = 0):\n\n```\n" + "\n".join(
        f"python -m dca_course train {a} --data synthnews --profile fast --device cpu --seed S" for _, _, a in RUNS)
        + "\n```\n")
    print(text)
    measures = ["experiments/misattribution.py", "dca_course/metrics.py", "dca_course/data/synthnews",
                "dca_course/models/pointer_generator.py", "dca_course/models/copynet.py", "dca_course/decoding.py",
                "notebooks/05_pointer_generator_coverage.ipynb"]
    write_report(args.out, "misattribution", {"commands": [a for _, _, a in RUNS], "parts": parts}, text,
                 command=command, config={"runs_dir": str(args.runs_dir), "no_notebook": args.no_notebook},
                 measures=measures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
