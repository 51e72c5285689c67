"""The three rows of ``results/babi_protocol.md`` on the real bAbI 1k tasks: the DMN as Kumar et al.
(2016) describe it, DMN+ as Xiong et al. (2016) describe it, and DMN+ with this course's two
extensions, each with the settings the papers leave open chosen on held-out training stories only.

    python experiments/babi_rows.py ../shared/data/babi select --row dmn             # seed 0, the search
    python experiments/babi_rows.py ../shared/data/babi final --row dmn --seeds 0,1,2  # the chosen point, on the test

``select`` searches the protocol's grid on seed 0, one setting at a time (``SEARCH``, the
protocol's version 4): each step trains every value of one setting, under both caps on passes,
with the other settings at the choice so far, and keeps the point with the best mean held-out
accuracy over the 20 tasks (ties, within 0.2 points, go to the smaller values: the earlier in each
list of ``GRID``); for the ``dmn`` row, version 5 adds one last step that tries ``ROW_GRID``'s two
settings together (the gate loss's form and the initialisation).  Each point trains on 90% of each task's training stories and is scored on the
other 10% only: the test split is dropped as soon as the data is read, so no test figure can enter
the choice.  A selection training stops at the epoch its held-out accuracy first reaches 100%
(``SELECT_ONLY``): its figure cannot change after that.  ``results/babi_selection.json`` holds
every trained point's held-out figures, the steps and the choice.

``final`` trains the chosen point on ``--seeds`` (a task whose held-out accuracy stays under 95%
trains again with the next smaller L2 value of the grid and keeps the better model on the held-out
stories: ``babi_real.py``'s retry; with ``--restarts K``, a task still under 95% held out trains
again from other initial weights, up to K times, on the same held-out stories, and the best held-out
model is kept), scores each model once on the test, and writes the row into the
``rows`` object of ``results/babi_real_1k.json``: ``mean``, ``mean_without_17_19``,
``tasks_at_95``, ``per_task`` (mean and sd over the seeds), ``seeds``, the time and the provenance.

``rescore`` trains a row's stored runs of some tasks and seeds again, exactly as ``final`` trains
them (the row's stored settings and retry), and scores them with today's ``evaluate_dmn``: where a
run's answer accuracy reproduces the stored one exactly, only its supporting-fact figures are
replaced, and the stored ones are kept beside them (``BEFORE_RESCORING``); where it does not, the new
run replaces the stored one whole (which is kept as ``replaced_run``) and the row's summary is
computed again.  The row's ``rescoring`` records what was done, run by run, with its provenance.

    python experiments/babi_rows.py ../shared/data/babi rescore --row dmn --tasks 7,8 --seeds 0,1,2 --jobs 1

``summarise`` computes a stored row's summary again from its runs, training nothing (after the
summary gains a figure).

``cure`` decides whether ``intervening_facts`` joins the ``dmn+ext`` row: the rule of the
protocol's version 3, on held-out training stories only.  At the grid point of the earlier
``babi-1k`` model (``CURE_POINT``) it trains ``dmn+ext`` as version 2 defines it (the base) and with
``--intervening-facts`` (the cure): first task 3 on seeds 0, 1 and 2, both arms, where the cure must
raise task 3's mean held-out accuracy by more than ``CURE_RISE`` (2 points); then, only if it does,
the 20 tasks on seed 0, both arms, where the cure's mean held-out accuracy must not fall by more than
the tie.  It writes ``results/babi_cure.json``.  The base arm's seed-0 trainings sit in ``select``'s
folders, which read them back.

    python experiments/babi_rows.py ../shared/data/babi cure --row dmn+ext --jobs 2

``cures`` judges the protocol's version 6 cures for the ``dmn+ext`` row (``CURES``: ``answer_hidden``
on tasks 7, 17 and 18, ``rename_entities`` on tasks 3 and 18) on held-out training stories only, by
the rule written beside ``decide_cures``; it writes ``results/babi_cures.json``, whose ``joined``
names the cures that ``final --row dmn+ext`` trains with.

    python experiments/babi_rows.py ../shared/data/babi cures --row dmn+ext --jobs 2

Every training keeps its result in its run folder (``result.json``, written atomically, with its
configuration), so a command stopped part way goes on where it stopped when it is run again.
One training is one task of ``python -m dca_course train dmn --data babi:PATH:TASK`` with the row's
settings spelled as flags (``command_for``).
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import fcntl
import hashlib
import inspect
import itertools
import json
import math
import statistics
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import (DMN_CODE, RESULTS, ROOT, code_fingerprint, code_only, command_line, cpu_name,  # noqa: E402,F401
                              git_commit, provenance, repo_path, train_command, write_json, write_result_json)

from dca_course.data.babi import PAPER_ACCURACY_1K  # noqa: E402  (after the path line above)
from dca_course.recipes import DMNConfig  # noqa: E402
from dca_course.recipes.dmn import BABI_CHOSEN, BABI_FIXED, BABI_JOINED_CURES, BABI_ROWS  # noqa: E402

#: The model of each row (the protocol's table; nothing else differs between the rows) and the
#: settings fixed before any run, the same in every row: the recipe's, which its ``babi-ROW``
#: profiles also use.
ROWS = BABI_ROWS
ROW_NAMES = {"dmn": "DMN (Kumar et al. 2016)", "dmn+": "DMN+ (Xiong et al. 2016)",
             "dmn+ext": "DMN+ with time features, word match, renamed stories"}   # version 6: the cure joined
FIXED = BABI_FIXED
#: What the papers leave open, chosen on held-out stories.  Each list starts with the smaller value,
#: which wins a tie.
GRID = {"lr": (1e-3, 3e-3), "weight_decay": (0.0, 3e-4, 1e-3), "dropout": (0.0, 0.1), "max_passes": (3, 5)}
#: The order of ``select``'s steps (version 4): one setting at a time, from the smallest values; the
#: cap on passes is tried at every step (both caps cost two trainings a point: tasks 7 and 8).
SEARCH = ("lr", "weight_decay", "dropout")
#: Version 5: settings that join one row's grid only, searched together in one last step after
#: ``SEARCH`` (the diagnosis found them interacting); each list's first value is the row as it was.
ROW_GRID = {"dmn": {"gate_loss": ("bce", "softmax"), "dmn_init": ("pytorch", "xavier")}}
#: Selection's trainings only (version 4): stop at the epoch the held-out accuracy first reaches 100%.
#: Selection reads only the best held-out accuracy, which cannot change after that; the final
#: trainings go on as ``FIXED`` says (50 epochs after it first got there).
SELECT_ONLY = dict(ceiling_patience=0)
SELECT_CONFIG = {"grid": GRID, "search": SEARCH, "row_grid": ROW_GRID, "select_only": SELECT_ONLY, "fixed": FIXED,
                 "rows": ROWS}
TIE = 0.002                 # held-out means within 0.2 points are a tie
RETRY_BELOW = 0.95
TASKS = [3, 2, 5, 8, 7, 18, 6, 14, 13, 11, 12, 20, 10, 9, 1, 15, 16, 19, 17, 4]   # longest first
SELECTION = RESULTS / "babi_selection.json"
POINTS = RESULTS / "babi_points.json"          # grid points trained one at a time (select --point)
STORED = RESULTS / "babi_real_1k.json"


def grid_for(row: str | None = None) -> dict:
    """``row``'s grid: ``GRID`` and what ``ROW_GRID`` adds for it (``GRID`` alone without a row)."""
    return {**GRID, **ROW_GRID.get(row, {})}


