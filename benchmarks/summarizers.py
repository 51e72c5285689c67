"""The summarisers of the course side by side, trained and scored by the command line.

    python benchmarks/summarizers.py copying     # notebooks 04-05 on SynthNews (fast profile, CPU)
    python benchmarks/summarizers.py dca         # notebooks 06-07 on SynthNews-long (fast profile, CPU)
    python benchmarks/summarizers.py dca --runs-dir runs/bench --reuse   # table from finished runs

Each row is one ``python -m dca_course train ...`` command; its last line of output is the
JSON of the test metrics, which this script collects into ``benchmarks/results/SUITE.{md,json}``
with the commands, the device and the wall time of every run.  ``--reuse`` takes a run's
``metrics.json`` instead of training it again when the folder already holds one (the RL row
needs its MLE row's folder: ``--init``).  Metrics: ROUGE F1 x100 (rouge-score, Porter stemmer),
repeated-trigram and novel-bigram rates, key-fact recall and hallucinated entity names per
summary (SynthNews keeps every article's facts), and the share of out-of-vocabulary entity names
of the reference that the summary states.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# suite -> [(row label, run folder name, train arguments)]; {runs} is the runs folder
SUITES = {
    "copying": [
        ("attention seq2seq (baseline)", "baseline", "pointer-generator --no-pointer --data synthnews"),
        ("CopyNet", "copynet", "copynet --data synthnews"),
        ("pointer-generator, 3 epochs", "pg", "pointer-generator --data synthnews"),
        ("pointer-generator, 4 epochs", "pg4", "pointer-generator --epochs 4 --data synthnews"),
        ("pointer-generator + coverage (3 + 1 epochs)", "pgcov", "pointer-generator --coverage --data synthnews"),
    ],
    "dca": [
        ("pointer-generator + coverage", "pgcovlong", "pointer-generator --coverage --data synthnews-long"),
        ("DCA, 1 agent", "dca1", "dca --agents 1 --data synthnews-long"),
        ("DCA, 2 agents", "dca2", "dca --agents 2 --data synthnews-long"),
        ("DCA, 3 agents (MLE)", "dca3", "dca --agents 3 --data synthnews-long"),
        ("DCA, 5 agents", "dca5", "dca --agents 5 --data synthnews-long"),
        ("DCA, 3 agents, mixed RL from the MLE run", "dca3rl",
         "dca --agents 3 --rl --init {runs}/dca3 --data synthnews-long"),
    ],
}
COLUMNS = [("rouge1", "R-1", 2), ("rouge2", "R-2", 2), ("rougeL", "R-L", 2), ("rougeLsum", "R-Lsum", 2),
           ("repeated_trigrams", "rep. 3-grams", 3), ("novel_bigrams", "novel 2-grams", 3),
           ("fact_recall", "fact recall", 3), ("hallucinated_entities", "halluc. names", 3),
           ("oov_entity_recall", "OOV names stated", 3), ("train_seconds", "train s", 0)]


def run_row(args, folder: Path, train_args: str) -> dict:
    metrics_file = folder / "metrics.json"
    if args.reuse and metrics_file.is_file():
        result = json.loads(metrics_file.read_text())
        result.pop("out", None)                  # where it ran: not a result
        return result
    cmd = [sys.executable, "-m", "dca_course", "train", *train_args.split(), "--profile", args.profile,
           "--device", args.device, "--seed", str(args.seed), "--out", str(folder), "--fresh"]
    print("$", " ".join(cmd[1:]), flush=True)
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result["wall_seconds"] = round(time.perf_counter() - start, 1)
    result.pop("out", None)
    return result


def table(rows: list) -> str:
    head = "| model | " + " | ".join(label for _, label, _ in COLUMNS) + " |"
    lines = [head, "|---|" + "---:|" * len(COLUMNS)]
    for label, result in rows:
        cells = [f"{result[k]:.{d}f}" if isinstance(result.get(k), (int, float)) else "—" for k, _, d in COLUMNS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--runs-dir", type=Path, default=ROOT / "runs" / "bench")
    parser.add_argument("--reuse", action="store_true", help="take finished runs' metrics.json")
    parser.add_argument("--profile", default="fast", choices=["fast", "full"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    rows, commands = [], []
    for label, name, train_args in SUITES[args.suite]:
        train_args = train_args.format(runs=args.runs_dir)
        commands.append(f"python -m dca_course train {train_args} --profile {args.profile} --device {args.device}")
        rows.append((label, run_row(args, args.runs_dir / name, train_args)))
        print(f"{label}: " + json.dumps({k: rows[-1][1].get(k) for k, _, _ in COLUMNS}), flush=True)
    md = table(rows)
    print(md)
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs"
    from dca_course.train import write_json, write_text

    write_json(args.out / f"{args.suite}.json", {
        "suite": args.suite, "profile": args.profile, "device": args.device, "machine": machine,
        "commands": commands, "rows": [{"label": label, **result} for label, result in rows]})
    write_text(
        args.out / f"{args.suite}.md",
        f"# Summarisers, suite `{args.suite}` ({args.profile} profile, {args.device})\n\n"
        f"Produced by `python benchmarks/summarizers.py {args.suite}`; test split, beam search as the "
        f"recipes evaluate.\n\n{md}\n\nCommands:\n\n```\n" + "\n".join(commands) + "\n```\n")
    return dict(rows)


if __name__ == "__main__":
    main()
