"""Does communication help?  The same 3 agents with 0, 1 and 2 contextual layers (issue 45, part 3).

    python experiments/communication.py run       # train what is missing under runs/communication/
    python experiments/communication.py report    # score every run; writes results/communication.json and .md

In a Deep Communicating Agents encoder (Celikyilmaz et al. 2018) each of the K contextual layers
passes every agent the mean of the others' states (the message, eqs. 5-6).  K = 0 keeps the agents
apart: each reads its paragraphs alone, and only the decoder's agent attention joins them.  Every
run has the recipe's fast profile on SynthNews-long (3 agents, 800 tokens, 6 epochs: the same
budget in epochs and examples for every K) and only ``--context-layers`` and ``--seed`` differ.  The
seed also draws the data, so the three K of one seed meet the same test articles: differences are
paired by seed.

``report`` scores each run on its 300 test articles with the recipe's own evaluation (beam search):
ROUGE, fact recall stated anywhere and with what each fact is about
(``dca_course.metrics.attributed_fact_recall``), both for the late facts (beyond token 400), and
a look at what the messages carry: how far agent 1's top-layer states move when agent 3 is given
another article's paragraphs (0 by construction at K = 0).  A run's scores are kept in its folder
(``report.json``), so ``report`` is quick once done.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import RESULTS, ROOT, command_line, write_report  # noqa: E402

import torch  # noqa: E402

from dca_course import configure_process  # noqa: E402
from dca_course.data.specs import load_data  # noqa: E402
from dca_course.data.synthnews import slot_contexts  # noqa: E402
from dca_course.io import write_json  # noqa: E402
from dca_course.metrics import misattribution  # noqa: E402
from dca_course.recipes import load_run  # noqa: E402

RUNS_DIR = ROOT / "runs" / "communication"
CHECKPOINT = ROOT / "data" / "checkpoints" / "dca3-synthnews-long"
# k1-s0 is the shipped checkpoint, data/checkpoints/dca3-synthnews-long: the same command (K = 1 is the default)
NOTES = ("K=1, seed 0 is the shipped checkpoint (data/checkpoints/dca3-synthnews-long), trained by the same command "
         "with the default --context-layers 1.")
LAYERS = (0, 1, 2)
SEEDS = (0, 1, 2)
METRICS = ("rouge1", "rouge2", "rougeL", "fact_recall", "attributed_fact_recall", "late_fact_recall",
           "attributed_late_fact_recall", "misattributed_facts", "message_reach")
NAMES = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L", "fact_recall": "facts (word match)",
         "attributed_fact_recall": "facts (attributed)", "late_fact_recall": "late facts (word match)",
         "attributed_late_fact_recall": "late facts (attributed)", "misattributed_facts": "misattributed per summary",
         "message_reach": "agent 1 moved by agent 3's text"}


def command(k: int, seed: int) -> str:
    return (f"python -m dca_course train dca --agents 3 --context-layers {k} --data synthnews-long --profile fast "
            f"--device cpu --seed {seed} --out runs/communication/k{k}-s{seed}")


def checkpoint_as_run(runs_dir: Path) -> None:
    """k1-s0 from the shipped checkpoint: its weights and its metrics on the test split."""
    folder = runs_dir / "k1-s0"
    if (folder / "metrics.json").is_file():
        return
    record = json.loads((CHECKPOINT / "checkpoint.json").read_text())
    same = command(0, 0).replace(" --context-layers 0", "").split(" --out")[0]      # K = 1 is the default
    if not record["command"].startswith(same):
        raise SystemExit(f"dca-course: error: {CHECKPOINT}: trained by {record['command']!r}, not {same!r}")
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CHECKPOINT / "last.pt", folder / "last.pt")
    write_json(folder / "metrics.json", {**record["test_metrics"], "note": NOTES,
                                         "trained_at_commit": record["trained_at_commit"]})


def run_all(runs_dir: Path) -> None:
    """Train every (K, seed) whose folder has no metrics.json yet, one after another (one thread each)."""
    checkpoint_as_run(runs_dir)
    for seed in SEEDS:
        for k in LAYERS:
            if (runs_dir / f"k{k}-s{seed}" / "metrics.json").is_file():
                continue
            print(f"training K={k} seed={seed}", flush=True)
            args = command(k, seed).split()[1:]
            args[args.index("--out") + 1] = str(runs_dir / f"k{k}-s{seed}")
            subprocess.run([sys.executable, *args], check=True, cwd=ROOT)


@torch.no_grad()
def message_reach(model, recipe, vocab, examples) -> float:
    """Mean relative change of agent 1's top-layer states when agent 3 reads the next article's
    paragraphs instead of its own: how much the messages bring from one agent to another."""
    batch = recipe.make_batch(examples, vocab)
    other = recipe.make_batch(examples[1:] + examples[:1], vocab)
    src, mask = batch.src.clone(), batch.src_mask.clone()
    L = min(src.shape[-1], other.src.shape[-1])
    src[:, 2], mask[:, 2] = 0, False
    src[:, 2, :L], mask[:, 2, :L] = other.src[:, 2, :L], other.src_mask[:, 2, :L]
    h, _ = model.encode_agents(batch.src, batch.src_mask)
    h_swapped, _ = model.encode_agents(src, mask)
    keep = batch.src_mask[:, 0]                                             # agent 1's real tokens
    moved = (h_swapped[:, 0] - h[:, 0]).norm(dim=-1)[keep]
    return (moved / h[:, 0].norm(dim=-1)[keep].clamp_min(1e-12)).mean().item()


def score_run(folder: Path) -> dict:
    """The recipe's evaluation of one run on its test split, with the attributed fact measures,
    misattribution and the message reach; cached in the folder's report.json."""
    cached = folder / "report.json"
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
    row["message_reach"] = message_reach(model, recipe, vocab, test[:64])
    row.update(context_layers=state["model_config"]["context_layers"], seed=int(state.get("seed", 0)),
               train_seconds=json.loads((folder / "metrics.json").read_text()).get("train_seconds"),
               test_articles=len(test), example_summary=" ".join(preds[0]))
    write_json(cached, row)
    return row