def every_setting() -> dict:
    """``GRID`` and every row's additions: each setting a stored point may hold, in order."""
    return {**GRID, **{k: v for extra in ROW_GRID.values() for k, v in extra.items()}}


def grid_points(row: str | None = None) -> list[dict]:
    """Every point of ``row``'s grid, in its order."""
    grid = grid_for(row)
    return [dict(zip(grid, values)) for values in itertools.product(*grid.values())]


def row_settings(row: str, point: dict) -> dict:
    """The recipe's knobs of ``row`` at ``point``: every knob the row fixes, so that the result
    does not depend on a profile's defaults."""
    if row not in ROWS:
        raise SystemExit(f"babi_rows.py: no row {row!r}; the rows are {', '.join(ROWS)}")
    return {**FIXED, **ROWS[row], **point}


def final_settings(row: str, point: dict) -> dict:
    """What the row's ``final`` trains: :func:`row_settings` and the cures that joined the row by version 6's rule
    (``BABI_JOINED_CURES``, as its ``babi-ROW`` profile holds them)."""
    return {**row_settings(row, point), **BABI_JOINED_CURES.get(row, {})}


def config_for(row: str, point: dict) -> DMNConfig:
    return DMNConfig.from_profile("full", row_settings(row, point))


def command_for(row: str, point: dict, folder: str, task: int, seed: int) -> str:
    """The command line that trains one task of ``row`` at ``point`` (what one training is, the
    test scored at its end)."""
    return command_for_settings(row_settings(row, point), folder, task, seed)


def command_for_settings(settings: dict, folder: str, task: int, seed: int) -> str:
    return train_command("dmn", f"babi:{folder}:{task}", settings, seed)


def point_name(point: dict) -> str:
    return "_".join(f"{k}-{v}" if isinstance(v, str) else f"{k}{v:g}" for k, v in point.items())


def point_words(point: dict, keys) -> str:
    """``k=v`` for each of ``keys`` the point holds: a training's line in the log."""
    return " ".join(f"{k}={point[k]}" if isinstance(point[k], str) else f"{k}={point[k]:g}" for k in keys if k in point)


# -- one training ------------------------------------------------------------------------------------
def _fit(task: int, folder: str, settings: dict, out: Path, seed: int, score_test: bool,
         init_seed: int | None = None) -> dict:
    """Train one task (``DMNRecipe.train_task``'s path) in this process, one thread.  Without
    ``score_test`` the test split is dropped before anything else happens.  ``init_seed`` (a restart):
    the initial weights drawn from it; the held-out stories and the batches' order stay ``seed``'s."""
    import torch

    torch.set_num_threads(1)
    from dca_course import seed_everything
    from dca_course.recipes import DMNRecipe
    from dca_course.registry import load_data

    seed_everything(seed if init_seed is None else init_seed)
    config = DMNConfig.from_profile("full", settings)
    data = load_data(f"babi:{folder}:{task}", config.data_profile, seed)
    if not score_test:
        data = dataclasses.replace(data, test=[])           # selection never sees the test
    recipe = DMNRecipe(config)
    started = time.perf_counter()
    if score_test:
        result = recipe.train(data, torch.device("cpu"), out, seed=seed, progress=False, resume=False)
    else:
        recipe.check_data(data)
        _, _, history, seconds = recipe.fit_model(data, torch.device("cpu"), out, seed=seed, progress=False,
                                                  resume=False, log=None)
        result = dict(val_accuracy=history.best.get("val_accuracy"), best_epoch=history.best.get("epoch"),
                      val_answer_loss=at_best(history, "val_answer_loss"), epochs=len(history.epochs),
                      train_seconds=round(seconds, 1))
    result.update(wall_seconds=round(time.perf_counter() - started, 1), weight_decay=config.weight_decay)
    if init_seed is not None:
        result["init_seed"] = init_seed
    return result


def at_best(history, key: str):
    """``key`` of the kept epoch's row of ``history`` (None where that epoch did not record it)."""
    row = next((r for r in history.epochs if r.get("epoch") == history.best.get("epoch")), {})
    return row.get(key)


MEASURED = ["experiments/babi_rows.py", *DMN_CODE]
#: Code under ``MEASURED`` that no training runs: the stored rows' text (notebooks 03b and 08 print it).
NOT_TRAINED = ["dca_course/data/babi/readings.py"]


def measured_code() -> str:
    """A fingerprint of the code a training runs: the DMN's (``DMN_CODE`` without ``NOT_TRAINED``,
    every Python file as code; :func:`~tools.provenance.code_fingerprint`) and this script's two
    functions that train (:func:`_fit`, :func:`train_kept`).  A run folder's result is read back only
    under the same code, so that a row never mixes trainings of two versions of the model, however
    many sessions it takes; the tables and text that read the results may change without training again."""
    own = "".join(code_only(textwrap.dedent(inspect.getsource(f))) for f in TRAINS)
    return hashlib.sha256((code_fingerprint(DMN_CODE, leave_out=NOT_TRAINED) + own).encode()).hexdigest()[:16]




#: A restart draws the initial weights from ``seed + RESTART_STRIDE * k`` (k = 1, 2, ...): seeds no
#: row trains on, whatever its ``--seeds``.
RESTART_STRIDE = 1000


def train_kept(task: int, folder: str, settings: dict, out: Path, seed: int, score_test: bool,
               retry_weight_decay: float | None = None, restarts: int = 0) -> dict:
    """One task and seed, resumed: a finished training's ``result.json`` with the same settings, the
    same restarts and the same code (:data:`CODE`) is read back instead of training again.  With
    ``retry_weight_decay``, a model under 95% on the held-out stories trains again with it.  Then,
    while the best model is still under 95% held out, up to ``restarts`` more trainings at the row's
    settings from other initial weights (``init_seed``; the same held-out stories).  The best
    model on the held-out stories is kept (the first on a tie): held-out evidence alone."""
    done, code = out / "result.json", CODE
    if done.is_file():
        stored = json.loads(done.read_text())
        if stored.get("settings") == settings and stored.get("score_test") == score_test \
                and stored.get("code") == code and stored.get("restarts", 0) == restarts:
            return stored["result"]
    held = lambda r: r["val_accuracy"] or 0.0       # noqa: E731
    first = _fit(task, folder, settings, out / "first", seed, score_test)
    tries = [first]
    if retry_weight_decay is not None and held(first) < RETRY_BELOW:
        tries.append(_fit(task, folder, dict(settings, weight_decay=retry_weight_decay), out / "retry", seed,
                          score_test))
    for k in range(1, restarts + 1):
        if max(map(held, tries)) >= RETRY_BELOW:
            break
        tries.append(_fit(task, folder, settings, out / f"restart{k}", seed, score_test,
                          init_seed=seed + RESTART_STRIDE * k))
    kept = dict(max(tries, key=held))               # the first on a tie
    kept.update(train_seconds=round(sum(r["train_seconds"] for r in tries), 1),
                wall_seconds=round(sum(r["wall_seconds"] for r in tries), 1),
                tries=[{k: r.get(k) for k in ("weight_decay", "init_seed", "val_accuracy", "best_epoch", "epochs",
                                              "train_seconds") if k in r} for r in tries])
    commit, dirty = COMMIT
    write_json(done, {"settings": settings, "score_test": score_test, "restarts": restarts, "result": kept, "code": code,
                      "commit": commit, "uncommitted_changes": dirty,
                      "command": command_for_settings(settings, repo_path(folder), task, seed), "cpu": cpu_name()})
    return kept


