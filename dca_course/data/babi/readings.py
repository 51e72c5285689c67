"""Readings of the stored bAbI results: what ``results/babi_real_1k.json`` says, as notebook 03b prints it.

The stored file holds these (``experiments/babi_real.py`` and ``experiments/babi_rows.py`` write them):

* ``rows``: the three rows of ``results/babi_protocol.md`` (``dmn``, ``dmn+``, ``dmn+ext``), each trained on seeds
  0, 1 and 2 with its settings chosen on held-out stories; per task, ``mean`` and ``per_seed`` accuracies, and per
  task and seed the training's ``runs`` entry (epochs, held-out accuracy, how often each pass's top gate found its
  supporting fact on the test);
* ``replaced_rows``: per row name, the rows it replaced when it trained again under a later protocol version
  (:func:`row_beside_replaced`);
* the older single table of the ``babi-1k`` profile (``per_task``, ``per_task_per_seed``, ``runs``): DMN+ with the
  course's additions, whose settings were chosen partly while looking at test figures.

Two more files are read where named: ``results/babi_selection.json`` (the rows' searches on held-out stories,
:func:`gate_training_table`) and ``results/dmn_diagnosis.json`` (the ``dmn`` row's diagnosis, :func:`diagnosis_lines`).

Every function returns text (or plain numbers for a chart): the stored figures, the same on every machine.
Notebooks 03, 03b and 08 print them, from a clone's ``results/`` or the wheel's copy on Colab.  What the
experiment computes (a row's summary, the time of its longest seed) ``experiments/babi_rows.py`` stores in
the row; these functions only read it.
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


# -- the protocol's rows (results/babi_protocol.md) -------------------------------------------------------
def rows_table(stored: dict, without=(17, 19)) -> str:
    """The rows of ``results/babi_protocol.md`` (``stored["rows"]``, written by
    ``experiments/babi_rows.py``: one model per row, settings chosen on held-out stories only)
    beside the papers' 1k figures (Kumar et al. 2016, Table 1): the mean over the tasks, the mean
    without ``without``, the tasks at >= 95%, the hours of one-thread training the row's final
    models took (``train_seconds``; the row's ``provenance`` names the machine) and the minutes its
    longest seed takes on two workers (``longest_seed_minutes_2_workers``, which ``babi_rows.py``
    computes from the trainings' times).  Says so plainly when no row has been run."""
    rows = stored.get("rows") or {}
    left_out = ", ".join(map(str, without))
    seeds = {", ".join(map(str, r["seeds"])) for r in rows.values()}
    # the seeds once, in the header, when every row has the same (so that a line fits 120 characters)
    labels = {name: r["name"] + ("" if len(seeds) == 1 else f" (seeds {', '.join(map(str, r['seeds']))})")
              for name, r in rows.items()}
    w = max([48, *(len(label) + 2 for label in labels.values())])
    lines = [f"{f'seeds {seeds.pop()}' if len(seeds) == 1 else '':<{w}}{'mean %':>8}{f'without {left_out}':>16}"
             f"{'tasks >= 95%':>14}{'train h':>9}{'min/seed, 2 cores':>19}"]
    for name in ("dmn", "dmn+", "dmn+ext"):
        if name in rows:
            r = rows[name]
            lines.append(f"{labels[name]:<{w}}{100 * r['mean']:>8.1f}{100 * r['mean_without_17_19']:>16.1f}"
                         f"{r['tasks_at_95']:>9} of {len(r['per_task'])}{r['train_seconds'] / 3600:>9.1f}"
                         f"{r['longest_seed_minutes_2_workers']:>19.0f}")
        else:
            lines.append(f"{name + ': not run yet (results/babi_protocol.md)':<{w}}{'-':>8}{'-':>16}{'-':>14}"
                         f"{'-':>9}{'-':>19}")
    for paper, label in (("DMN", "DMN paper (Kumar et al. 2016, Table 1)"), ("MemNN", "MemNN (in the DMN paper's Table 1)")):
        acc = PAPER_ACCURACY_1K[paper]
        rest = [a for t, a in acc.items() if t not in without]
        lines.append(f"{label:<{w}}{sum(acc.values()) / len(acc):>8.1f}{sum(rest) / len(rest):>16.1f}"
                     f"{sum(a >= 95 for a in acc.values()):>9} of {len(acc)}{'-':>9}{'-':>19}")
    return "\n".join(lines)


#: The protocol's steps from the DMN paper's model to this course's, and what each one adds.
ROW_STEPS = (("dmn", "dmn+", "DMN -> DMN+ (input fusion, softmax attention, ReLU update)"),
                  ("dmn+", "dmn+ext", "DMN+ -> + time features, word match, renamed stories"))


def row_steps(stored: dict, top: int = 3) -> str:
    """What each step between the rows of ``results/babi_protocol.md`` buys (:data:`ROW_STEPS`):
    the change in the mean over the tasks, the same change seed by seed (each seed's mean of the
    later row minus the same seed's of the earlier: every row trains seeds 0, 1 and 2, so a gain on
    every seed is one that survives a change of seed), and the ``top`` tasks whose mean over the
    seeds changes most.  A step whose rows have not both run says so."""
    rows = stored.get("rows") or {}
    lines = [f"{'step':<60}{'mean':>7}  {'per seed':<22}tasks changed most (points)"]
    for before, after, label in ROW_STEPS:
        if before not in rows or after not in rows:
            lines.append(f"{label:<60}{'-':>7}  not run yet: {', '.join(r for r in (before, after) if r not in rows)}")
            continue
        a, b = rows[before], rows[after]
        seeds = [str(s) for s in a["seeds"] if s in b["seeds"]]
        tasks = sorted(set(a["per_task"]) & set(b["per_task"]), key=int)

        def seed_mean(row, s):
            return statistics.fmean(row["per_task"][t]["per_seed"][s] for t in tasks)

        per_seed = [100 * (seed_mean(b, s) - seed_mean(a, s)) for s in seeds]
        gain = {t: 100 * (b["per_task"][t]["mean"] - a["per_task"][t]["mean"]) for t in tasks}
        most = sorted(tasks, key=lambda t: (-abs(gain[t]), int(t)))[:top]
        change = 100 * (statistics.fmean(b["per_task"][t]["mean"] for t in tasks)
                        - statistics.fmean(a["per_task"][t]["mean"] for t in tasks))
        lines.append(f"{label:<60}{change:>+7.1f}  {', '.join(f'{g:+.1f}' for g in per_seed):<22}"
                     + ", ".join(f"{t} ({gain[t]:+.1f})" for t in most))
    return "\n".join(lines)


def row_losses(stored: dict, row: str, below: float = 0.95) -> str:
    """Where a row of ``results/babi_protocol.md`` loses: each task whose mean over the seeds is
    under ``below``, beside the DMN paper's figure, with how often each pass's top gate picked its
    supporting fact on the test (``supporting_fact_accuracy_per_pass``, the mean over the seeds; the
    last pass of a question with more supporting facts than passes: any of the facts left over).
    A pass that finds its fact and an answer still wrong point at the answer module; a pass that
    misses it, at the gate."""
    r = (stored.get("rows") or {}).get(row)
    if r is None:
        return f"{row}: not run yet (results/babi_protocol.md)"
    lines = [f"{r['name']}: tasks under {100 * below:.0f}% (mean over seeds {', '.join(map(str, r['seeds']))})",
             f"{'task':>4}  {'':<24}{'ours %':>14}{'paper':>7}  supporting fact found, per pass %"]
    for t, v in sorted(r["per_task"].items(), key=lambda kv: int(kv[0])):
        if round(v["mean"], 9) >= below:
            continue
        runs = [r["runs"][t][str(s)] for s in r["seeds"]]
        passes = [res.get("supporting_fact_accuracy_per_pass", []) for res in runs]
        per_pass = [statistics.fmean(p[i] for p in passes) for i in range(min(map(len, passes)))]
        ours = f"{100 * v['mean']:.1f} ± {100 * v['sd']:.1f}"
        lines.append(f"{int(t):>4}  {TASK_NAMES[int(t)][:24]:<24}{ours:>14}{PAPER_ACCURACY_1K['DMN'][int(t)]:>7.1f}  "
                     + " ".join(f"{100 * a:.0f}" for a in per_pass))
    if len(lines) == 2:
        lines.append("      (none)")
    return "\n".join(lines)


def row_by_seed(row: dict, below: float = 0.95) -> str:
    """A stored row of ``results/babi_protocol.md`` task by task and seed by seed: the test accuracy of
    each seed (``*`` under ``below``), the held-out accuracy of the kept model, and the trainings each
    seed took (1; 2 with the retry at a smaller L2; more with the restarts from other initial weights),
    then how many tasks are at ``below`` or more on every seed, and what the restarts cost."""
    seeds = row["seeds"]
    head = "  ".join(f"seed {s:>2}" for s in seeds)
    lines = [f"{row['name']}: test % by seed (* under {100 * below:.0f}%)",
             f"{'task':>4}  {'':<24}  {head}  {'mean':>6}  {'held-out %':<{4 * len(seeds) + 1}} trainings"]
    solved = 0
    for t in sorted(row["per_task"], key=int):
        runs = [row["runs"][t][str(s)] for s in seeds]
        solved += all(round(r["accuracy"], 9) >= below for r in runs)
        tests = "  ".join(f"{100 * r['accuracy']:6.1f}{'*' if round(r['accuracy'], 9) < below else ' '}"
                          for r in runs)
        held = " ".join(f"{100 * r['val_accuracy']:3.0f}" for r in runs)
        tries = " ".join(str(len(r.get("tries", [None]))) for r in runs)
        lines.append(f"{int(t):>4}  {TASK_NAMES[int(t)][:24]:<24}  {tests} {100 * row['per_task'][t]['mean']:6.1f}  "
                     f"{held:<{4 * len(seeds) + 1}} {tries}")
    lines.append(f"tasks at {100 * below:.0f}% or more on every seed: {solved} of {len(row['per_task'])}; "
                 f"mean {100 * row['mean']:.1f}%")
    cost = row.get("restarts")
    if cost:
        lines.append(f"restarts (at most {cost['allowed_per_run']} a run under 95% held-out): runs restarted "
                     f"{cost['runs_restarted']}, trainings {cost['trainings']}, {cost['train_seconds'] / 3600:.1f} h of "
                     f"one thread, kept {cost['kept_from_a_restart']}")
    return "\n".join(lines)


def _point_words(settings: dict) -> str:
    """A row's chosen settings in a few words (the protocol's grid, and version 5's two for the ``dmn`` row)."""
    words = [f"lr {settings['lr']:g}", f"L2 {settings['weight_decay']:g}" if settings["weight_decay"] else "no L2",
             f"dropout {settings['dropout']:g}" if settings["dropout"] else "no dropout"]
    if "gate_loss" in settings:
        words.append(f"gate loss {settings['gate_loss']}")
    if "dmn_init" in settings:
        words.append(f"{settings['dmn_init']} initialisation")
    if settings.get("rename_entities"):
        words.append("renamed stories")
    return ", ".join(words)


def row_beside_replaced(stored: dict, row: str = "dmn") -> str:
    """A row trained again under a later protocol version beside the one it replaced (``stored["replaced_rows"]``,
    the latest) and the DMN paper, task by task: each row's test accuracy, mean ± sd over its seeds, and the new
    row minus the old one, with the paired difference of the 20 tasks' mean seed by seed.  Says so when the row
    has replaced none."""
    earlier = (stored.get("replaced_rows") or {}).get(row)
    if not earlier:
        return f"{row}: no earlier row of this name was replaced"
    new, old = stored["rows"][row], earlier[-1]
    paper = PAPER_ACCURACY_1K["DMN"]

    def cell(r, t):
        values = [100 * r["per_task"][t]["per_seed"][str(s)] for s in r["seeds"]]
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.fmean(values):5.1f} ± {sd:4.1f}"

    def restarts(r):
        allowed = (r.get("restarts") or {}).get("allowed_per_run", 0)
        return f", at most {allowed} restarts a run" if allowed else ""

    lines = [f"{r_name}: {_point_words(r['settings'])}{restarts(r)}; commit {r['provenance']['commit'][:7]}"
             for r_name, r in (("now   ", new), ("before", old))]
    lines.append(f"test %, mean ± sd over seeds {', '.join(map(str, new['seeds']))} (now) and "
                 f"{', '.join(map(str, old['seeds']))} (before); the DMN paper's figure")
    lines.append(f"{'task':>4}  {'':<24}  {'now':>12}  {'before':>12}  {'now - before':>12}  {'paper':>5}")
    for t in sorted(new["per_task"], key=int):
        gain = 100 * (new["per_task"][t]["mean"] - old["per_task"][t]["mean"])
        lines.append(f"{int(t):>4}  {TASK_NAMES[int(t)][:24]:<24}  {cell(new, t)}  {cell(old, t)}  {gain:>+12.1f}  "
                     f"{paper[int(t)]:5.1f}")
    seeds = [s for s in new["seeds"] if s in old["seeds"]]

    def seed_mean(r, s):
        return statistics.fmean(r["per_task"][t]["per_seed"][str(s)] for t in new["per_task"])

    per_seed = [100 * (seed_mean(new, s) - seed_mean(old, s)) for s in seeds]
    lines.append(f"{'mean':>4}  {'':<24}  {100 * new['mean']:12.1f}  {100 * old['mean']:12.1f}  "
                 f"{100 * (new['mean'] - old['mean']):>+12.1f}  {paper_mean():5.1f}")
    lines.append(f"now - before, seed by seed ({', '.join(map(str, seeds))}): "
                 + ", ".join(f"{d:+.1f}" for d in per_seed))
    return "\n".join(lines)


def gate_training_table(selection: dict, row: str = "dmn", tasks=(2, 3)) -> str:
    """The last step of a row's search (``results/babi_selection.json``, protocol version 5): how the gates are
    trained (``gate_loss``: a binary cross-entropy per fact, or a cross-entropy over the pass's facts) crossed with
    how the weights start (``dmn_init``: PyTorch's defaults, or Xavier-uniform), every other setting at the choice.
    Held-out accuracy only, on seed 0: the mean over the 20 tasks and on ``tasks``; the chosen point is starred."""
    search = selection[row]
    chosen = search["chosen"]
    step = search["steps"][-1]
    if set(step["setting"].split("+")) != {"gate_loss", "dmn_init"}:
        raise ValueError(f"the last step of {row!r} does not cross gate_loss with dmn_init: {step['setting']!r}")
    points = [p for p in search["points"] if p["point"]["max_passes"] == chosen["max_passes"]
              and all(p["point"][k] == v for k, v in chosen.items() if k not in ("gate_loss", "dmn_init"))]
    head = "  ".join(f"task {t:>2}" for t in tasks)
    lines = [f"{row} row, held-out % on seed 0 (cap {chosen['max_passes']} passes; every other setting at the choice)",
             f"{'gate loss':<9}  {'initialisation':<14}  {'20 tasks':>8}  {head}"]
    for p in sorted(points, key=lambda p: (p["point"]["gate_loss"], p["point"]["dmn_init"])):
        star = "*" if p["point"] == chosen else " "
        per = "  ".join(f"{100 * p['held_out_per_task'][str(t)]:7.1f}" for t in tasks)
        lines.append(f"{p['point']['gate_loss']:<9}  {p['point']['dmn_init']:<14}  {100 * p['held_out_mean']:7.2f}{star}  "
                     f"{per}")
    return "\n".join(lines)


def diagnosis_lines(diagnosis: dict, arms=("D1", "D7", "D1+D7"), tasks=(2, 3)) -> str:
    """The ``dmn`` row's diagnosis (``results/dmn_diagnosis.json``, held-out stories, seeds 0-2): for each arm
    and task, the held-out accuracy and each pass's hits minus the base's, paired by seed, ± one standard error,
    and whether the accuracy's difference lies beyond two standard errors (the course's rule)."""
    seeds = ", ".join(map(str, diagnosis["seeds"]))
    lines = [f"held-out stories, seeds {seeds}; each arm minus the base at its point, ± one standard error"]
    for arm in arms:
        lines.append(f"{arm}: {diagnosis['arms'][arm]['change']}")
        for t in tasks:
            d = diagnosis["table"][arm][str(t)]["minus_base"]
            acc = d["held_out_accuracy"]
            beyond = "beyond two standard errors" if abs(acc["mean"]) > 2 * acc["se"] else "not distinguishable"
            hits = " / ".join(f"{100 * h['mean']:+.1f} ± {100 * h['se']:.1f}" for h in d["per_pass_hits"])
            lines.append(f"  task {t}: accuracy {100 * acc['mean']:+.1f} ± {100 * acc['se']:.1f} points ({beyond}); "
                         f"hits per pass {hits}")
    return "\n".join(lines)


# -- the older babi-1k table --------------------------------------------------------------------------
def results_table(stored: dict) -> str:
    """The per-task table of a stored ``experiments/babi_real.py`` result beside the papers' figures
    (Kumar et al. 2016, Table 1: the DMN and MemNN on the 1k tasks), with its mean and pass count.
    Stored results are data, printed plainly: the same text on every machine."""
    dmn, memnn = PAPER_ACCURACY_1K["DMN"], PAPER_ACCURACY_1K["MemNN"]
    spread = stored.get("per_task_per_seed", {})
    lines = [f"{'task':>4}  {'':<26}{'ours %':>14}{'DMN paper':>11}{'MemNN':>7}{'sup. facts %':>14}"]
    for t in sorted(stored["per_task"], key=int):
        seeds = list(spread.get(t, {}).values())
        ours = f"{100 * stored['per_task'][t]:.1f}"
        if len(seeds) > 1:
            ours += f" ± {100 * statistics.stdev(seeds):.1f}"
        flag = " *" if 100 * stored["per_task"][t] < dmn[int(t)] - 3 else ""
        lines.append(f"{t:>4}  {TASK_NAMES[int(t)].split('_', 1)[1]:<26}{ours:>14}{dmn[int(t)]:>11.1f}"
                     f"{memnn[int(t)]:>7.0f}{100 * stored['supporting_fact_accuracy'][t]:>14.1f}{flag}")
    mean_dmn = sum(dmn.values()) / len(dmn)
    mean_memnn = sum(memnn.values()) / len(memnn)
    at_95 = sum(a >= 0.95 for a in stored["per_task"].values())
    lines.append(f"{'mean':>4}  {'':<26}{100 * stored['mean_accuracy']:>14.1f}{mean_dmn:>11.1f}{mean_memnn:>7.1f}")
    lines.append(f"tasks at >= 95%: {at_95} of {len(stored['per_task'])}; * more than 3 points under the DMN paper")
    return "\n".join(lines)


def lead_summary(stored: dict, without=(17, 19)) -> str:
    """Where a stored bAbI result's lead over the DMN paper comes from: the mean over all tasks, the
    mean without ``without`` (the relational tasks where the paper's DMN is weakest) and the tasks
    at >= 95%, for the stored model and for Kumar et al.'s DMN (Table 1)."""
    ours = {int(t): 100 * a for t, a in stored["per_task"].items()}
    paper = {int(t): a for t, a in PAPER_ACCURACY_1K["DMN"].items()}
    left_out = ", ".join(map(str, without))
    lines = [f"{'':<24}{'mean %':>8}{f'without {left_out}':>16}{'tasks >= 95%':>14}"]
    for name, acc in (("stored model", ours), ("DMN paper (Kumar et al.)", paper)):
        rest = [a for t, a in acc.items() if t not in without]
        lines.append(f"{name:<24}{sum(acc.values()) / len(acc):>8.1f}{sum(rest) / len(rest):>16.1f}"
                     f"{sum(a >= 95 for a in acc.values()):>9} of {len(acc)}")
    return "\n".join(lines)