def paired(rows: dict, metric: str, k: int, base: int = 0) -> dict:
    """K minus ``base`` layers, paired by seed: mean, standard error, and what it allows one to say."""
    diffs = [rows[(k, s)][metric] - rows[(base, s)][metric] for s in SEEDS]
    m = statistics.mean(diffs)
    se = statistics.stdev(diffs) / len(diffs) ** 0.5
    verdict = ("higher" if m - 2 * se > 0 else "lower" if m + 2 * se < 0 else "not distinguishable at this size")
    return {"diffs": [round(d, 4) for d in diffs], "mean": round(m, 4), "se": round(se, 4), "verdict": verdict}


def finished(runs_dir: Path) -> tuple[list[int], list[str]]:
    """The K whose three seeds have finished runs, and the runs still missing."""
    missing = [f"k{k}-s{s}" for k in LAYERS for s in SEEDS if not (runs_dir / f"k{k}-s{s}" / "metrics.json").is_file()]
    return [k for k in LAYERS if not any(m.startswith(f"k{k}-") for m in missing)], missing


def report(runs_dir: Path) -> None:
    """Score the finished runs; K = 0 and at least one other K must have all three seeds."""
    layers, missing = finished(runs_dir)
    if 0 not in layers or len(layers) < 2:
        raise SystemExit(f"dca-course: error: {runs_dir}: unfinished runs {', '.join(missing)} "
                         "(python experiments/communication.py run)")
    rows = {}
    for k in layers:
        for s in SEEDS:
            print(f"scoring k{k}-s{s}", flush=True)
            rows[(k, s)] = score_run(runs_dir / f"k{k}-s{s}")
    table = {f"K={k}": {m: {"values": [round(rows[(k, s)][m], 4) for s in SEEDS],
                            "mean": round(statistics.mean(rows[(k, s)][m] for s in SEEDS), 4),
                            "sd": round(statistics.stdev(rows[(k, s)][m] for s in SEEDS), 4)} for m in METRICS}
             for k in layers}
    diffs = {f"K={k} minus K={b}": {m: paired(rows, m, k, b) for m in METRICS}
             for b in layers for k in layers if k > b}
    data = {"table": table, "paired": diffs, "seeds": list(SEEDS), "missing_runs": missing,
            "commands": {f"k{k}-s{s}": command(k, s) for k in layers for s in SEEDS},
            "train_seconds": {f"k{k}-s{s}": rows[(k, s)]["train_seconds"] for k in layers for s in SEEDS},
            "example_summaries": {f"k{k}-s0": rows[(k, 0)]["example_summary"] for k in layers},
            "notes": NOTES}
    md = ["# Communication: 3 agents with 0, 1 and 2 contextual layers", "",
          "SynthNews-long, fast profile, 6 epochs each; 300 test articles per seed (the seed draws the data); "
          "mean and standard deviation over seeds 0, 1 and 2. " + NOTES, "",
          "| measure | " + " | ".join(f"K={k}" for k in layers) + " |", "|---" * (len(layers) + 1) + "|"]
    md += [f"| {NAMES[m]} | " + " | ".join(f"{table[f'K={k}'][m]['mean']:.3f} ± {table[f'K={k}'][m]['sd']:.3f}"
                                           for k in layers) + " |" for m in METRICS]
    md += ["", "Paired by seed (the layers of one seed against those of another K): mean ± standard error, and what "
           "two standard errors allow.", "",
           "| measure | " + " | ".join(diffs) + " |", "|---" * (len(diffs) + 1) + "|"]
    md += [f"| {NAMES[m]} | " + " | ".join(f"{d[m]['mean']:+.3f} ± {d[m]['se']:.3f} ({d[m]['verdict']})"
                                           for d in diffs.values()) + " |" for m in METRICS]
    if missing:
        md += ["", "Runs not finished yet (not in the tables): " + ", ".join(missing) + "."]
    write_report(RESULTS, "communication", data, "\n".join(md) + "\n", command=command_line(__file__),
                 config={"layers": list(LAYERS), "seeds": list(SEEDS), "runs_dir": str(runs_dir)},
                 measures=["dca_course/models/dca.py", "dca_course/recipes/dca.py", "dca_course/recipes/copying.py",
                           "dca_course/metrics.py", "dca_course/data/synthnews", "experiments/communication.py"])
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