#: The code this process runs, read once when the script starts: a file changed during a run does not
#: change what the run's workers (forked from this process) execute, nor what their results record.
TRAINS = (_fit, train_kept, at_best)      # the functions that train, as this file defines them
CODE = measured_code()
COMMIT = git_commit()


def _run_all(jobs: list[tuple], n_jobs: int, label) -> list[dict]:
    """``train_kept(*job)`` for every job, ``n_jobs`` at once; one line per finished training."""
    results = [None] * len(jobs)
    if n_jobs == 1:                  # in this process, one after another
        for k, job in enumerate(jobs):
            results[k] = train_kept(*job)
            print(label(job, results[k]), file=sys.stderr, flush=True)
        return results
    with ProcessPoolExecutor(max_workers=n_jobs) as pool:
        futures = {pool.submit(train_kept, *job): k for k, job in enumerate(jobs)}
        for fut in as_completed(futures):
            k = futures[fut]
            results[k] = fut.result()
            print(label(jobs[k], results[k]), file=sys.stderr, flush=True)
    return results


# -- selection on held-out stories -------------------------------------------------------------------
def choose(points: list[dict]) -> dict:
    """The point with the best ``held_out_mean``; a point within ``TIE`` of the best that has
    smaller values (earlier in each list of ``GRID``) wins the tie."""
    best = max(p["held_out_mean"] for p in points)
    tied = [p for p in points if p["held_out_mean"] >= best - TIE - 1e-12]
    grid = every_setting()
    return min(tied, key=lambda p: tuple(grid[k].index(p["point"][k]) for k in grid if k in p["point"]))


def passes_needed(folder: str, task: int) -> int:
    """The supporting facts of the task's most demanding training question: with ``--passes 0``
    the model makes ``min(max_passes, this)`` passes (``DMNRecipe.model_for``)."""
    from dca_course.registry import load_data

    data = load_data(f"babi:{folder}:{task}", DMNConfig.from_profile("full").data_profile, 0)
    return max(len(ex.supporting) for ex in data.train)


def effective_point(point: dict, needed: int) -> dict:
    """``point`` with its cap on passes lowered to what the task can use: two caps at or above
    the task's need train the same model (same passes, same parameters, same random draws), so
    the grid trains it once.  Only tasks 7 and 8 need more than 3 passes."""
    return dict(point, max_passes=min(point["max_passes"], needed))


def parse_point(text: str, row: str | None = None) -> dict:
    """``lr=0.003,weight_decay=0.001,dropout=0.1,max_passes=5`` (and for the ``dmn`` row
    ``gate_loss=bce,dmn_init=pytorch``) as a point of ``row``'s grid (an error names what is not on it)."""
    grid = grid_for(row)
    try:
        given = dict(part.split("=", 1) for part in text.split(","))
        point = {k: given.pop(k) if isinstance(grid[k][0], str) else type(grid[k][0])(float(given.pop(k)))
                 for k in grid}
    except (KeyError, ValueError) as err:
        raise SystemExit(f"babi_rows.py: --point {text!r}: give every setting of the grid, "
                         f"{', '.join(f'{k}=VALUE' for k in grid)} ({err})")
    if given or point not in grid_points(row):
        raise SystemExit(f"babi_rows.py: --point {text!r} is not a point of the grid {grid}")
    return point


def select(folder: str, row: str, runs: Path, n_jobs: int, tasks=TASKS, needed: dict | None = None,
           points: list[dict] | None = None) -> dict:
    """Without ``points``, the protocol's search (``SEARCH``): for each setting in turn, every value
    of it under every cap, the other settings at the choice so far; each step keeps :func:`choose`'s
    point.  With ``points``, those points only (``--point``).  Seed 0, held-out stories only."""
    needed = needed or {t: passes_needed(folder, t) for t in tasks}
    if points is not None:
        scored = train_points(folder, row, runs, n_jobs, tasks, needed, points)
        return {"points": scored, "chosen": choose(scored)["point"], "tasks": list(tasks), "seed": 0}
    grid = grid_for(row)
    current = {k: values[0] for k, values in grid.items()}
    trained: dict[str, dict] = {}
    steps = []
    extra = tuple(ROW_GRID.get(row, {}))                # version 5: the row's own settings, together, last
    for setting in (*SEARCH, *([extra] if extra else [])):
        keys = setting if isinstance(setting, tuple) else (setting,)
        candidates = [dict(current, **dict(zip(keys, values)), max_passes=cap)
                      for values in itertools.product(*(grid[k] for k in keys)) for cap in grid["max_passes"]]
        scored = train_points(folder, row, runs, n_jobs, tasks, needed, candidates)
        current = choose(scored)["point"]
        steps.append({"setting": "+".join(keys), "points": [point_name(p["point"]) for p in scored],
                      "chosen": dict(current)})
        trained.update({point_name(p["point"]): p for p in scored})
    return {"points": list(trained.values()), "steps": steps, "chosen": current, "tasks": list(tasks), "seed": 0}


def train_points(folder: str, row: str, runs: Path, n_jobs: int, tasks, needed: dict, points: list[dict]) -> list:
    """Each point's held-out figures on seed 0 (one training per task and effective point)."""
    wanted = [(p, t, effective_point(p, needed[t])) for p in points for t in tasks]
    unique: dict[tuple, tuple] = {}          # one training per (task, effective point)
    for _, t, eff in wanted:
        unique.setdefault((t, point_name(eff)), (t, folder, dict(row_settings(row, eff), **SELECT_ONLY),
                                                 runs / row / "select" / point_name(eff) / f"task{t:02d}", 0, False))
    jobs = list(unique.values())
    print(f"{row}: {len(jobs)} trainings for {len(wanted)} (task, grid point) pairs", file=sys.stderr, flush=True)
    done = dict(zip(unique, _run_all(jobs, n_jobs, lambda j, r: f"{row} task {j[0]:>2} "
                                     f"{point_words(j[2], every_setting())}: "
                                     f"held-out {100 * r['val_accuracy']:.1f}%")))
    results = [done[(t, point_name(eff))] for _, t, eff in wanted]
    scored = []
    for k, p in enumerate(points):
        mine = {str(t): results[k * len(tasks) + i] for i, t in enumerate(tasks)}
        per_task = {t: r["val_accuracy"] for t, r in mine.items()}
        scored.append({"point": p, "held_out_mean": round(statistics.fmean(per_task.values()), 4),
                       "held_out_per_task": per_task,
                       "epochs": {t: r["epochs"] for t, r in mine.items()},
                       "train_seconds": round(sum(r["train_seconds"] for r in mine.values()), 1)})
    return scored


# -- the final row -----------------------------------------------------------------------------------
def retry_value(point: dict) -> float | None:
    """The retry's L2 value: the next smaller one of the grid (none below the smallest)."""
    values = GRID["weight_decay"]
    k = values.index(point["weight_decay"])
    return values[k - 1] if k > 0 else None


