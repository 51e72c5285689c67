"""Why the `dmn` row (Kumar et al.'s DMN) finds too few supporting facts on bAbI tasks 2 and 3: one
change at a time against the row as it stands, on held-out training stories only (issue 49, part 1).

    python experiments/dmn_diagnosis.py ../shared/data/babi --arms base,D1 --tasks 2,3 --seeds 0,1,2 --jobs 2

Each arm is the `dmn` row at the point protocol version 4 chose (``BABI_FIXED`` + ``BABI_ROWS["dmn"]`` +
``DIAGNOSED_POINT``) with one setting changed (``ARMS``; ``results/dmn_paper_details.md`` names
each hypothesis D1-D9 and what the paper says of it).  A training holds out 10% of the training
stories, as the row does; the test split is dropped as soon as the data is read, so no test figure
enters a diagnosis.  Like the protocol's selection, a training stops at the epoch its held-out
accuracy first reaches 100% (its kept weights cannot change after that).  Each trained model is
then scored on its own held-out stories: answer accuracy, and per pass how often its top gate is
the pass's supporting fact (``evaluate_dmn``'s ``supporting_fact_accuracy_per_pass``).

Every training keeps its result in ``--runs/ARM/taskNN/seedS/result.json`` (with the code's
fingerprint), so the command goes on where it stopped.  It writes ``results/dmn_diagnosis.json`` and
``.md``: per arm and task, each seed's figures, their means, and the paired difference from
``base`` (mean and standard error over the seeds).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import inspect
import json
import statistics
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import (DMN_CODE, RESULTS, ROOT, code_fingerprint, code_only, command_line, cpu_name,  # noqa: E402
                              git_commit, repo_path, train_command, write_json, write_report)

from dca_course.recipes.dmn import BABI_FIXED, BABI_ROWS  # noqa: E402

#: One hypothesis each: its name in ``results/dmn_paper_details.md``, what changes, and the knobs.
ARMS = {
    "base": ("the row as it stands", "nothing", {}),
    "D1": ("the form of gate supervision",
           "a cross-entropy over the pass's facts (softmax of the gate logits) in place of a binary "
           "cross-entropy per fact; the sigmoid gates stay in the forward pass", {"gate_loss": "softmax"}),
    "D2-3": ("the weight of gate supervision", "gate loss weight 3 in place of 1", {"gate_weight": 3.0}),
    "D2-0.3": ("the weight of gate supervision", "gate loss weight 0.3 in place of 1", {"gate_weight": 0.3}),
    "T": ("the input module: can a fact's state tell the gate when it happened?",
          "the course's time features appended to the gate's z (how recent each fact is, and how far before "
          "or after the fact the previous pass read; in neither paper): a probe, not a candidate for the row",
          {"time_features": True}),
    "D4": ("the gate network's features and their scale",
           "DMN+'s four comparisons [c*q, c*m, |c-q|, |c-m|] in place of Kumar et al.'s nine parts",
           {"gate_features": "dmn+"}),
    "D3": ("the question module sharing the input GRU",
           "a question GRU with weights of its own (the word embeddings stay shared)", {"question_module": "own"}),
    "D7": ("initialisation", "Xiong et al.'s: every weight matrix Xavier-uniform (a GRU's per gate), biases 0, the "
           "embeddings as they are", {"dmn_init": "xavier"}),
    "D8": ("the number of passes", "one pass more than the supporting facts, not supervised; the answer reads the "
           "last memory", {"extra_passes": 1}),
}
#: Each open choice again on top of D1's form of gate supervision: does it add to D1?
ARMS.update({f"D1+{arm}": (f"{ARMS[arm][0]}, with D1", f"{ARMS[arm][1]}; and D1's gate loss",
                           {**ARMS["D1"][2], **ARMS[arm][2]}) for arm in ("D2-3", "D3", "D7", "D8")})
ROW = "dmn"
#: Like the protocol's selection (``babi_rows.SELECT_ONLY``): stop at the epoch the held-out accuracy
#: first reaches 100%, which the kept weights' figures cannot pass.
SELECT_ONLY = dict(ceiling_patience=0)
#: The row the diagnosis measured: the ``dmn`` row at the point protocol version 4 chose on held-out stories
#: (version 5 chooses the row again, with two of the diagnosis's findings in its grid).
DIAGNOSED_POINT = dict(lr=1e-3, weight_decay=3e-4, dropout=0.0, max_passes=3)
BASE_SETTINGS = {**BABI_FIXED, **BABI_ROWS[ROW], **DIAGNOSED_POINT, **SELECT_ONLY}
OUT = RESULTS / "dmn_diagnosis"


def _code() -> str:
    """The fingerprint a kept run is read back under: the DMN's code (``DMN_CODE``) and
    :func:`diagnose`'s own; the tables and their text may change without training again."""
    own = code_only(textwrap.dedent(inspect.getsource(diagnose)))
    return hashlib.sha256((code_fingerprint(DMN_CODE) + own).encode()).hexdigest()[:16]


