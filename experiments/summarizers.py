"""The summarisers of the course side by side, trained and scored by the command line, over seeds.

    python experiments/summarizers.py copying                  # notebooks 04-05 on SynthNews (seed 0)
    python experiments/summarizers.py dca --seeds 0 1 2 --jobs 2   # notebooks 06-07 on SynthNews-long
    python experiments/summarizers.py dca --seeds 0 1 2 --reuse     # the tables again from finished runs

Each row is one ``python -m dca_course train ...`` command per seed (``--seed`` sets the initial
weights, the batch order and the generated corpus); its last line of output is the JSON of the
test metrics, which this script collects into ``results/SUITE.{md,json}`` with the
commands, the machine and the training seconds of every run.  With several seeds each cell is the
mean, with the standard deviation and the range over the seeds, and the ``dca`` suite adds the
paired differences its lessons rest on (the same seed's runs compared).  ``--jobs N`` runs N
trainings at once, each on one thread; a row that starts from another (``--init``) waits for it.
``--reuse`` takes a run's ``metrics.json`` instead of training it again when the folder holds one.
``--from-stored`` trains nothing: it writes the tables again from the runs that ``results/SUITE.json``
holds (after a column is added), and keeps that file's provenance as ``trained``.

Rows without a model (``lead-3``, ``first 400 words``, ...) score a piece of the article itself
as its summary: what copying that piece would give, on the same test articles.

Metrics: ROUGE F1 x100 (rouge-score, Porter stemmer), repeated-trigram and novel-bigram rates,
key-fact recall and late-fact recall (the key facts that the first 400 tokens of the article do
not state; long articles only), each by word match and attributed (a fact counts only in a sentence
that also names what it is about: ``metrics.attributed_fact_recall``; the paired differences use
the attributed figures), hallucinated entity names per summary, and the share of
out-of-vocabulary entity names of the reference that the summary states.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import ROOT, SUMMARIZER_CODE, command_line, write_report  # noqa: E402

# suite -> [(row label, run folder name, train arguments, folder it starts from or None)];
# {runs} is the seed's runs folder.  Train arguments "lead:N" / "first:N" are data baselines.
LONG = "--data synthnews-long"
EQUAL = "--epochs 5 --coverage-epochs 1"           # 6 epochs, as the DCA rows (the last with coverage)
SUITES = {
    "copying": [
        ("attention seq2seq (baseline)", "baseline", "pointer-generator --no-pointer --data synthnews", None),
        ("CopyNet", "copynet", "copynet --data synthnews", None),
        ("pointer-generator, 3 epochs", "pg", "pointer-generator --data synthnews", None),
        ("pointer-generator, 4 epochs", "pg4", "pointer-generator --epochs 4 --data synthnews", None),
        ("pointer-generator + coverage (3 + 1 epochs)", "pgcov", "pointer-generator --coverage --data synthnews",
         None),
    ],
    "dca": [
        ("lead-3 (no model)", "lead3", f"lead:3 {LONG}", None),
        ("the first 400 words (no model)", "first400", f"first:400 {LONG}", None),
        ("the first 800 words (no model)", "first800", f"first:800 {LONG}", None),
        ("pointer-generator + coverage, first 400 words", "pg400",
         f"pointer-generator --coverage {EQUAL} --max-src 400 {LONG}", None),
        ("pointer-generator + coverage, all 800 words", "pg800",
         f"pointer-generator --coverage {EQUAL} --max-src 800 {LONG}", None),
        ("DCA, 1 agent", "dca1", f"dca --agents 1 {LONG}", None),
        ("DCA, 2 agents", "dca2", f"dca --agents 2 {LONG}", None),
        ("DCA, 3 agents (MLE)", "dca3", f"dca --agents 3 {LONG}", None),
        ("DCA, 5 agents", "dca5", f"dca --agents 5 {LONG}", None),
        ("DCA, 3 agents: + mixed RL", "dca3rl", f"dca --agents 3 --rl --init {{runs}}/dca3 {LONG}", "dca3"),
        ("DCA, 3 agents: + as many MLE steps (control)", "dca3ctl",
         f"dca --agents 3 --rl --gamma 0 --init {{runs}}/dca3 {LONG}", "dca3"),
    ],
}
# the differences the dca suite's lessons rest on: (label, metric, row a, row b), a minus b per seed
PAIRED = {
    "dca": [
        ("attributed facts: 3 agents minus the pointer-generator reading 400 words", "attributed_fact_recall", "dca3",
         "pg400"),
        ("attributed facts: 3 agents minus the pointer-generator reading 800 words", "attributed_fact_recall", "dca3",
         "pg800"),
        ("attributed facts: 3 agents minus 1 agent", "attributed_fact_recall", "dca3", "dca1"),
        ("attributed facts: the pointer-generator reading 800 words minus 400", "attributed_fact_recall", "pg800",
         "pg400"),
        ("attributed late facts: 3 agents minus the pointer-generator reading 400 words", "attributed_late_fact_recall",
         "dca3", "pg400"),
        ("ROUGE-L: mixed RL minus the MLE control (same steps)", "rougeL", "dca3rl", "dca3ctl"),
        ("ROUGE-Lsum: mixed RL minus its MLE starting point", "rougeLsum", "dca3rl", "dca3"),
        ("ROUGE-Lsum: the MLE control minus the same starting point", "rougeLsum", "dca3ctl", "dca3"),
        ("ROUGE-L: mixed RL minus its MLE starting point", "rougeL", "dca3rl", "dca3"),
    ],
}
COLUMNS = [("rouge1", "R-1", 2), ("rouge2", "R-2", 2), ("rougeL", "R-L", 2), ("rougeLsum", "R-Lsum", 2),
           ("repeated_trigrams", "rep. 3-grams", 3), ("novel_bigrams", "novel 2-grams", 3),
           ("fact_recall", "fact recall", 3), ("late_fact_recall", "late facts", 3),
           ("attributed_fact_recall", "attrib. facts", 3), ("attributed_late_fact_recall", "attrib. late", 3),
           ("hallucinated_entities", "halluc. names", 3), ("oov_entity_recall", "OOV names stated", 3),
           ("train_seconds", "train s", 0)]


def data_baseline(spec: str, profile: str, seed: int) -> dict:
    """``lead:N DATA`` (the first N sentences) or ``first:N DATA`` (the first N tokens) of every
    test article, scored as its summary."""
    from dca_course import metrics
    from dca_course.data.synthnews import lead_sentences, slot_contexts
    from dca_course.registry import load_data

    kind, data_args = spec.split(" ", 1)
    name, n = kind.split(":")
    data = load_data(data_args.split()[-1], profile, seed)
    examples = data.test
    if name == "lead":
        preds = [[w for s in lead_sentences(ex, int(n)) for w in s] for ex in examples]
    else:
        preds = [ex.source[: int(n)] for ex in examples]
    result = metrics.summary_metrics(preds, [ex.summary_text() for ex in examples], [ex.source for ex in examples])
    result.update(metrics.fact_metrics(preds, examples, contexts_of=slot_contexts))
    return {**result, "seed": seed, "train_seconds": 0.0}


def run_row(args, folder: Path, train_args: str, seed: int) -> dict:
    metrics_file = folder / "metrics.json"
    if train_args.split()[0].split(":")[0] in ("lead", "first"):
        return data_baseline(train_args, args.profile, seed)
    if args.reuse and metrics_file.is_file():
        result = json.loads(metrics_file.read_text())
        result.pop("out", None)                  # where it ran: not a result
        return result
    cmd = [sys.executable, "-m", "dca_course", "train", *train_args.split(), "--profile", args.profile,
           "--device", args.device, "--seed", str(seed), "--out", str(folder), "--fresh", "--quiet"]
    print("$", " ".join(cmd[1:]), flush=True)
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True, env=env).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result.pop("out", None)
    return result


def run_suite(args) -> dict:
    """{row name: {seed: result}}, the trainings run ``args.jobs`` at a time."""
    rows = SUITES[args.suite]
    futures: dict = {}

    def job(name, train_args, seed, parent):
        if parent is not None:
            futures[parent, seed].result()       # started before this one: no deadlock
        return run_row(args, args.runs_dir / f"seed{seed}" / name, train_args, seed)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for waits in (False, True):              # rows that start from another run go last
            for seed in args.seeds:
                for label, name, train_args, parent in rows:
                    if (parent is not None) == waits:
                        runs = args.runs_dir / f"seed{seed}"
                        futures[name, seed] = pool.submit(job, name, train_args.format(runs=runs), seed, parent)
        return {name: {seed: futures[name, seed].result() for seed in args.seeds} for _, name, _, _ in rows}


def from_stored(stored: dict, labels: dict) -> dict:
    """{row name: {seed: result}} of a stored ``SUITE.json``, in the suite's order (JSON keys are strings)."""
    rows = {r["name"]: r for r in stored["rows"]}
    missing = [name for name in labels if name not in rows]
    if missing:
        raise SystemExit(f"dca-course: error: the stored suite has no runs of {', '.join(missing)}")
    return {name: {int(s): run for s, run in rows[name]["per_seed"].items()} for name in labels}


