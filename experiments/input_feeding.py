"""Input feeding on SynthNews: the pointer-generator + coverage with and without it, over seeds.

    python experiments/input_feeding.py --jobs 2    # trains what is missing under runs/input_feeding/

See et al.'s code feeds the previous context vector back into the decoder's input; their paper's
equations (1)-(4) do not.  Each seed trains both variants of ``python -m dca_course train
pointer-generator --coverage --data synthnews --profile fast`` (3 epochs + 1 with coverage, beam
search on the 300 test articles), and the table pairs them seed by seed: ROUGE, repeated trigrams and
the attributed fact recall (a fact counts only where it is stated with what it is about).  A run
folder that holds ``metrics.json`` is read, not trained again.  Writes ``results/input_feeding.*``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import RESULTS, ROOT, command_line, write_report  # noqa: E402

VARIANTS = {"with": "--input-feeding", "without": "--no-input-feeding"}
METRICS = {"rouge2": ("R-2", 2), "rougeL": ("R-L", 2), "attributed_fact_recall": ("facts (attributed)", 3),
           "repeated_trigrams": ("rep. 3-grams", 3)}


def command(variant: str, seed: int, out: str) -> list[str]:
    return ["python", "-m", "dca_course", "train", "pointer-generator", "--coverage", VARIANTS[variant],
            "--data", "synthnews", "--profile", "fast", "--device", "cpu", "--seed", str(seed), "--out", out]


def run(variant: str, seed: int, runs: Path) -> dict:
    """The run's test metrics, trained first when its folder holds none."""
    folder = runs / f"{variant}-s{seed}"
    if not (folder / "metrics.json").is_file():
        args = command(variant, seed, str(folder))
        subprocess.run([sys.executable, *args[1:]], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))


def main(argv=None) -> None:
    from dca_course import configure_process

    configure_process()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=1, help="trainings at once, one thread each")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "input_feeding")
    args = parser.parse_args(argv)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {(v, s): pool.submit(run, v, s, args.runs) for s in args.seeds for v in VARIANTS}
        metrics = {f"{v}-s{s}": f.result() for (v, s), f in futures.items()}
    table = {v: {m: [round(metrics[f"{v}-s{s}"][m], 4) for s in args.seeds] for m in METRICS} for v in VARIANTS}
    paired = {}
    for m in METRICS:
        diffs = [a - b for a, b in zip(table["with"][m], table["without"][m])]
        paired[m] = {"diffs": [round(d, 4) for d in diffs], "mean": round(statistics.mean(diffs), 4),
                     "se": round(statistics.stdev(diffs) / len(diffs) ** 0.5, 4)}
    md = ["# Input feeding on SynthNews: the pointer-generator + coverage with and without it", "",
          "The `fast` profile, 3 epochs + 1 with coverage, beam search on the 300 test articles; each seed draws its "
          "own corpus and weights.", "",
          "| seed | " + " | ".join(f"with: {label}" for label, _ in METRICS.values()) + " | "
          + " | ".join(f"without: {label}" for label, _ in METRICS.values()) + " |",
          "|---" * (2 * len(METRICS) + 1) + "|"]
    for k, s in enumerate(args.seeds):
        md.append(f"| {s} | " + " | ".join(f"{table[v][m][k]:.{d}f}" for v in VARIANTS for m, (_, d) in METRICS.items())
                  + " |")
    md += ["", "With minus without, paired by seed (mean ± standard error): "
           + "; ".join(f"{METRICS[m][0]} {p['mean']:+.{METRICS[m][1]}f} ± {p['se']:.{METRICS[m][1]}f}"
                       for m, p in paired.items()) + "."]
    write_report(RESULTS, "input_feeding", {"seeds": args.seeds, "table": table, "paired": paired,
                                            "train_seconds": {k: r.get("train_seconds") for k, r in metrics.items()},
                                            "commands": {f"{v}-s{s}": " ".join(command(v, s, f"runs/input_feeding/{v}-s{s}"))
                                                         for s in args.seeds for v in VARIANTS}},
                 "\n".join(md) + "\n", command=command_line(__file__, argv),
                 config={"seeds": args.seeds, "variants": VARIANTS, "runs": "runs/input_feeding"},
                 measures=["dca_course/models/pointer_generator.py", "dca_course/fast", "dca_course/recipes/copying.py",
                           "dca_course/recipes/base.py", "dca_course/train.py", "dca_course/decoding.py",
                           "dca_course/metrics.py", "dca_course/data/synthnews", "experiments/input_feeding.py"])
    print("\n".join(md))


if __name__ == "__main__":
    main()