def pool_wall_seconds(seconds: list[float], workers: int = 2) -> float:
    """The wall time of trainings taking ``seconds`` each when a pool of ``workers`` takes them in
    the order given, each next one going to the first worker free (what ``_run_all``'s process
    pool does): the time the last one ends."""
    free = [0.0] * workers
    for s in seconds:
        k = free.index(min(free))
        free[k] += s
    return max(free)


def longest_seed_minutes(runs: dict, seeds: list[int], workers: int = 2) -> float:
    """The longest seed of a row: the minutes its trainings take on ``workers`` one-thread workers,
    from each training's measured ``train_seconds``, in ``TASKS``' order (tasks not in it after
    it).  A run that ``rescore`` trained again counts with the time of the final command's training
    (its ``replaced_run``), like the row's ``train_seconds``.  The protocol's budget is one seed of
    all tasks in 40 minutes on 2 cores."""
    tasks = [t for t in TASKS if t in runs] + sorted(set(runs) - set(TASKS))
    seconds = lambda run: run.get("replaced_run", run)["train_seconds"]     # noqa: E731
    return max(pool_wall_seconds([seconds(runs[t][s]) for t in tasks], workers) for s in seeds) / 60


def summarise_row(runs: dict, seeds: list[int]) -> dict:
    """``runs`` {task: {seed: result}} as the protocol's row: the mean over tasks of each task's
    mean over seeds, the same without tasks 17 and 19, the tasks at >= 95% on their mean, per
    task the mean and sd over the seeds, and the minutes of the longest seed on two workers."""
    per_task = {}
    for t in sorted(runs):
        acc = [runs[t][s]["accuracy"] for s in seeds]
        per_task[str(t)] = {"mean": round(statistics.fmean(acc), 4),
                            "sd": round(statistics.stdev(acc), 4) if len(acc) > 1 else 0.0,
                            "per_seed": {str(s): round(a, 4) for s, a in zip(seeds, acc)}}
    means = {int(t): v["mean"] for t, v in per_task.items()}
    rest = [m for t, m in means.items() if t not in (17, 19)]
    summary = {"mean": round(statistics.fmean(means.values()), 4),
               "mean_without_17_19": round(statistics.fmean(rest), 4),
               "tasks_at_95": sum(round(m, 9) >= 0.95 for m in means.values()),
               "per_task": per_task, "seeds": list(seeds)}
    if all("train_seconds" in r.get("replaced_run", r) for by_seed in runs.values() for r in by_seed.values()):
        summary["longest_seed_minutes_2_workers"] = round(longest_seed_minutes(runs, seeds), 1)
    return summary


def final(folder: str, row: str, runs: Path, n_jobs: int, seeds: list[int], point: dict, tasks=TASKS,
          restarts: int = 0) -> dict:
    settings = final_settings(row, point)
    retry = retry_value(point)
    jobs = [(t, folder, settings, runs / row / "final" / f"seed{s}" / f"task{t:02d}", s, True, retry, restarts)
            for s in seeds for t in tasks]
    started = time.perf_counter()
    results = _run_all(jobs, n_jobs, lambda j, r: f"{row} task {j[0]:>2} seed {j[4]}: {100 * r['accuracy']:.1f}% "
                       f"(paper {PAPER_ACCURACY_1K['DMN'][j[0]]:.1f}; held-out {100 * r['val_accuracy']:.1f}%)")
    by_task: dict[int, dict[int, dict]] = {}
    for job, r in zip(jobs, results):
        by_task.setdefault(job[0], {})[job[4]] = r
    row_result = summarise_row(by_task, seeds)
    if restarts:
        row_result["restarts"] = restart_cost(results, restarts)
    row_result.update(name=ROW_NAMES[row], settings=settings, retry_weight_decay=retry,
                      train_seconds=round(sum(r["train_seconds"] for r in results), 1),
                      wall_seconds_this_command=round(time.perf_counter() - started, 1), jobs=n_jobs,
                      runs={str(t): {str(s): dict(by_task[t][s], data=f"babi:{repo_path(folder)}:{t}") for s in seeds}
                            for t in sorted(by_task)})     # the data as results name it: never a home folder
    return row_result


def keep_replaced_row(stored: dict, name: str, row: dict) -> None:
    """Before ``row`` takes the place of a stored row trained at other settings or with other restarts
    (a row trained again under a later protocol version), the stored one moves to ``replaced_rows[name]`` (a list, the
    oldest first), so the results keep both side by side."""
    old = (stored.get("rows") or {}).get(name)
    allowed = lambda r: (r.get("restarts") or {}).get("allowed_per_run", 0)     # noqa: E731
    if old is not None and (old.get("settings") != row.get("settings") or allowed(old) != allowed(row)):
        stored.setdefault("replaced_rows", {}).setdefault(name, []).append(old)


def restart_cost(results: list[dict], restarts: int) -> dict:
    """What the restarts took: how many trainings restarted from other initial weights, how many of those
    the kept model came from, and their one-thread training seconds."""
    tried = [t for r in results for t in r.get("tries", []) if "init_seed" in t]
    return {"allowed_per_run": restarts, "trainings": len(tried),
            "runs_restarted": sum(any("init_seed" in t for t in r.get("tries", [])) for r in results),
            "kept_from_a_restart": sum("init_seed" in r for r in results),
            "train_seconds": round(sum(t.get("train_seconds", 0.0) for t in tried), 1)}


# -- what results/babi_protocol.md quotes ---------------------------------------------------------------
def row_sentence(row: dict) -> str:
    """One row of ``results/babi_protocol.md`` in a sentence, the way the protocol's status and
    notebook 08 quote it: the mean over the tasks (and each seed's), the mean without tasks 17 and
    19, the tasks at >= 95% on their mean over the seeds, the one-thread training hours and the
    minutes of its longest seed on two workers."""
    seeds = [str(s) for s in row["seeds"]]
    per_seed = [statistics.fmean(t["per_seed"][s] for t in row["per_task"].values()) for s in seeds]
    return (f"mean {100 * row['mean']:.1f}% over seeds {', '.join(seeds)} "
            f"({', '.join(f'{100 * m:.1f}' for m in per_seed)}), {100 * row['mean_without_17_19']:.1f}% without "
            f"tasks 17 and 19, {row['tasks_at_95']} of the {len(row['per_task'])} tasks at 95% or more on the mean; "
            f"{row['train_seconds'] / 3600:.1f} h of one-thread training, "
            f"{row['longest_seed_minutes_2_workers']:.0f} min for its longest seed on two workers")


#: How a table names the values of ``ROW_GRID``'s settings.
EXTRA_WORDS = {"gate_loss": "gate loss", "dmn_init": "initialisation"}