def spread(values: list) -> dict:
    """Mean, standard deviation and range of one metric over the seeds."""
    return {"mean": statistics.mean(values), "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values), "values": values}


def row_summary(label: str, name: str, by_seed: dict, seeds: list) -> dict:
    """One row of SUITE.json: each metric's mean (flat, as one-seed files had it), its spread, every run."""
    spreads = {k: spread([by_seed[s][k] for s in seeds]) for k, _, _ in COLUMNS
               if all(isinstance(by_seed[s].get(k), (int, float)) for s in seeds)}
    return {"label": label, "name": name, **{k: v["mean"] for k, v in spreads.items()}, "spread": spreads,
            "per_seed": by_seed}


def cell(values: list, digits: int) -> str:
    if not values:
        return "—"
    s = spread(values)
    if len(values) == 1:
        return f"{s['mean']:.{digits}f}"
    return f"{s['mean']:.{digits}f} ± {s['sd']:.{digits}f}"


def table(results: dict, labels: dict, seeds: list) -> str:
    head = "| model | " + " | ".join(label for _, label, _ in COLUMNS) + " |"
    lines = [head, "|---|" + "---:|" * len(COLUMNS)]
    for name, by_seed in results.items():
        cells = [cell([by_seed[s][k] for s in seeds if isinstance(by_seed[s].get(k), (int, float))], d)
                 for k, _, d in COLUMNS]
        lines.append(f"| {labels[name]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired(results: dict, suite: str, seeds: list) -> list:
    out = []
    for label, key, a, b in PAIRED.get(suite, []):
        if a in results and b in results and all(key in results[r][s] for r in (a, b) for s in seeds):
            diffs = [results[a][s][key] - results[b][s][key] for s in seeds]
            out.append({"label": label, "metric": key, "a": a, "b": b, **spread(diffs)})
    return out


def paired_table(rows: list, seeds: list) -> str:
    lines = ["| difference (same seed) | " + " | ".join(f"seed {s}" for s in seeds) + " | mean | sd | all > 0 |",
             "|---|" + "---:|" * (len(seeds) + 3)]
    for r in rows:
        lines.append(f"| {r['label']} | " + " | ".join(f"{v:+.3f}" for v in r["values"])
                     + f" | {r['mean']:+.3f} | {r['sd']:.3f} | {'yes' if r['min'] > 0 else 'no'} |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    from dca_course import configure_process

    configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--runs-dir", type=Path, default=ROOT / "runs" / "bench")
    parser.add_argument("--reuse", action="store_true", help="take finished runs' metrics.json")
    parser.add_argument("--from-stored", action="store_true",
                        help="train nothing: the tables again from the runs stored in OUT/SUITE.json")
    parser.add_argument("--profile", default="fast", choices=["fast", "full"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--jobs", type=int, default=1, help="trainings at once")
    parser.add_argument("--threads", type=int, default=1, help="threads per training")
    parser.add_argument("--out", type=Path, default=ROOT / "results")
    args = parser.parse_args(argv)
    rows = SUITES[args.suite]
    labels = {name: label for label, name, _, _ in rows}
    commands = [f"python -m dca_course train {a} --profile {args.profile} --device {args.device} --seed S"
                .replace("{runs}", "RUNS/seedS") for _, _, a, _ in rows if a.split(":")[0] not in ("lead", "first")]
    stored = args.out / f"{args.suite}.json"
    if args.from_stored and not stored.is_file():
        parser.error(f"--from-stored: no {stored}")
    before = json.loads(stored.read_text(encoding="utf-8")) if args.from_stored else None
    results = from_stored(before, labels) if before else run_suite(args)
    if before:
        args.seeds = before["seeds"]
    md = table(results, labels, args.seeds)
    diffs = paired(results, args.suite, args.seeds)
    print(md)
    if diffs:
        print(paired_table(diffs, args.seeds))
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, {args.threads} thread(s) per training"
    machine = before["machine"] if before else machine

    summary = {
        "suite": args.suite, "profile": args.profile, "device": args.device, "machine": machine,
        "seeds": args.seeds, "commands": commands,
        "rows": [row_summary(labels[name], name, by_seed, args.seeds) for name, by_seed in results.items()],
        "paired": diffs}
    if before:    # the runs were trained by the stored file's command: keep its provenance
        summary["trained"] = before.get("trained", before["provenance"])
    seeds = ", ".join(map(str, args.seeds))
    text = (f"# Summarisers, suite `{args.suite}` ({args.profile} profile, {args.device})\n\n"
            f"On {machine}; test split, beam search as the recipes evaluate. "
            + (f"Each cell: mean ± standard deviation over seeds {seeds} (each seed trains its own runs on its "
               f"own generated corpus); `{args.suite}.json` holds every run.\n\n" if len(args.seeds) > 1 else "\n\n")
            + md + "\n")
    if diffs:
        text += "\nPaired differences, each seed's runs against each other:\n\n" + paired_table(diffs, args.seeds) + "\n"
    text += "\nCommands (S: the seed; RUNS: the runs folder):\n\n```\n" + "\n".join(commands) + "\n```\n"
    write_report(args.out, args.suite, summary, text, command=command_line(__file__, argv), config=vars(args),
                 measures=["experiments/summarizers.py", *SUMMARIZER_CODE])
    return results


if __name__ == "__main__":
    main()
