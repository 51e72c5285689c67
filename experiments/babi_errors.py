"""Where a trained DMN loses its bAbI questions: per pass, did the top gate land on that pass's
supporting fact, and how accurate is the answer when every pass did and when one did not?

    python experiments/babi_errors.py ../shared/data/babi runs/babi_real/seed0 --tasks 2,3,7,8,19

Reads the run folders ``taskNN`` that ``experiments/babi_real.py`` leaves under ``--runs/seedS``
and the task's test questions.  For task 19 it also counts the questions whose start (or goal)
room appears in more than one fact: there the first pass cannot tell the right fact from the
question alone.  Prints a markdown table.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
import torch


def pass_hits(task: int, folder: Path, run: Path) -> dict:
    from dca_course.recipes import load_run
    from dca_course.registry import load_data

    recipe, model, vocab, _ = load_run(run, torch.device("cpu"))
    model.eval()
    test = load_data(f"babi:{folder}:{task}", "full", 0).test
    counts, right = Counter(), Counter()
    for i in range(0, len(test), 200):
        chunk = test[i:i + 200]
        preds, gates = model.predict(recipe.make_batch(chunk, vocab))
        top = gates.argmax(-1)                                          # (batch, passes)
        for j, ex in enumerate(chunk):
            offset = max(0, len(ex.story) - recipe.config.max_facts)
            wanted = [s - offset for s in ex.supporting][:top.size(1)]
            hits = tuple(int(top[j, p]) == s for p, s in enumerate(wanted))
            key = "every pass on its fact" if all(hits) else f"pass {hits.index(False) + 1} first off its fact"
            counts[key] += 1
            right[key] += preds[j] == vocab.encode(ex.answer)
    return {"n": len(test), "counts": counts, "right": right}


def first_hop_ambiguity(folder: Path) -> tuple[int, int, int]:
    from dca_course.registry import load_data

    test = load_data(f"babi:{folder}:19", "full", 0).test
    start = sum(sum(ex.question[6] in fact for fact in ex.story) > 1 for ex in test)
    goal = sum(sum(ex.question[9] in fact for fact in ex.story) > 1 for ex in test)
    return len(test), start, goal


def main(argv=None) -> int:
    from dca_course import configure_process

    configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="bAbI v1.2 folder holding en/")
    parser.add_argument("runs", type=Path, help="a folder of babi_real.py run folders task01 ... task20")
    parser.add_argument("--tasks", default="2,3,7,8,19")
    args = parser.parse_args(argv)
    print("| task | questions | every supervised pass on its fact | accuracy there | "
          "a pass off its fact (the first such pass: count) | accuracy there |")
    print("|---:|---:|---:|---:|:---|---:|")
    for task in (int(t) for t in args.tasks.split(",")):
        r = pass_hits(task, args.folder, args.runs / f"task{task:02d}")
        good = "every pass on its fact"
        bad = sorted(k for k in r["counts"] if k != good)
        n_bad = sum(r["counts"][k] for k in bad)
        acc = lambda k: 100 * r["right"][k] / max(r["counts"][k], 1)
        off = ", ".join(f"{k.split()[1]}: {r['counts'][k]}" for k in bad)
        bad_acc = 100 * sum(r["right"][k] for k in bad) / max(n_bad, 1)
        lost = f"{n_bad} (pass {off}) | {bad_acc:.1f}%" if n_bad else "0 | -"
        print(f"| {task} | {r['n']} | {r['counts'][good]} | {acc(good):.1f}% | {lost} |")
    if "19" in args.tasks.split(","):
        n, start, goal = first_hop_ambiguity(args.folder)
        print(f"\nTask 19: the start room is in more than one fact in {start} of {n} test questions, "
              f"the goal room in {goal}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