def selection_rows(selection: dict) -> list[str]:
    """A row's search on held-out stories (``results/babi_selection.json``, one row's entry) as
    markdown table rows ``| step | point | held-out mean % |``: each (lr, L2, dropout) point where
    its step first trained it, with the held-out mean over the tasks at cap 3 and, in brackets, at
    cap 5 (``results/babi_protocol.md`` quotes them)."""
    def words(p):
        l2 = f"L2 {p['weight_decay']:g}" if p["weight_decay"] else "no L2"
        dropout = f"dropout {p['dropout']:g}" if p["dropout"] else "no dropout"
        extra = "".join(f", {p[k]} {EXTRA_WORDS[k]}" for k in EXTRA_WORDS if k in p)
        return f"lr {p['lr']:g}, {l2}, {dropout}{extra}"

    mean = {json.dumps(p["point"], sort_keys=True): p["held_out_mean"] for p in selection["points"]}
    step_name = {"lr": "learning rate", "weight_decay": "L2", "dropout": "dropout",
                 "gate_loss+dmn_init": "gate loss, initialisation"}
    lines, seen = [], set()
    for step in selection["steps"]:
        for name in step["points"]:
            # a stored point's keys are sorted: named in the grid's order, as the steps name them
            point = next(p["point"] for p in selection["points"]
                         if point_name({k: p["point"][k] for k in every_setting() if k in p["point"]}) == name)
            key = words(point)
            if key in seen:
                continue
            seen.add(key)
            caps = [mean[json.dumps(dict(point, max_passes=c), sort_keys=True)] for c in (3, 5)]
            lines.append(f"| {step_name[step['setting']]} | {key} | {100 * caps[0]:.2f} ({100 * caps[1]:.2f}) |")
    return lines


def rescored_rows(stored: dict) -> dict:
    """Per row name, the row that was rescored: the stored row, or, where it trained again after the rescoring
    (scored with today's evaluation from the start, so with no ``rescoring``), the latest replaced row that has one."""
    found = {}
    for name, row in (stored.get("rows") or {}).items():
        earlier = [r for r in (stored.get("replaced_rows") or {}).get(name, []) if "rescoring" in r]
        if "rescoring" in row or earlier:
            found[name] = row if "rescoring" in row else earlier[-1]
    return found


def rescoring_table(stored: dict, tasks=("7", "8")) -> str:
    """Per rescored row, each pass of ``tasks``: how often its top gate found its supporting fact on the
    test (mean over the seeds, %), in the final command's runs scored with one fact for the last pass
    (``before``), and in the rescored runs, trained again and scored with every fact left over for it
    (``after``), and the answer accuracy of both.  The earlier passes' figures show how close the
    second training came to the first."""
    def mean_per_pass(runs: list[dict]) -> str:
        passes = [r["supporting_fact_accuracy_per_pass"] for r in runs]
        return " ".join(f"{100 * statistics.fmean(p[k] for p in passes):3.0f}" for k in range(len(passes[0])))

    lines = [f"{'row':<9}{'task':>5}  {'before: per pass %':<20}{'after: per pass %':<19}answers %, before -> after"]
    for name, row in rescored_rows(stored).items():
        for t in tasks:
            runs = [row["runs"][t][str(s)] for s in row["seeds"]]
            before = [r.get("replaced_run") or {**r, "supporting_fact_accuracy_per_pass": r[BEFORE_RESCORING]
                                                ["supporting_fact_accuracy_per_pass"]} for r in runs]
            answers = " -> ".join(f"{100 * statistics.fmean(r['accuracy'] for r in rs):.1f}" for rs in (before, runs))
            lines.append(f"{name:<9}{t:>5}  {mean_per_pass(before):<20}{mean_per_pass(runs):<19}{answers}")
    return "\n".join(lines)


# -- scoring stored runs again -------------------------------------------------------------------------
#: What ``rescore`` replaces in a run whose answer accuracy reproduces: the figures of the gates.
RESCORED = ("supporting_fact_accuracy", "supporting_fact_accuracy_per_pass")
#: Where a rescored run keeps the figures it replaced.
BEFORE_RESCORING = "scored_with_one_fact_for_the_last_pass"
#: What a rescored run is compared on, beside its answer accuracy (recorded, not required).
COMPARED = ("accuracy", "val_accuracy", "best_epoch", "epochs", "final_loss")
RESCORE_RULE = ("the last pass is a hit when its top gate is any supporting fact left over for it "
                "(supporting[passes-1:], what gate_targets trains it on); it was scored against "
                "supporting[passes-1] alone. Passes before the last: unchanged")


def rescore(folder: str, row_name: str, stored_row: dict, runs: Path, n_jobs: int, seeds: list[int],
            tasks: list[int]) -> tuple[dict, dict]:
    """The runs of ``tasks`` x ``seeds`` of ``stored_row`` trained again and scored again (see the
    module's docstring): ``({task: {seed: the run to store}}, {task: {seed: what happened}})``.  Each
    is compared with the final command's run (``replaced_run`` where a rescoring replaced it)."""
    settings, retry = stored_row["settings"], stored_row["retry_weight_decay"]
    final_run = lambda t, s: stored_row["runs"][str(t)][str(s)].get("replaced_run",      # noqa: E731
                                                                      stored_row["runs"][str(t)][str(s)])
    jobs = [(t, folder, settings, runs / row_name / "rescore" / f"seed{s}" / f"task{t:02d}", s, True, retry)
            for s in seeds for t in tasks]
    results = _run_all(jobs, n_jobs, lambda j, r: f"{row_name} task {j[0]:>2} seed {j[4]}: {100 * r['accuracy']:.1f}% "
                       f"(stored {100 * final_run(j[0], j[4])['accuracy']:.1f}%), per pass "
                       f"{r['supporting_fact_accuracy_per_pass']} (stored "
                       f"{final_run(j[0], j[4])['supporting_fact_accuracy_per_pass']})")
    entries: dict[str, dict] = {}
    done: dict[str, dict] = {}
    for job, new in zip(jobs, results):
        t, s = str(job[0]), str(job[4])
        old = final_run(t, s)
        same = new["accuracy"] == old["accuracy"]
        if same:
            before = old.get(BEFORE_RESCORING) or {k: old[k] for k in RESCORED}
            entries.setdefault(t, {})[s] = dict(old, **{k: new[k] for k in RESCORED}, **{BEFORE_RESCORING: before})
        else:
            entries.setdefault(t, {})[s] = dict(new, data=old["data"], replaced_run=old)
        done.setdefault(t, {})[s] = {
            "accuracy_reproduced": same, "differs": [k for k in COMPARED if new.get(k) != old.get(k)],
            "stored": {k: old.get(k) for k in COMPARED}, "retrained": {k: new.get(k) for k in COMPARED},
            "train_seconds": new["train_seconds"]}
    return entries, done


def runs_by_number(row: dict) -> dict:
    """A stored row's ``runs`` keyed by task and seed numbers, as ``summarise_row`` takes them."""
    return {int(t): {int(s): r for s, r in v.items()} for t, v in row["runs"].items()}


