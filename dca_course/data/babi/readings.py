"""Readings of the stored bAbI results: what ``results/babi_real_1k.json`` says, as notebook 03b prints it.

The stored file holds two things (``experiments/babi_real.py`` and ``experiments/babi_rows.py`` write them):

* ``rows``: the three rows of ``results/babi_protocol.md`` (``dmn``, ``dmn+``, ``dmn+ext``), each trained on seeds
  0, 1 and 2 with its settings chosen on held-out stories; per task, ``mean`` and ``per_seed`` accuracies, and per
  task and seed the training's ``runs`` entry (epochs, held-out accuracy, how often each pass's top gate found its
  supporting fact on the test);
* the older single table of the ``babi-1k`` profile (``per_task``, ``per_task_per_seed``, ``runs``): DMN+ with the
  course's additions, whose settings were chosen partly while looking at test figures.

Every function returns text (or plain numbers for a chart): the stored figures, the same on every machine.
A pass's reading counts a hit when its top gate is on a fact that pass is taught: the last pass of a question with
more supporting facts than passes (tasks 7 and 8) is taught every fact left over, and is read against all of them
(``evaluate_dmn``).
"""
from __future__ import annotations

import statistics

from .download import PAPER_ACCURACY_1K, TASK_NAMES

#: The protocol's rows, in order, and a short label for each.
ROWS = {"dmn": "DMN", "dmn+": "DMN+", "dmn+ext": "DMN+ ext"}
TASKS = tuple(range(1, 21))


def paper_mean(paper: str = "DMN") -> float:
    """The mean over the 20 tasks of a paper's 1k figures (Kumar et al. 2016, Table 1), in %."""
    return statistics.fmean(PAPER_ACCURACY_1K[paper].values())


def row_accuracies(stored: dict) -> dict[str, list[float]]:
    """{label: accuracy % of tasks 1..20}: each stored row's mean over its seeds, then the DMN paper's."""
    rows = stored.get("rows") or {}
    table = {ROWS[name]: [100 * rows[name]["per_task"][str(t)]["mean"] for t in TASKS] for name in ROWS if name in rows}
    table["DMN paper"] = [PAPER_ACCURACY_1K["DMN"][t] for t in TASKS]
    return table


def tasks_under_paper(stored: dict, points: float = 3.0) -> str:
    """Per row, the tasks more than ``points`` under the DMN paper's figure (what a per-task chart shows)."""
    table = row_accuracies(stored)
    paper = table.pop("DMN paper")
    lines = [f"tasks more than {points:g} points under the DMN paper (Kumar et al. 2016, Table 1):"]
    for label, acc in table.items():
        under = [str(t) for t, a, p in zip(TASKS, acc, paper) if a < p - points]
        lines.append(f"  {label:<9}{', '.join(under) if under else '(none)'}")
    return "\n".join(lines)


def gap_to_paper(stored: dict, row: str = "dmn", focus=(2, 3)) -> str:
    """How far a row is under the DMN paper's mean, and how much of it the ``focus`` tasks make: the gap in
    task-points (the paper's figure minus the row's, summed over the 20 tasks) and the focus tasks' share."""
    r = stored["rows"][row]
    ours = {t: 100 * r["per_task"][str(t)]["mean"] for t in TASKS}
    paper = PAPER_ACCURACY_1K["DMN"]
    total = sum(paper[t] - ours[t] for t in TASKS)
    part = sum(paper[t] - ours[t] for t in focus)
    names = " and ".join(map(str, focus))
    return "\n".join([
        f"{r['name']}: {100 * r['mean']:.1f}% over the 20 tasks; the DMN paper {paper_mean():.1f}%: "
        f"{round(paper_mean(), 1) - round(100 * r['mean'], 1):.1f} points under",
        f"task-points under the paper (its figure minus ours, summed over the 20 tasks): {total:.0f}",
        f"of which tasks {names}: {part:.0f}",
        *(f"  task {t:>2} {TASK_NAMES[t].split('_', 1)[1]:<26} ours {ours[t]:5.1f}%  paper {paper[t]:5.1f}%"
          for t in focus)])