def fail(message: str):
    """One line on standard error, exit status 2 (the command line's convention)."""
    print(f"dca-course: error: dmn_diagnosis.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def numbers(flag: str, text: str, low: int, high: int | None) -> list[int]:
    """``2,3`` as [2, 3], each checked to lie in [low, high]."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        fail(f"{flag} {text!r}: give comma-separated whole numbers")
    bad = [v for v in values if v < low or (high is not None and v > high)]
    if bad or len(set(values)) != len(values):
        fail(f"{flag} {text!r}: each from {low}{f' to {high}' if high is not None else ' up'}, each once")
    return values


def settings_for(arm: str) -> dict:
    if arm not in ARMS:
        fail(f"no arm {arm!r}; the arms are {', '.join(ARMS)}")
    return {**BASE_SETTINGS, **ARMS[arm][2]}


def diagnose(task: int, folder: str, settings: dict, out: Path, seed: int) -> dict:
    """Train one task on seed ``seed`` with the test dropped, and score the kept model on its
    held-out stories; a finished run under the same settings and code is read back."""
    stored = kept(out, settings)
    if stored is not None:
        return stored
    import torch

    torch.set_num_threads(1)
    from dca_course import seed_everything
    from dca_course.models.dmn_eval import evaluate_dmn
    from dca_course.recipes import DMNConfig, DMNRecipe
    from dca_course.registry import load_data

    seed_everything(seed)
    config = DMNConfig.from_profile("full", settings)
    data = load_data(f"babi:{folder}:{task}", config.data_profile, seed)
    data = dataclasses.replace(data, test=[])                        # never the test
    recipe = DMNRecipe(config)
    recipe.check_data(data)
    started = time.perf_counter()
    model, vocab, history, seconds = recipe.fit_model(data, torch.device("cpu"), out, seed=seed, progress=False,
                                                      resume=False, log=None)
    _, held_out = recipe.validation_split(data.train, seed)          # the stories fit_model held out
    scored = evaluate_dmn(model, held_out, vocab, max_facts=config.max_facts)
    result = dict(val_accuracy=history.best.get("val_accuracy"), held_out_accuracy=round(scored["accuracy"], 4),
                  per_pass_hits=scored["supporting_fact_accuracy_per_pass"], held_out_questions=len(held_out),
                  best_epoch=history.best.get("epoch"), epochs=len(history.epochs), train_seconds=round(seconds, 1),
                  wall_seconds=round(time.perf_counter() - started, 1))
    commit, dirty = COMMIT
    write_json(out / "result.json", {"settings": settings, "result": result, "code": CODE, "commit": commit,
                      "uncommitted_changes": dirty, "cpu": cpu_name(),
                      "command": train_command("dmn", f"babi:{repo_path(folder)}:{task}", settings, seed)
                      + " (the test split dropped)"})
    return result


CODE, COMMIT = _code(), git_commit()
#: Earlier fingerprints whose kept runs train exactly as this code does at their settings, each with the
#: check that showed it: a change that only adds knobs whose defaults leave the model and its training
#: as they were keeps the runs already paid for.  The check trains the same run under both commits and
#: compares the weights bit for bit.
SAME_TRAINING = {
    "d1ce0e52a2826f1f": "e747435; the knobs question_module, dmn_init and extra_passes added, defaults unchanged: "
                        "the base arm on task 2, seed 0, 3 epochs, under e747435, under the commit adding them and under "
                        "the one factoring models.dmn.read_question out: the same weights (sha256 9d0c9510d3a7a67c "
                        "each), held-out 0.19 at every epoch",
}


# -- where a pass's misses land ------------------------------------------------------------------------
#: Words that name no person, object or place in bAbI's facts (a fact is "NAME VERB ..."; its second
#: word, the verb, is left out too).
FUNCTION_WORDS = frozenset({"to", "the", "up", "there", "back", "down"})
MISS_KINDS = ("another supporting fact", "same entity, earlier", "same entity, later", "no shared entity")


def entities(fact: list[str]) -> set[str]:
    """The person, object or place words of a bAbI fact: every word but its verb and function words."""
    return {w for k, w in enumerate(fact) if k != 1 and w not in FUNCTION_WORDS}


def miss_kind(story: list[list[str]], supporting: list[int], target: int, picked: int) -> str:
    """Where a pass that should read fact ``target`` but read ``picked`` went wrong: the fact of another
    pass (the order of the facts), an older or a newer fact about one of its people, objects or places
    (when it happened), or a fact about none of them (what it is about)."""
    if picked in supporting:
        return MISS_KINDS[0]
    if entities(story[picked]) & entities(story[target]):
        return MISS_KINDS[1] if picked < target else MISS_KINDS[2]
    return MISS_KINDS[3]


def misses(out: Path, folder: str, task: int, seed: int) -> list[dict]:
    """Per pass of a kept run's best weights on its held-out stories: the questions it was trained on,
    its hits, and its misses by :func:`miss_kind`."""
    import torch

    from dca_course.data.babi import make_dmn_batch
    from dca_course.recipes import load_run
    from dca_course.registry import load_data

    recipe, model, vocab, state = load_run(out, torch.device("cpu"))
    model.load_state_dict(state["best"]["weights"])
    model.eval()
    data = load_data(f"babi:{folder}:{task}", recipe.config.data_profile, seed)
    _, held_out = recipe.validation_split(data.train, seed)
    cut = recipe.config.max_facts
    counts = [dict(questions=0, hits=0, **{k: 0 for k in MISS_KINDS}, target_gate_at_least_half=0,
                   answered_on_hits=0, answered_on_misses=0) for _ in range(model.passes)]
    with torch.no_grad():
        for ex in held_out:
            answers, gates = model.predict(make_dmn_batch([ex], vocab, max_facts=cut))
            right = answers[0] == vocab.encode(ex.answer)
            story = ex.story[-cut:]
            offset = len(ex.story) - len(story)
            supporting = [i - offset for i in ex.supporting]
            for p, target in enumerate(supporting[:model.passes]):
                if target < 0:
                    continue
                picked = int(gates[0, p, :len(story)].argmax())
                counts[p]["questions"] += 1
                if picked == target:
                    counts[p]["hits"] += 1
                    counts[p]["answered_on_hits"] += right
                else:
                    counts[p][miss_kind(story, supporting, target, picked)] += 1
                    counts[p]["answered_on_misses"] += right
                    # a sigmoid gate can open on several facts: the missed one may be open too
                    counts[p]["target_gate_at_least_half"] += bool(gates[0, p, target] >= 0.5)
    return counts


def kept(out: Path, settings: dict) -> dict | None:
    """The kept result of a run folder under these settings and this code, else None."""
    done = out / "result.json"
    if not done.is_file():
        return None
    stored = json.loads(done.read_text())
    same_code = stored.get("code") == CODE or stored.get("code") in SAME_TRAINING
    return stored["result"] if stored.get("settings") == settings and same_code else None


def _job(args):
    return diagnose(*args)


def paired(base: list[float], other: list[float]) -> dict:
    """Mean and standard error of ``other - base`` over the seeds (paired by seed)."""
    diffs = [o - b for b, o in zip(base, other)]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else None
    return {"mean": round(statistics.fmean(diffs), 4), "se": round(se, 4) if se is not None else None}


def summarise(runs: dict, seeds: list[int]) -> dict:
    """``runs`` {arm: {task: {seed: result}}} as the table: per arm and task, each figure's mean over
    the seeds and, against ``base``, the paired difference."""
    table = {}
    for arm, by_task in runs.items():
        table[arm] = {}
        for task, by_seed in by_task.items():
            acc = [by_seed[s]["held_out_accuracy"] for s in seeds]
            hits = [by_seed[s]["per_pass_hits"] for s in seeds]
            row = {"held_out_accuracy": round(statistics.fmean(acc), 4),
                   "per_pass_hits": [round(statistics.fmean(h[p] for h in hits), 4) for p in range(len(hits[0]))],
                   "per_seed": {str(s): by_seed[s] for s in seeds}}
            if arm != "base" and "base" in runs and task in runs["base"]:
                base = runs["base"][task]
                row["minus_base"] = {
                    "held_out_accuracy": paired([base[s]["held_out_accuracy"] for s in seeds], acc),
                    "per_pass_hits": [paired([base[s]["per_pass_hits"][p] for s in seeds], [h[p] for h in hits])
                                      for p in range(len(hits[0]))]}
            table[arm][str(task)] = row
    return table


def beyond(d: dict) -> str:
    """The course's rule for "A beats B": the paired mean beyond two standard errors."""
    if d["se"] is None:
        return "-"
    return "yes" if abs(d["mean"]) > 2 * d["se"] else "no: not distinguishable"


def markdown(table: dict, seeds: list[int]) -> str:
    pct = lambda x: f"{100 * x:.1f}"                                               # noqa: E731
    diff = lambda d: f"{100 * d['mean']:+.1f} ± {100 * d['se']:.1f}" if d["se"] is not None else "-"  # noqa: E731
    lines = ["# The `dmn` row's diagnosis on held-out stories (bAbI 1k, tasks 2 and 3)", "",
             f"Seeds {', '.join(map(str, seeds))}. Each arm changes one thing in the `dmn` row "
             "(results/dmn_paper_details.md names the hypotheses). Held-out stories only: the test was never "
             "read. A pass hits when its top gate is its supporting fact. Differences are the arm minus "
             "`base`, paired by seed, ± one standard error; a difference counts when it lies beyond two.", "",
             "| arm | hypothesis | change | task | held-out accuracy % | per pass hits % | accuracy minus base | "
             "beyond two standard errors? | pass hits minus base | per seed accuracy % |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for arm, by_task in table.items():
        hypothesis, change, _ = ARMS[arm]
        change = change.replace("|", "\\|")          # |c-q| inside a table cell
        for task, row in by_task.items():
            d = row.get("minus_base")
            lines.append(f"| {arm} | {hypothesis} | {change} | {task} | {pct(row['held_out_accuracy'])} | "
                         f"{' / '.join(pct(h) for h in row['per_pass_hits'])} | {diff(d['held_out_accuracy']) if d else '-'} | "
                         f"{beyond(d['held_out_accuracy']) if d else '-'} | "
                         f"{' / '.join(diff(x) for x in d['per_pass_hits']) if d else '-'} | "
                         f"{', '.join(pct(r['held_out_accuracy']) for r in row['per_seed'].values())} |")
    lines += ["", "## Where each pass's misses land (held-out questions, summed over the seeds)", "",
              "A miss is a pass whose top gate is not its supporting fact. *Same entity* facts share a person, "
              "object or place with the right one (every word but the verb and function words); *earlier* ones "
              "come before it in the story. The DMN's sigmoid gates can open on several facts: *target gate "
              ">= 0.5* counts the misses whose right fact's gate is open too. *Answered* is the answer's "
              "accuracy on the questions where the pass hit or missed.", "",
              f"| arm | task | pass | questions | hits | {' | '.join(MISS_KINDS)} | target gate >= 0.5 | "
              "answered on hits % | answered on misses % |",
              "|---|---|---|---|---|" + "---|" * len(MISS_KINDS) + "---|---|---|"]
    share = lambda a, b: f"{100 * a / b:.0f}" if b else "-"                          # noqa: E731
    for arm, by_task in table.items():
        for task, row in by_task.items():
            for p, c in enumerate(row.get("misses", [])):
                missed = c["questions"] - c["hits"]
                lines.append(f"| {arm} | {task} | {p + 1} | {c['questions']} | {c['hits']} | "
                             + " | ".join(str(c[k]) for k in MISS_KINDS)
                             + f" | {c['target_gate_at_least_half']} | {share(c['answered_on_hits'], c['hits'])} | "
                             f"{share(c['answered_on_misses'], missed)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    from dca_course import configure_process

    configure_process()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", help="bAbI v1.2 folder holding en/")
    parser.add_argument("--arms", default="base,D1", help=f"comma-separated, of {', '.join(ARMS)}")
    parser.add_argument("--tasks", default="2,3")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--kept-only", action="store_true",
                        help="train nothing: the table of the runs already kept (an arm and task with every seed)")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "dmn_diagnosis")
    args = parser.parse_args(argv)
    arms = args.arms.split(",")
    tasks, seeds = numbers("--tasks", args.tasks, 1, 20), numbers("--seeds", args.seeds, 0, None)
    if not (Path(args.folder) / "en").is_dir():
        fail(f"{args.folder}: no bAbI v1.2 folder here (it holds en/)")
    if args.jobs < 1:
        fail(f"--jobs {args.jobs}: give 1 or more")
    jobs = [(t, args.folder, settings_for(a), args.runs / a / f"task{t:02d}" / f"seed{s}", s)
            for t in tasks for a in arms for s in seeds]
    results = [None] * len(jobs)
    label = lambda j, r: (f"task {j[0]} seed {j[4]} {j[3].parts[-3]}: held-out {100 * r['held_out_accuracy']:.1f}%, "  # noqa: E731
                          f"pass hits {' / '.join(f'{100 * h:.1f}' for h in r['per_pass_hits'])}, "
                          f"{r['epochs']} epochs, {r['train_seconds']:.0f} s")
    if args.kept_only:
        results = [kept(job[3], job[2]) for job in jobs]
    elif args.jobs == 1:
        for k, job in enumerate(jobs):
            results[k] = diagnose(*job)
            print(label(job, results[k]), file=sys.stderr, flush=True)
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(_job, job): k for k, job in enumerate(jobs)}
            for fut in as_completed(futures):
                k = futures[fut]
                results[k] = fut.result()
                print(label(jobs[k], results[k]), file=sys.stderr, flush=True)
    runs: dict = {}
    for job, r in zip(jobs, results):
        runs.setdefault(job[3].parts[-3], {}).setdefault(job[0], {})[job[4]] = r
    # --kept-only: an (arm, task) enters the table when every seed of it is kept
    runs = {a: {t: by_seed for t, by_seed in by_task.items() if all(by_seed[s] for s in seeds)}
            for a, by_task in runs.items()}
    runs = {a: by_task for a, by_task in runs.items() if by_task}
    results = [r for r in results if r]
    if not runs:
        fail(f"no arm has every seed kept under {args.runs}")
    table = summarise(runs, seeds)
    for arm, by_task in table.items():          # where the misses land, summed over the seeds
        for task, row in by_task.items():
            per_seed = [misses(args.runs / arm / f"task{int(task):02d}" / f"seed{s}", args.folder, int(task), s)
                        for s in seeds]
            row["misses"] = [{k: sum(c[p][k] for c in per_seed) for k in per_seed[0][p]}
                             for p in range(len(per_seed[0]))]
    data = {"arms": {a: {"hypothesis": ARMS[a][0], "change": ARMS[a][1], "settings": ARMS[a][2]} for a in runs},
            "base_settings": BASE_SETTINGS, "tasks": tasks, "seeds": seeds, "table": table,
            "train_seconds": round(sum(r["train_seconds"] for r in results), 1), "code": CODE}
    write_report(RESULTS, "dmn_diagnosis", data, markdown(table, seeds), command=command_line(__file__, argv),
                 config={"arms": arms, "tasks": tasks, "seeds": seeds, "base_settings": BASE_SETTINGS},
                 measures=["experiments/dmn_diagnosis.py", *DMN_CODE])
    print(markdown(table, seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