def write_rescored(row_name: str, entries: dict, done: dict, command: str, lock: Path) -> None:
    """Put the rescored runs into the row of ``STORED`` as it is when they are done, under a lock (two
    rescorings of one row may finish at once), with the row's ``rescoring`` record (merged with an
    earlier one's), and the row's summary computed again."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        stored = json.loads(STORED.read_text())
        row = stored["rows"][row_name]
        for t, by_seed in entries.items():
            row["runs"][t].update(by_seed)
        row.update(summarise_row(runs_by_number(row), row["seeds"]))
        prov = provenance(command, {"settings": row["settings"], "retry_weight_decay": row["retry_weight_decay"],
                                    "rule": RESCORE_RULE}, MEASURED)
        prov.update(commit=COMMIT[0], uncommitted_changes=COMMIT[1])     # the code this process started with
        record = row.get("rescoring") or {"rule": RESCORE_RULE, "runs": {}, "provenance": []}
        for t, by_seed in done.items():
            record["runs"].setdefault(t, {}).update(by_seed)
        record["provenance"].append(prov)
        row["rescoring"] = record
        write_json(STORED, stored)


# -- whether a cure joins the dmn+ext row ------------------------------------------------------------
CURE_POINT = {"lr": 3e-3, "weight_decay": 1e-3, "dropout": 0.1, "max_passes": 5}   # the babi-1k model's point
CURE = {"intervening_facts": True}
CURE_RISE = 0.02            # task 3's mean held-out accuracy must rise by more than this
CURE_OUT = RESULTS / "babi_cure.json"


def cure_folder(runs: Path, arm: str, task: int, seed: int, eff: dict) -> Path:
    if arm == "base" and seed == 0:       # the row's own grid folder: select reads it back
        return runs / "dmn+ext" / "select" / point_name(eff) / f"task{task:02d}"
    return runs / "dmn+ext" / "cure" / arm / f"seed{seed}" / f"task{task:02d}"


def train_arms(folder: str, runs: Path, pairs: list[tuple[int, int]], n_jobs: int, needed: dict) -> dict:
    """Both arms on every (task, seed) of ``pairs``, held-out stories only: {arm: {(task, seed): result}}."""
    jobs, keys = [], []
    for arm, extra in (("base", {}), ("cure", CURE)):
        for task, seed in pairs:
            eff = effective_point(CURE_POINT, needed[task])
            jobs.append((task, folder, dict(row_settings("dmn+ext", eff), **extra),
                         cure_folder(runs, arm, task, seed, eff), seed, False))
            keys.append((arm, task, seed))
    results = _run_all(jobs, n_jobs, lambda j, r: f"{'cure' if j[2].get('intervening_facts') else 'base'} "
                       f"task {j[0]:>2} seed {j[4]}: held-out {100 * r['val_accuracy']:.1f}% "
                       f"({r['epochs']} epochs, {r['train_seconds']:.0f} s)")
    out: dict = {"base": {}, "cure": {}}
    for (arm, task, seed), r in zip(keys, results):
        out[arm][(task, seed)] = r
    return out


def cure(folder: str, runs: Path, n_jobs: int) -> dict:
    """The protocol's rule for the cure (see the module's docstring): the result to store."""
    def mean_of(arm: dict, pairs) -> float:
        return statistics.fmean(arm[p]["val_accuracy"] for p in pairs)

    needed = {t: passes_needed(folder, t) for t in TASKS}
    started = time.perf_counter()
    step1 = [(3, s) for s in (0, 1, 2)]
    done = train_arms(folder, runs, step1, n_jobs, needed)
    rise = mean_of(done["cure"], step1) - mean_of(done["base"], step1)
    verdict = {"task3_base": round(mean_of(done["base"], step1), 4), "task3_cure": round(mean_of(done["cure"], step1), 4),
               "task3_rise": round(rise, 4), "task3_passes": rise > CURE_RISE}
    if verdict["task3_passes"]:
        step2 = [(t, 0) for t in TASKS]
        more = train_arms(folder, runs, step2, n_jobs, needed)
        for arm in done:
            done[arm].update(more[arm])
        fall = mean_of(done["base"], step2) - mean_of(done["cure"], step2)
        verdict.update(mean20_base=round(mean_of(done["base"], step2), 4),
                       mean20_cure=round(mean_of(done["cure"], step2), 4),
                       mean20_fall=round(fall, 4), mean20_passes=fall <= TIE + 1e-12)
    verdict["joins_dmn+ext"] = bool(verdict["task3_passes"] and verdict.get("mean20_passes"))
    return {"rule": f"task 3's mean held-out accuracy over seeds 0-2 rises by more than {CURE_RISE:g}; then the 20 "
                    f"tasks' mean held-out accuracy on seed 0 falls by no more than {TIE:g}",
            "point": CURE_POINT, "cure": CURE, "verdict": verdict, "data": repo_path(folder), "jobs": n_jobs,
            "wall_seconds": round(time.perf_counter() - started, 1),
            "runs": {arm: {f"task{t}_seed{s}": {k: r[k] for k in ("val_accuracy", "epochs", "best_epoch", "train_seconds")}
                           for (t, s), r in sorted(done[arm].items())} for arm in done}}


# -- cures: the protocol's version 6 cures for the course's row --------------------------------------
# ``CURES`` names each cure, the knobs it turns on and the tasks it is aimed at.  For each cure, the
# row (``dmn+ext`` at its stored point) and the row with the cure train every target task on seeds
# 0, 1 and 2, as ``select`` trains (held-out stories only, stopping at 100%, the test never read).
# A cure passes the first step when its target tasks' mean held-out accuracy does not fall, and
# either rises by more than ``CURES_RISE`` (2 points) or their held-out answer cross-entropy falls
# by more than two standard errors of the paired difference over the (task, seed) pairs.  A cure
# that passes trains the 20 tasks on seed 0 beside the row; it joins when their mean held-out
# accuracy falls by no more than the tie.  Two cures that join alone also train together on seed
# 0's 20 tasks and join together only if that mean also falls by no more than the tie; else the
# one with the higher 20-task mean joins alone.

CURES_ROW = "dmn+ext"
#: The cures of version 6 (the step ``cures``): the knobs each turns on and the tasks it is aimed at.
CURES = {
    "answer_hidden": {"settings": {"answer_hidden": True}, "tasks": (7, 17, 18)},
    "rename_entities": {"settings": {"rename_entities": True}, "tasks": (3, 18)},
}
CURES_SEEDS = (0, 1, 2)
CURES_RISE = CURE_RISE      # the held-out rise a cure needs, version 3's and version 6's alike
CURES_OUT = RESULTS / "babi_cures.json"


def cures_settings(point: dict, task_need: int, cures=()) -> dict:
    """The row's knobs at ``point`` (its cap lowered to what the task can use), the cures' on top,
    trained as selection trains (stopping when the held-out accuracy first reaches 100%)."""
    extra = {k: v for name in cures for k, v in CURES[name]["settings"].items()}
    return {**row_settings(CURES_ROW, effective_point(point, task_need)), **extra, **SELECT_ONLY}


def cures_arm_name(cures) -> str:
    return "+".join(cures) or "row"


def train_cures_arm(folder: str, runs: Path, point: dict, cures, pairs, needed: dict, n_jobs: int) -> dict:
    """One arm (the row with ``cures``) on every (task, seed) of ``pairs``: {(task, seed): result}."""
    name = cures_arm_name(cures)
    jobs = [(t, folder, cures_settings(point, needed[t], cures),
             runs / CURES_ROW / "cures" / name / f"seed{s}" / f"task{t:02d}", s, False) for t, s in pairs]
    results = _run_all(jobs, n_jobs, lambda j, r: f"{name} task {j[0]:>2} seed {j[4]}: held-out "
                       f"{100 * r['val_accuracy']:.1f}%, answer loss {r.get('val_answer_loss') or 0:.4f} "
                       f"({r['epochs']} epochs, {r['train_seconds']:.0f} s)")
    return dict(zip(pairs, results))


def paired(cure: dict, base: dict, key: str) -> dict:
    """Cure minus row over the pairs both hold: the mean difference and its standard error."""
    diffs = [cure[p][key] - base[p][key] for p in base]
    se = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else float("inf")
    return {"mean": round(statistics.fmean(diffs), 6), "se": round(se, 6), "n": len(diffs)}


def cures_first_step(cure: dict, base: dict) -> dict:
    """The rule's first step on the target tasks (version 6, item 1)."""
    acc, loss = paired(cure, base, "val_accuracy"), paired(cure, base, "val_answer_loss")
    rises = acc["mean"] > CURES_RISE
    surer = loss["mean"] < 0 and abs(loss["mean"]) > 2 * loss["se"]
    return {"held_out_accuracy": acc, "held_out_answer_loss": loss, "accuracy_rises": rises, "surer": surer,
            "passes": acc["mean"] >= 0 and (rises or surer)}


