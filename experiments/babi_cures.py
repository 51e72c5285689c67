"""The protocol's version 6 cures for the course's bAbI row (``results/babi_protocol.md``), each
judged on held-out training stories before it may join the ``dmn+ext`` row:

    python experiments/babi_cures.py ../shared/data/babi --jobs 2

``CURES`` names each cure, the knobs it turns on and the tasks it is aimed at.  For each cure, the
row (``dmn+ext`` at its stored point) and the row with the cure train every target task on seeds
0, 1 and 2, as ``select`` trains (held-out stories only, stopping at 100%, the test never read).
A cure passes the first step when its target tasks' mean held-out accuracy does not fall, and
either rises by more than ``RISE`` (2 points) or their held-out answer cross-entropy falls by
more than two standard errors of the paired difference over the (task, seed) pairs.  A cure that
passes trains the 20 tasks on seed 0 beside the row; it joins when their mean held-out accuracy
falls by no more than the tie (0.2 points).  When two cures join, they also train together on
seed 0's 20 tasks, and join together only if that mean also falls by no more than the tie; else
the one with the higher 20-task mean joins alone.  ``results/babi_cures.json`` holds every figure
and the verdicts; ``experiments/babi_rows.py final --row dmn+ext`` trains the row with the cures
that joined (``joined_cures``).

Every training keeps its result in its run folder (``babi_rows.train_kept``), so a stopped command
goes on where it stopped.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import RESULTS, command_line, repo_path, write_result_json  # noqa: E402

from experiments import babi_rows as rows  # noqa: E402
from dca_course.recipes.dmn import BABI_CHOSEN  # noqa: E402

ROW = "dmn+ext"
#: The cures of version 6: the knobs each turns on and the tasks it is aimed at.
CURES = {
    "answer_hidden": {"settings": {"answer_hidden": True}, "tasks": (7, 17, 18)},
    "rename_entities": {"settings": {"rename_entities": True}, "tasks": (3, 18)},
}
SEEDS = (0, 1, 2)
RISE = 0.02                 # the target tasks' mean held-out accuracy must rise by more than this ...
OUT = RESULTS / "babi_cures.json"


def settings_for(point: dict, task_need: int, cures=()) -> dict:
    """The row's knobs at ``point`` (its cap lowered to what the task can use), the cures' on top,
    trained as selection trains (stopping when the held-out accuracy first reaches 100%)."""
    extra = {k: v for name in cures for k, v in CURES[name]["settings"].items()}
    return {**rows.row_settings(ROW, rows.effective_point(point, task_need)), **extra, **rows.SELECT_ONLY}


def arm_name(cures) -> str:
    return "+".join(cures) or "row"


def train_arm(folder: str, runs: Path, point: dict, cures, pairs, needed: dict, n_jobs: int) -> dict:
    """One arm (the row with ``cures``) on every (task, seed) of ``pairs``: {(task, seed): result}."""
    name = arm_name(cures)
    jobs = [(t, folder, settings_for(point, needed[t], cures), runs / ROW / "cures" / name / f"seed{s}" / f"task{t:02d}",
             s, False) for t, s in pairs]
    results = rows._run_all(jobs, n_jobs, lambda j, r: f"{name} task {j[0]:>2} seed {j[4]}: held-out "
                            f"{100 * r['val_accuracy']:.1f}%, answer loss {r.get('val_answer_loss') or 0:.4f} "
                            f"({r['epochs']} epochs, {r['train_seconds']:.0f} s)")
    return dict(zip(pairs, results))


def paired(cure: dict, base: dict, key: str) -> dict:
    """Cure minus row over the pairs both hold: the mean difference and its standard error."""
    diffs = [cure[p][key] - base[p][key] for p in base]
    se = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else float("inf")
    return {"mean": round(statistics.fmean(diffs), 6), "se": round(se, 6), "n": len(diffs)}


def first_step(cure: dict, base: dict) -> dict:
    """The rule's first step on the target tasks (version 6, item 1)."""
    acc, loss = paired(cure, base, "val_accuracy"), paired(cure, base, "val_answer_loss")
    rises = acc["mean"] > RISE
    surer = loss["mean"] < 0 and abs(loss["mean"]) > 2 * loss["se"]
    return {"held_out_accuracy": acc, "held_out_answer_loss": loss, "accuracy_rises": rises, "surer": surer,
            "passes": acc["mean"] >= 0 and (rises or surer)}


def mean20(arm: dict, tasks) -> float:
    return statistics.fmean(arm[(t, 0)]["val_accuracy"] for t in tasks)


