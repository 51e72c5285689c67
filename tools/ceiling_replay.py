"""Replay ``--stop-at-ceiling`` on stored training curves: how many epochs a finished run of the bAbI
table would have trained had a tie with 100% held-out accuracy not restarted the patience count.

    python tools/ceiling_replay.py runs/babi_regen3/runs        # the run folders of experiments/babi_real.py

Reads every ``seed*/task*/last.pt`` (the history of held-out accuracies, retries included), replays
``dca_course.train``'s rule with and without the ceiling (patience 50), and stopped at the epoch that
first reaches 100% (``--ceiling-patience 0``, the protocol's selection trainings from version 4: the best
held-out figure is the same, only later epochs are cut), and weighs each run's epochs
by its seconds per epoch from ``results/babi_real_1k.json`` (the kept training of each task and seed;
the retries, which that file does not time, are left out of the time share).  Writes
``results/babi_ceiling_replay.json``; ``results/babi_protocol.md`` quotes it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
import torch  # noqa: E402

from tools.provenance import RESULTS, command_line, repo_path, write_result_json  # noqa: E402

PATIENCE = 50
OUT = RESULTS / "babi_ceiling_replay.json"


def replay(accuracies: list[float], patience: int = PATIENCE, ceiling: float | None = 1.0,
           ceiling_patience: int | None = None) -> int:
    """Epochs trained under ``dca_course.train._Best``'s rule (a tie keeps the later epoch and
    restarts the count, except, with ``ceiling``, a tie at the ceiling; once there,
    ``ceiling_patience`` replaces ``patience``, 0 stopping at the epoch that gets there)."""
    best, waited = None, 0
    for epoch, acc in enumerate(accuracies, 1):
        at_ceiling = ceiling is not None and best is not None and best >= ceiling
        if best is None or acc >= best:
            best = acc
            if not at_ceiling:
                waited = 0
                if ceiling_patience == 0 and ceiling is not None and best >= ceiling:
                    return epoch
                continue
        waited += 1
        if waited >= (ceiling_patience if at_ceiling and ceiling_patience is not None else patience):
            return epoch
    return len(accuracies)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, help="folder of seed*/task*/last.pt (experiments/babi_real.py --runs)")
    args = parser.parse_args(argv)
    table = json.loads((RESULTS / "babi_real_1k.json").read_text())
    runs, seconds = [], {"trained": 0.0, "replayed": 0.0, "stopped_at_ceiling": 0.0}
    for ckpt in sorted(args.runs.glob("seed*/task*/last.pt")):
        history = torch.load(ckpt, map_location="cpu", weights_only=True)["history"]
        acc = [row["val_accuracy"] for row in history if "val_accuracy" in row]
        seed, name = ckpt.parent.parent.name, ckpt.parent.name
        run = {"run": f"{seed}/{name}", "epochs": len(acc), "replayed": replay(acc), "best": max(acc),
               "stopped_at_ceiling": replay(acc, ceiling_patience=0),
               "without_ceiling": replay(acc, ceiling=None)}
        task, s = str(int(name[4:6])), int(seed[4:])
        if name == f"task{int(task):02d}" and table["epochs"][task][s] == len(acc):   # the kept training: timed
            per_epoch = table["train_seconds"][task][s] / len(acc)
            seconds["trained"] += per_epoch * len(acc)
            seconds["replayed"] += per_epoch * run["replayed"]
            seconds["stopped_at_ceiling"] += per_epoch * run["stopped_at_ceiling"]
        runs.append(run)
    if not runs:
        raise SystemExit(f"ceiling_replay.py: no seed*/task*/last.pt under {args.runs}")
    trained, replayed = sum(r["epochs"] for r in runs), sum(r["replayed"] for r in runs)
    result = {"trainings": len(runs), "epochs_trained": trained, "epochs_replayed": replayed,
              "epoch_share": round(replayed / trained, 4),
              "full_length_at_ceiling": sum(r["epochs"] == 200 and r["best"] >= 1.0 for r in runs),
              "time_share_without_retries": round(seconds["replayed"] / seconds["trained"], 4),
              # version 4's selection trainings: stopped at the epoch held-out first reaches 100%
              "epochs_stopped_at_ceiling": sum(r["stopped_at_ceiling"] for r in runs),
              "time_share_stopped_at_ceiling": round(seconds["stopped_at_ceiling"] / seconds["trained"], 4),
              "rule_reproduced": all(r["without_ceiling"] == r["epochs"] for r in runs),
              "data": repo_path(args.runs), "runs": runs}
    write_result_json(OUT, result, command=command_line(__file__, argv), config={"patience": PATIENCE, "ceiling": 1.0},
                      measures=["tools/ceiling_replay.py", "dca_course/train.py"])
    print({k: v for k, v in result.items() if k != "runs"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