def mean20(arm: dict, tasks) -> float:
    return statistics.fmean(arm[(t, 0)]["val_accuracy"] for t in tasks)


def decide_cures(folder: str, runs: Path, n_jobs: int, tasks=TASKS, point: dict | None = None) -> dict:
    """Version 6's rule for every cure (the step ``cures``); what ``results/babi_cures.json`` stores."""
    point = point or BABI_CHOSEN[CURES_ROW]
    needed = {t: passes_needed(folder, t) for t in tasks}
    started = time.perf_counter()
    arms: dict[str, dict] = {"row": {}}
    verdicts: dict[str, dict] = {}
    for name, cure in CURES.items():
        pairs = [(t, s) for t in cure["tasks"] for s in CURES_SEEDS]
        arms["row"].update(train_cures_arm(folder, runs, point, (), pairs, needed, n_jobs))
        arms[name] = train_cures_arm(folder, runs, point, (name,), pairs, needed, n_jobs)
        verdicts[name] = cures_first_step(arms[name], {p: arms["row"][p] for p in pairs})
    every = [(t, 0) for t in tasks]
    passing = [name for name in CURES if verdicts[name]["passes"]]
    if passing:
        arms["row"].update(train_cures_arm(folder, runs, point, (), every, needed, n_jobs))
    for name in passing:
        arms[name].update(train_cures_arm(folder, runs, point, (name,), every, needed, n_jobs))
        fall = mean20(arms["row"], tasks) - mean20(arms[name], tasks)
        verdicts[name].update(mean20_row=round(mean20(arms["row"], tasks), 4),
                              mean20_cure=round(mean20(arms[name], tasks), 4),
                              mean20_fall=round(fall, 4), joins_alone=fall <= TIE + 1e-12)
    joining = [name for name in passing if verdicts[name]["joins_alone"]]
    together = None
    if len(joining) > 1:
        both = tuple(joining)
        arms[cures_arm_name(both)] = train_cures_arm(folder, runs, point, both, every, needed, n_jobs)
        fall = mean20(arms["row"], tasks) - mean20(arms[cures_arm_name(both)], tasks)
        together = {"cures": list(both), "mean20": round(mean20(arms[cures_arm_name(both)], tasks), 4),
                    "mean20_fall": round(fall, 4), "joins": fall <= TIE + 1e-12}
        if not together["joins"]:
            joining = [max(joining, key=lambda n: verdicts[n]["mean20_cure"])]
    return {"rule": (f"on the cure's target tasks over seeds {', '.join(map(str, CURES_SEEDS))}: the mean held-out accuracy "
                     f"does not fall, and rises by more than {CURES_RISE:g} or the held-out answer cross-entropy falls by "
                     f"more than two standard errors of the paired difference; then the 20 tasks' mean held-out "
                     f"accuracy on seed 0 falls by no more than {TIE:g}; two cures that join alone join "
                     f"together only if, trained together, they pass that too"),
            "row": CURES_ROW, "point": point, "cures": {n: {"settings": c["settings"], "tasks": list(c["tasks"])}
                                                  for n, c in CURES.items()},
            "verdicts": verdicts, "together": together, "joined": joining, "data": repo_path(folder), "jobs": n_jobs,
            "wall_seconds": round(time.perf_counter() - started, 1),
            "runs": {arm: {f"task{t}_seed{s}": {k: r.get(k) for k in ("val_accuracy", "val_answer_loss", "epochs",
                                                                         "best_epoch", "train_seconds")}
                           for (t, s), r in sorted(done.items())} for arm, done in arms.items()}}


def cures_table(stored: dict) -> str:
    """Version 6's cures as ``results/babi_cures.json`` holds them: per cure, the held-out accuracy and answer loss
    of each (target task, seed) for the row and the cure, their paired differences and the first step's verdict;
    then seed 0's 20 tasks, the two cures together where they ran, and what joined. The protocol quotes it."""
    runs, seeds = stored["runs"], stored["provenance"]["config"]["seeds"]
    lines = [f"version 6's cures, held-out stories only, seeds {', '.join(map(str, seeds))}, at the {stored['row']} "
             "row's point"]
    for name, v in stored["verdicts"].items():
        lines += [f"{name} (tasks {', '.join(map(str, stored['cures'][name]['tasks']))})",
                  "  task  seed  held-out %: row   cure   answer loss: row    cure"]
        for t in stored["cures"][name]["tasks"]:
            for s in seeds:
                a, b = runs["row"][f"task{t}_seed{s}"], runs[name][f"task{t}_seed{s}"]
                lines.append(f"  {t:>4}  {s:>4}  {100 * a['val_accuracy']:15.1f} {100 * b['val_accuracy']:6.1f}"
                             f"  {a['val_answer_loss']:17.4f} {b['val_answer_loss']:7.4f}")
        acc, loss = v["held_out_accuracy"], v["held_out_answer_loss"]
        lines.append(f"  cure - row: held-out accuracy {100 * acc['mean']:+.2f} ± {100 * acc['se']:.2f} points, "
                     f"answer loss {loss['mean']:+.4f} ± {loss['se']:.4f} ({acc['n']} pairs)")
        lines.append("  first step " + ("passed" if v["passes"] else "failed"))
        if "mean20_cure" in v:
            lines.append(f"  seed 0, 20 tasks: held-out mean {100 * v['mean20_row']:.2f}% (row), "
                         f"{100 * v['mean20_cure']:.2f}% (cure): " + ("joins" if v["joins_alone"] else "does not join")
                         + " alone")
    together = stored.get("together")
    if together:
        lines.append(f"{' + '.join(together['cures'])} together, seed 0, 20 tasks: held-out mean "
                     f"{100 * together['mean20']:.2f}%, the row's minus it {100 * together['mean20_fall']:+.2f}: "
                     + ("join" if together["joins"] else "do not join"))
    lines.append(f"joined: {', '.join(stored['joined']) or 'none'}")
    return "\n".join(lines)


def cures_sentences(stored: dict) -> str:
    """What ``results/babi_cures.json`` decided, in the protocol's words: each cure's first step on its target tasks,
    its 20-task step where it ran, and what the course's row trains with. The protocol quotes it; its test too."""
    said = []
    for name, v in stored["verdicts"].items():
        acc, loss = v["held_out_accuracy"], v["held_out_answer_loss"]
        said.append(f"`{name}` {'passes' if v['passes'] else 'fails'} the first step: on its target tasks the "
                    f"held-out accuracy moves {100 * acc['mean']:+.2f} ± {100 * acc['se']:.2f} points "
                    f"({'more' if v['accuracy_rises'] else 'not more'} than {100 * CURES_RISE:g}), and the held-out "
                    f"answer loss moves {loss['mean']:+.4f} ± {loss['se']:.4f} ("
                    + ("a fall beyond two standard errors" if v["surer"] else "a fall within two standard errors"
                       if loss["mean"] < 0 else "no fall") + ").")
        if "mean20_cure" in v:
            said.append(f"On seed 0's 20 tasks its held-out mean is {100 * v['mean20_cure']:.2f}% against the row's "
                        f"{100 * v['mean20_row']:.2f}%: it {'joins' if v['joins_alone'] else 'does not join'} "
                        f"(the tie is {100 * TIE:g} points).")
    joined = stored["joined"]
    said.append("So the course's row trains " + (f"with {' and '.join(f'`{n}`' for n in joined)}" if joined
                                                 else "with neither cure") + " in its `final` with the restarts.")
    return " ".join(said)