def decide(folder: str, runs: Path, n_jobs: int, tasks=rows.TASKS, point: dict | None = None) -> dict:
    """Version 6's rule for every cure; what ``results/babi_cures.json`` stores."""
    point = point or BABI_CHOSEN[ROW]
    needed = {t: rows.passes_needed(folder, t) for t in tasks}
    started = time.perf_counter()
    arms: dict[str, dict] = {"row": {}}
    verdicts: dict[str, dict] = {}
    for name, cure in CURES.items():
        pairs = [(t, s) for t in cure["tasks"] for s in SEEDS]
        arms["row"].update(train_arm(folder, runs, point, (), pairs, needed, n_jobs))
        arms[name] = train_arm(folder, runs, point, (name,), pairs, needed, n_jobs)
        verdicts[name] = first_step(arms[name], {p: arms["row"][p] for p in pairs})
    every = [(t, 0) for t in tasks]
    passing = [name for name in CURES if verdicts[name]["passes"]]
    if passing:
        arms["row"].update(train_arm(folder, runs, point, (), every, needed, n_jobs))
    for name in passing:
        arms[name].update(train_arm(folder, runs, point, (name,), every, needed, n_jobs))
        fall = mean20(arms["row"], tasks) - mean20(arms[name], tasks)
        verdicts[name].update(mean20_row=round(mean20(arms["row"], tasks), 4),
                              mean20_cure=round(mean20(arms[name], tasks), 4),
                              mean20_fall=round(fall, 4), joins_alone=fall <= rows.TIE + 1e-12)
    joining = [name for name in passing if verdicts[name]["joins_alone"]]
    together = None
    if len(joining) > 1:
        both = tuple(joining)
        arms[arm_name(both)] = train_arm(folder, runs, point, both, every, needed, n_jobs)
        fall = mean20(arms["row"], tasks) - mean20(arms[arm_name(both)], tasks)
        together = {"cures": list(both), "mean20": round(mean20(arms[arm_name(both)], tasks), 4),
                    "mean20_fall": round(fall, 4), "joins": fall <= rows.TIE + 1e-12}
        if not together["joins"]:
            joining = [max(joining, key=lambda n: verdicts[n]["mean20_cure"])]
    return {"rule": (f"on the cure's target tasks over seeds {', '.join(map(str, SEEDS))}: the mean held-out accuracy "
                     f"does not fall, and rises by more than {RISE:g} or the held-out answer cross-entropy falls by "
                     f"more than two standard errors of the paired difference; then the 20 tasks' mean held-out "
                     f"accuracy on seed 0 falls by no more than {rows.TIE:g}; two cures that join alone join "
                     f"together only if, trained together, they pass that too"),
            "row": ROW, "point": point, "cures": {n: {"settings": c["settings"], "tasks": list(c["tasks"])}
                                                  for n, c in CURES.items()},
            "verdicts": verdicts, "together": together, "joined": joining, "data": repo_path(folder), "jobs": n_jobs,
            "wall_seconds": round(time.perf_counter() - started, 1),
            "runs": {arm: {f"task{t}_seed{s}": {k: r.get(k) for k in ("val_accuracy", "val_answer_loss", "epochs",
                                                                         "best_epoch", "train_seconds")}
                           for (t, s), r in sorted(done.items())} for arm, done in arms.items()}}


def main(argv=None) -> int:
    from dca_course import configure_process

    configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="bAbI v1.2 folder holding en/ (or the en/ folder itself)")
    parser.add_argument("--jobs", type=int, default=2, help="trainings at once (one thread each)")
    parser.add_argument("--runs", type=Path, default=Path("runs/babi_rows"), help="run folders (results kept)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs: a whole number of 1 or more")
    if not (args.folder / "en").is_dir() and args.folder.name != "en":
        parser.error(f"{args.folder}: not a bAbI v1.2 folder (no en/ in it)")
    folder = str(args.folder.expanduser().resolve())
    command = command_line(__file__, argv)
    result = decide(folder, args.runs, args.jobs)
    write_result_json(OUT, result, command=command,
                      config={"row": rows.row_settings(ROW, result["point"]), "cures": result["cures"],
                              "select_only": rows.SELECT_ONLY, "seeds": list(SEEDS)},
                      measures=rows.MEASURED + ["experiments/babi_cures.py"])
    for name, v in result["verdicts"].items():
        print(f"{name}: held-out accuracy {100 * v['held_out_accuracy']['mean']:+.2f} points, answer loss "
              f"{v['held_out_answer_loss']['mean']:+.4f} ± {v['held_out_answer_loss']['se']:.4f}: "
              f"{'passes' if v['passes'] else 'fails'} the first step"
              + (f"; 20-task mean {100 * v['mean20_cure']:.2f}% against {100 * v['mean20_row']:.2f}%"
                 if "mean20_cure" in v else ""), file=sys.stderr)
    print(f"joined: {', '.join(result['joined']) or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
