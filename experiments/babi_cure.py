"""Whether ``intervening_facts`` joins the ``dmn+ext`` row: the rule of ``results/babi_protocol.md``
(version 3), on held-out training stories only (the test is dropped as soon as the data is read).

    python experiments/babi_cure.py ../shared/data/babi --jobs 2

At the grid point of the earlier ``babi-1k`` model, trains ``dmn+ext`` as version 2 defines it (the
base) and with ``--intervening-facts`` (the cure):

1. task 3 on seeds 0, 1 and 2, both arms: the cure must raise task 3's mean held-out accuracy by
   more than ``RISE`` (2 points);
2. only if it does, the 20 tasks on seed 0, both arms: the cure's mean held-out accuracy must not
   fall by more than the protocol's tie (0.2 points).

Writes ``results/babi_cure.json`` (every training's held-out figure, epochs and time, the verdict,
the provenance).  The base arm's seed-0 trainings sit in the folders of ``babi_rows.py select``,
which reads them back; every training is kept in its run folder, so a stopped run goes on.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from experiments import babi_rows as rows  # noqa: E402  (the row's own trainings: the same folders, read back by select)
from tools.provenance import RESULTS, command_line, repo_path, write_result_json  # noqa: E402

POINT = {"lr": 3e-3, "weight_decay": 1e-3, "dropout": 0.1, "max_passes": 5}   # the babi-1k model's point
CURE = {"intervening_facts": True}
RISE = 0.02                 # task 3's mean held-out accuracy must rise by more than this
OUT = RESULTS / "babi_cure.json"


def folder_for(runs: Path, arm: str, task: int, seed: int, eff: dict) -> Path:
    if arm == "base" and seed == 0:       # the row's own grid folder: select reads it back
        return runs / "dmn+ext" / "select" / rows.point_name(eff) / f"task{task:02d}"
    return runs / "dmn+ext" / "cure" / arm / f"seed{seed}" / f"task{task:02d}"


def train(folder: str, runs: Path, pairs: list[tuple[int, int]], n_jobs: int, needed: dict) -> dict:
    """Both arms on every (task, seed) of ``pairs``: {arm: {(task, seed): result}}."""
    jobs, keys = [], []
    for arm, extra in (("base", {}), ("cure", CURE)):
        for task, seed in pairs:
            eff = rows.effective_point(POINT, needed[task])
            settings = dict(rows.row_settings("dmn+ext", eff), **extra)
            jobs.append((task, folder, settings, folder_for(runs, arm, task, seed, eff), seed, False))
            keys.append((arm, task, seed))
    results = rows._run_all(jobs, n_jobs, lambda j, r: f"{'cure' if j[2].get('intervening_facts') else 'base'} "
                            f"task {j[0]:>2} seed {j[4]}: held-out {100 * r['val_accuracy']:.1f}% "
                            f"({r['epochs']} epochs, {r['train_seconds']:.0f} s)")
    out: dict = {"base": {}, "cure": {}}
    for (arm, task, seed), r in zip(keys, results):
        out[arm][(task, seed)] = r
    return out


def mean_of(arm: dict, pairs) -> float:
    return statistics.fmean(arm[p]["val_accuracy"] for p in pairs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="bAbI v1.2 folder holding en/ (or the en/ folder itself)")
    parser.add_argument("--jobs", type=int, default=2, help="trainings at once (one thread each)")
    parser.add_argument("--runs", type=Path, default=Path("runs/babi_rows"), help="run folders (results kept)")
    args = parser.parse_args(argv)
    folder, command = str(args.folder.expanduser().resolve()), command_line(__file__, argv)
    needed = {t: rows.passes_needed(folder, t) for t in rows.TASKS}
    started = time.perf_counter()
    step1 = [(3, s) for s in (0, 1, 2)]
    done = train(folder, args.runs, step1, args.jobs, needed)
    rise = mean_of(done["cure"], step1) - mean_of(done["base"], step1)
    verdict = {"task3_base": round(mean_of(done["base"], step1), 4), "task3_cure": round(mean_of(done["cure"], step1), 4),
               "task3_rise": round(rise, 4), "task3_passes": rise > RISE}
    if verdict["task3_passes"]:
        step2 = [(t, 0) for t in rows.TASKS]
        more = train(folder, args.runs, step2, args.jobs, needed)
        for arm in done:
            done[arm].update(more[arm])
        fall = mean_of(done["base"], step2) - mean_of(done["cure"], step2)
        verdict.update(mean20_base=round(mean_of(done["base"], step2), 4),
                       mean20_cure=round(mean_of(done["cure"], step2), 4),
                       mean20_fall=round(fall, 4), mean20_passes=fall <= rows.TIE + 1e-12)
    verdict["joins_dmn+ext"] = bool(verdict["task3_passes"] and verdict.get("mean20_passes"))
    result = {"rule": f"task 3's mean held-out accuracy over seeds 0-2 rises by more than {RISE:g}; then the 20 "
                      f"tasks' mean held-out accuracy on seed 0 falls by no more than {rows.TIE:g}",
              "point": POINT, "cure": CURE, "verdict": verdict, "data": repo_path(folder), "jobs": args.jobs,
              "wall_seconds": round(time.perf_counter() - started, 1),
              "runs": {arm: {f"task{t}_seed{s}": {k: r[k] for k in ("val_accuracy", "epochs", "best_epoch",
                                                                      "train_seconds")}
                             for (t, s), r in sorted(done[arm].items())} for arm in done}}
    write_result_json(OUT, result, command=command, config={"base": rows.row_settings("dmn+ext", POINT), "cure": CURE},
                      measures=rows.MEASURED + ["experiments/babi_cure.py"])
    print(verdict, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