def main(argv=None) -> int:
    from dca_course import configure_process

    configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="bAbI v1.2 folder holding en/ (or the en/ folder itself)")
    parser.add_argument("step", choices=("select", "final", "rescore", "summarise", "cure", "cures"),
                        help="select on held-out stories, the final row, train a row's stored runs again "
                             "and score them with today's evaluation (--tasks, --seeds), compute a stored row's "
                             "summary again, decide whether version 3's cure joins dmn+ext, or judge version 6's "
                             "cures (both --row dmn+ext)")
    parser.add_argument("--row", required=True, choices=list(ROWS))
    parser.add_argument("--seeds", default="0,1,2", help="final: comma-separated seeds")
    parser.add_argument("--tasks", default="all", help="comma-separated task numbers, or all (the protocol's)")
    parser.add_argument("--jobs", type=int, default=2, help="trainings at once (one thread each)")
    parser.add_argument("--runs", type=Path, default=Path("runs/babi_rows"), help="run folders (results kept)")
    parser.add_argument("--restarts", type=int, default=0, metavar="K",
                        help="final: a run still under 95%% on its held-out stories after its retry trains again "
                             "from other initial weights, up to K times; the best held-out model is kept")
    parser.add_argument("--point", metavar="lr=V,weight_decay=V,dropout=V,max_passes=V",
                        help="select: train this point of the grid only (a share of the work for one machine; "
                             "its figures go to results/babi_points.json, and a later select reads its trainings "
                             "back); chooses nothing.  The dmn row's points also give gate_loss=bce|softmax,"
                             "dmn_init=pytorch|xavier (protocol version 5)")
    args = parser.parse_args(argv)
    if args.point is not None:
        args.point = parse_point(args.point, args.row)     # the dmn row's grid has two settings more (version 5)
    if args.restarts < 0 or (args.restarts and args.step != "final"):
        parser.error("--restarts: a whole number of 0 or more, for final only")
    folder = str(args.folder.expanduser().resolve())
    command = command_line(__file__, argv)
    tasks = TASKS if args.tasks == "all" else [int(t) for t in args.tasks.split(",")]
    if args.step == "cure":
        if args.row != "dmn+ext":
            parser.error("cure: the cure is for the dmn+ext row (--row dmn+ext)")
        result = cure(folder, args.runs, args.jobs)
        write_result_json(CURE_OUT, result, command=command,
                          config={"base": row_settings("dmn+ext", CURE_POINT), "cure": CURE}, measures=MEASURED)
        print(result["verdict"], file=sys.stderr)
        return 0
    if args.step == "cures":
        if args.row != CURES_ROW:
            parser.error(f"cures: the cures are for the {CURES_ROW} row (--row {CURES_ROW})")
        result = decide_cures(folder, args.runs, args.jobs)
        write_result_json(CURES_OUT, result, command=command,
                          config={"row": row_settings(CURES_ROW, result["point"]), "cures": result["cures"],
                                  "select_only": SELECT_ONLY, "seeds": list(CURES_SEEDS)},
                          measures=MEASURED)
        print(cures_sentences(result), file=sys.stderr)       # the verdicts in the protocol's words
        return 0
    if args.step == "summarise":
        stored = json.loads(STORED.read_text())
        row = (stored.get("rows") or {}).get(args.row)
        if row is None:
            parser.error(f"summarise: no stored row {args.row!r} in {repo_path(STORED)}")
        row.update(summarise_row(runs_by_number(row), row["seeds"]))
        write_json(STORED, stored)
        print(f"{args.row}: {row_sentence(row)}", file=sys.stderr)
        return 0
    if args.step == "select" and args.point:
        started = time.perf_counter()
        part = select(folder, args.row, args.runs, args.jobs, tasks, points=[args.point])["points"][0]
        part.update(tasks=list(tasks), seed=0, jobs=args.jobs, wall_seconds=round(time.perf_counter() - started, 1),
                    data=repo_path(folder))
        stored = json.loads(POINTS.read_text()) if POINTS.is_file() else {}
        stored.pop("provenance", None)
        stored.setdefault(args.row, {})[point_name(args.point)] = dict(part, command=command)
        write_result_json(POINTS, stored, command=command, config=SELECT_CONFIG,
                          measures=MEASURED)
        print(f"{args.row} {point_name(args.point)}: held-out mean {100 * part['held_out_mean']:.2f}%, "
              f"{part['wall_seconds'] / 60:.1f} min", file=sys.stderr)
        return 0
    if args.step == "select":
        chosen = select(folder, args.row, args.runs, args.jobs, tasks)
        stored = json.loads(SELECTION.read_text()) if SELECTION.is_file() else {}
        stored.pop("provenance", None)
        stored[args.row] = dict(chosen, command=command, data=repo_path(folder))
        write_result_json(SELECTION, stored, command=command, config=SELECT_CONFIG,
                          measures=["experiments/babi_rows.py", *DMN_CODE])
        print(f"{args.row}: chosen on held-out stories: {json.dumps(chosen['chosen'])}", file=sys.stderr)
        return 0
    if args.step == "rescore":
        if args.tasks == "all":
            parser.error("rescore: name the tasks (--tasks 7,8)")
        stored_row = json.loads(STORED.read_text()).get("rows", {}).get(args.row)
        if stored_row is None:
            parser.error(f"rescore: no stored row {args.row!r} in {STORED}")
        seeds = [int(s) for s in args.seeds.split(",")]
        entries, done = rescore(folder, args.row, stored_row, args.runs, args.jobs, seeds, tasks)
        write_rescored(args.row, entries, done, command, args.runs / "babi_real_1k.lock")
        for t, by_seed in done.items():
            for s, d in by_seed.items():
                print(f"{args.row} task {t} seed {s}: accuracy reproduced {d['accuracy_reproduced']}"
                      f"{'' if not d['differs'] else ' (differs: ' + ', '.join(d['differs']) + ')'}", file=sys.stderr)
        return 0
    selection = json.loads(SELECTION.read_text()) if SELECTION.is_file() else {}
    if args.row not in selection:
        parser.error(f"no choice for row {args.row!r} in {SELECTION}: run `select --row {args.row}` first")
    seeds = [int(s) for s in args.seeds.split(",")]
    row = final(folder, args.row, args.runs, args.jobs, seeds, selection[args.row]["chosen"], tasks, args.restarts)
    row["provenance"] = provenance(command, row["settings"], ["experiments/babi_rows.py", *DMN_CODE])
    stored = json.loads(STORED.read_text())
    keep_replaced_row(stored, args.row, row)
    stored.setdefault("rows", {})[args.row] = row
    write_json(STORED, stored)
    print(json.dumps({k: row[k] for k in ("mean", "mean_without_17_19", "tasks_at_95", "seeds")}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