def _per_pass(row: dict, task: int) -> list[float]:
    """The mean over the seeds of each pass's supporting-fact accuracy on the test, in %."""
    runs = [row["runs"][str(task)][str(s)] for s in row["seeds"]]
    passes = [run.get("supporting_fact_accuracy_per_pass", []) for run in runs]
    return [100 * statistics.fmean(p[i] for p in passes) for i in range(min(map(len, passes)))]


def pass_readings(stored: dict, tasks=(2, 3, 5, 6, 9, 10)) -> str:
    """How often each pass's top gate is on that pass's supporting fact on the test (mean over seeds, %), per
    row, for ``tasks`` (the last pass: on any of the facts left over for it)."""
    rows = stored["rows"]
    lines = ["top gate on its supporting fact, per pass, % of test questions (mean over seeds 0, 1, 2)",
             f"{'task':<32}" + "".join(f"{ROWS[n]:<15}" for n in ROWS if n in rows)]
    for t in tasks:
        cells = [" ".join(f"{a:.0f}" for a in _per_pass(rows[n], t)) for n in ROWS if n in rows]
        lines.append(f"{t:>4}  {TASK_NAMES[t].split('_', 1)[1]:<26}" + "".join(f"{c:<15}" for c in cells))
    return "\n".join(lines)


def first_pass_range(stored: dict, row: str, tasks=(2, 3)) -> tuple[float, float]:
    """(lowest, highest) over ``tasks`` of the first pass's supporting-fact accuracy, % (mean over seeds)."""
    firsts = [_per_pass(stored["rows"][row], t)[0] for t in tasks]
    return min(firsts), max(firsts)


def seeds_of_task(stored: dict, task: int = 19, replay: dict | None = None) -> str:
    """A task's test accuracy seed by seed: each protocol row's, then the older ``babi-1k`` table's with each of
    its trainings (the held-out accuracy of the kept epoch, that epoch, the epochs trained, the L2 value), and,
    from ``replay`` (``results/babi_ceiling_replay.json``), the epoch at which a seed first reached 100% on its
    held-out stories."""
    t = str(task)
    lines = [f"task {task} ({TASK_NAMES[task].split('_', 1)[1]}), test accuracy % by seed"]
    for name, label in ROWS.items():
        row = (stored.get("rows") or {}).get(name)
        if row:
            seeds = row["per_task"][t]["per_seed"]
            lines.append(f"  {row['name']:<58}" + ", ".join(f"{100 * seeds[str(s)]:.1f}" for s in row["seeds"]))
    older = stored["per_task_per_seed"][t]
    lines.append(f"  {'the older babi-1k table (settings partly tuned on test)':<58}"
                 + ", ".join(f"{100 * a:.1f}" for a in older.values()))
    lines.append("the older table's trainings (test %, held-out % at the kept epoch, kept epoch / epochs, L2):")
    first_full = {r["run"]: r["stopped_at_ceiling"] for r in (replay or {}).get("runs", []) if r["best"] >= 1.0}
    for seed, run in stored["runs"][t].items():
        for k, tr in enumerate(run["tries"]):
            kept = " (kept)" if len(run["tries"]) > 1 and tr["val_accuracy"] == run["val_accuracy"] else ""
            reached = first_full.get(f"seed{seed}/task{task:02d}") if k == 0 else None
            lines.append(f"  seed {seed}{' retry' if k else '      '}  test {100 * tr['accuracy']:5.1f}  held-out "
                         f"{100 * tr['val_accuracy']:5.1f}  epoch {tr['best_epoch']:>3} / {tr['epochs']:>3}  "
                         f"L2 {tr['weight_decay']:g}{kept}"
                         + (f"; first 100% held-out at epoch {reached}" if reached else ""))
        lines.append(f"  seed {seed}        top gate on its supporting fact: {100 * run['supporting_fact_accuracy']:.1f}% "
                     "of the test's passes")
    return "\n".join(lines)
