"""Mixed RL on the trained DCA, against a control trained as long (issue 45, part 4).

    python experiments/rl_dca.py run       # train what is missing under runs/rl_dca/
    python experiments/rl_dca.py report    # score every run; writes results/rl_dca.json and .md

Every run starts from a trained 3-agent DCA reading 800 words (the recipe's fast profile on
SynthNews-long, one contextual layer): for seed 0 the shipped checkpoint
(data/checkpoints/dca3-synthnews-long), for seeds 1 and 2 the runs of the same command that
experiments/communication.py trains (runs/communication/k1-s1, k1-s2).  From that start, at the
recipe's RL defaults (one epoch over the first 400 training articles, batches of 8, 4 samples an
article against their leave-one-out mean, Adam at 1e-4, gamma 0.9984), four variants differ only
in their loss:

* control: ``--gamma 0``, the same steps with L_MLE alone (nothing sampled);
* mixed RL: eq. (16), the ROUGE-L reward of the whole summary;
* + intermediate rewards: each sentence rewarded for the ROUGE-L it adds (the DCA paper, eq. 16);
* + semantic cohesion: lambda = 0.1 times L_SEM added to the MLE term (the DCA paper, section 3).

``report`` scores the start and each variant on the seed's 300 test articles with the recipe's own
evaluation (beam search), with the attributed fact measure, and keeps per-article ROUGE-L and
attributed facts so that every difference is paired twice: by seed (3 values) and by article
(900 values).  A claim "A beats B" needs the paired mean beyond two standard errors; otherwise
the table says "not distinguishable at this size".
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import RESULTS, ROOT, command_line, write_report  # noqa: E402

from dca_course import configure_process  # noqa: E402
from dca_course.data.specs import load_data  # noqa: E402
from dca_course.data.synthnews import VERBS, slot_contexts  # noqa: E402
from dca_course.io import write_json  # noqa: E402
from dca_course.losses import rouge_reward  # noqa: E402
from dca_course.metrics import attributed_fact_recall, misattribution, ungrammatical_rates  # noqa: E402
from dca_course.recipes import load_run  # noqa: E402

RUNS_DIR = ROOT / "runs" / "rl_dca"
STARTS = {0: "data/checkpoints/dca3-synthnews-long", 1: "runs/communication/k1-s1", 2: "runs/communication/k1-s2"}
SEEDS = (0, 1, 2)
VARIANTS = {"control": "--rl --gamma 0", "rl": "--rl", "rl-ir": "--rl --intermediate-rewards",
            "rl-coh": "--rl --cohesion 0.1"}
LABELS = {"start": "the trained DCA (MLE, the start)", "control": "+ as many MLE steps (control)",
          "rl": "+ mixed RL", "rl-ir": "+ mixed RL, intermediate rewards", "rl-coh": "+ mixed RL, semantic cohesion"}
METRICS = ("rouge1", "rouge2", "rougeL", "rougeLsum", "attributed_fact_recall", "attributed_late_fact_recall",
           "misattributed_facts", "repeated_trigrams", "stutter", "no_verb", "length")
NAMES = {"rouge1": "R-1", "rouge2": "R-2", "rougeL": "R-L", "rougeLsum": "R-Lsum",
         "attributed_fact_recall": "facts (attributed)", "attributed_late_fact_recall": "late facts (attributed)",
         "misattributed_facts": "misattributed per summary", "repeated_trigrams": "repeated trigrams",
         "stutter": "word twice in a row", "no_verb": "sentence with no verb", "length": "length (words)"}
#: the differences reported, each paired by seed and by article
PAIRS = (("rl", "control"), ("rl-ir", "control"), ("rl-coh", "control"), ("rl-ir", "rl"), ("control", "start"),
         ("rl", "start"))


def command(variant: str, seed: int) -> str:
    return (f"python -m dca_course train dca --agents 3 {VARIANTS[variant]} --init {STARTS[seed]} "
            f"--data synthnews-long --profile fast --device cpu --seed {seed} --out runs/rl_dca/{variant}-s{seed}")


def run_all(runs_dir: Path) -> None:
    """Train every (variant, seed) whose folder has no metrics.json yet, control and RL first."""
    for variant in VARIANTS:
        for seed in SEEDS:
            if (runs_dir / f"{variant}-s{seed}" / "metrics.json").is_file():
                continue
            if not (ROOT / STARTS[seed] / "last.pt").is_file():
                print(f"skipped {variant}-s{seed}: {STARTS[seed]} is not trained (python experiments/communication.py run)")
                continue
            print(f"training {variant} seed={seed}", flush=True)
            args = command(variant, seed).split()[1:]
            args[args.index("--out") + 1] = str(runs_dir / f"{variant}-s{seed}")
            subprocess.run([sys.executable, *args], check=True, cwd=ROOT)


def score_folder(folder: Path, cached: Path) -> dict:
    """The recipe's evaluation of one model on its seed's test split, with per-article values."""
    if cached.is_file():
        return json.loads(cached.read_text())
    recipe, model, vocab, state = load_run(folder, "cpu")
    model.eval()
    data = load_data(state["data"], recipe.config.data_profile, int(state.get("seed", 0)))
    recipe.config = recipe.config.for_data(data)
    test = data.split("test")
    preds = recipe.predict(model, test, vocab, "cpu")
    row = recipe.score_predictions(preds, test, vocab, data.kind)
    row.update(misattribution(preds, test, slot_contexts))
    row.update(ungrammatical_rates(preds, VERBS))
    row["length"] = statistics.mean(len(p) for p in preds)
    row["per_article"] = {
        "rougeL": [rouge_reward(p, e.summary_text()) for p, e in zip(preds, test)],
        "attributed_fact_recall": [attributed_fact_recall(p, e.facts, slot_contexts(e.facts["event"]))
                                   for p, e in zip(preds, test)]}
    row.update(seed=int(state.get("seed", 0)), test_articles=len(test), example_summary=" ".join(preds[0]))
    write_json(cached, row)
    return row


def verdict(mean: float, se: float) -> str:
    return "higher" if mean - 2 * se > 0 else "lower" if mean + 2 * se < 0 else "not distinguishable at this size"


def paired(rows: dict, a: str, b: str) -> dict:
    """a minus b: by seed (every metric) and by article (ROUGE-L, attributed facts)."""
    out = {}
    for m in METRICS:
        diffs = [rows[(a, s)][m] - rows[(b, s)][m] for s in SEEDS]
        mean, se = statistics.mean(diffs), statistics.stdev(diffs) / len(diffs) ** 0.5
        out[m] = {"diffs": [round(d, 4) for d in diffs], "mean": round(mean, 4), "se": round(se, 4),
                  "verdict": verdict(mean, se)}
    for m in ("rougeL", "attributed_fact_recall"):
        diffs = [x - y for s in SEEDS for x, y in zip(rows[(a, s)]["per_article"][m], rows[(b, s)]["per_article"][m])]
        mean, se = statistics.mean(diffs), statistics.stdev(diffs) / len(diffs) ** 0.5
        out[f"{m}_by_article"] = {"n": len(diffs), "mean": round(mean, 4), "se": round(se, 4),
                                  "verdict": verdict(mean, se)}
    return out


def report(runs_dir: Path) -> None:
    names = ["start"] + [v for v in VARIANTS if all((runs_dir / f"{v}-s{s}" / "metrics.json").is_file() for s in SEEDS)]
    missing = [f"{v}-s{s}" for v in VARIANTS for s in SEEDS if not (runs_dir / f"{v}-s{s}" / "metrics.json").is_file()]
    if "control" not in names or "rl" not in names:
        raise SystemExit(f"dca-course: error: {runs_dir}: unfinished runs {', '.join(missing)} "
                         "(python experiments/rl_dca.py run)")
    rows = {}
    for name in names:
        for s in SEEDS:
            print(f"scoring {name}-s{s}", flush=True)
            folder = ROOT / STARTS[s] if name == "start" else runs_dir / f"{name}-s{s}"
            rows[(name, s)] = score_folder(folder, runs_dir / f"report-{name}-s{s}.json")
    table = {name: {m: {"values": [round(rows[(name, s)][m], 4) for s in SEEDS],
                        "mean": round(statistics.mean(rows[(name, s)][m] for s in SEEDS), 4),
                        "sd": round(statistics.stdev(rows[(name, s)][m] for s in SEEDS), 4)} for m in METRICS}
             for name in names}
    diffs = {f"{a} minus {b}": paired(rows, a, b) for a, b in PAIRS if a in names and b in names}
    train_s = {f"{v}-s{s}": json.loads((runs_dir / f"{v}-s{s}" / "metrics.json").read_text()).get("train_seconds")
               for v in names[1:] for s in SEEDS}
    data = {"table": table, "paired": diffs, "labels": LABELS, "seeds": list(SEEDS), "missing_runs": missing,
            "commands": {f"{v}-s{s}": command(v, s) for v in names[1:] for s in SEEDS},
            "starts": {str(s): STARTS[s] for s in SEEDS}, "train_seconds": train_s,
            "example_summaries": {name: rows[(name, 0)]["example_summary"] for name in names}}
    md = ["# Mixed RL on the trained DCA, against a control trained as long", "",
          "SynthNews-long, the fast profile's 3-agent DCA reading 800 words (one contextual layer); each seed's start "
          "is that seed's MLE run (seed 0: the shipped checkpoint); the recipe's RL defaults. 300 test articles per "
          "seed, beam search; mean ± standard deviation over seeds 0, 1 and 2.", "",
          "| measure | " + " | ".join(LABELS[n] for n in names) + " |", "|---" * (len(names) + 1) + "|"]
    md += [f"| {NAMES[m]} | " + " | ".join(f"{table[n][m]['mean']:.3f} ± {table[n][m]['sd']:.3f}" for n in names)
           + " |" for m in METRICS]
    md += ["", "Paired differences: by seed (3 values), mean ± standard error; ROUGE-L and attributed facts also by "
           "article (900 values). A difference counts only beyond two standard errors.", "",
           "| difference | " + " | ".join(NAMES[m] for m in METRICS) + " | R-L by article | facts by article |",
           "|---" * (len(METRICS) + 3) + "|"]
    for label, d in diffs.items():
        md.append(f"| {label} | " + " | ".join(f"{d[m]['mean']:+.3f} ± {d[m]['se']:.3f}" for m in METRICS) + " | "
                  + " | ".join(f"{d[k]['mean']:+.4f} ± {d[k]['se']:.4f} ({d[k]['verdict']})"
                               for k in ("rougeL_by_article", "attributed_fact_recall_by_article")) + " |")
    if missing:
        md += ["", "Runs not finished (not in the tables): " + ", ".join(missing) + "."]
    write_report(RESULTS, "rl_dca", data, "\n".join(md) + "\n", command=command_line(__file__),
                 config={"variants": VARIANTS, "seeds": list(SEEDS), "starts": STARTS,
                         "runs_dir": "runs/rl_dca"},
                 measures=["dca_course/models/dca.py", "dca_course/recipes/dca.py", "dca_course/losses.py",
                           "dca_course/metrics.py", "dca_course/data/synthnews", "experiments/rl_dca.py"])
    print("\n".join(md))


def main(argv=None) -> int:
    configure_process()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["run", "report"])
    parser.add_argument("--runs-dir", type=Path, default=RUNS_DIR)
    args = parser.parse_args(argv)
    run_all(args.runs_dir) if args.what == "run" else report(args.runs_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
