"""Measure the exercises that drive training (02.3, 07.3) with their solutions, over seeds.

In a stored notebook these exercises hold the learner's stub, so the notebook runs (``make claims``)
never train them; their floors are measured here instead, with the solution of the exercise they use
(02.1's attention, 07.1's self-critical loss), on seeds 0, 1 and 2 and on seed 0 with ATen's scalar
kernels, and written to ``results/exercise_claims.{json,md}``:

    python tools/exercise_claims.py                 # both, seeds 0 1 2 + ATEN_CPU_CAPABILITY=default
    python tools/exercise_claims.py --only 02.3

02.3 calls ``check_attention_trains`` on notebook 02's data; 07.3 executes a copy of notebook 07 whose
``self_critical`` stub is replaced by the solution's body, and reads the value its claim logs.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import ROOT, RESULTS, write_report  # noqa: E402

CONFIGS = [(0, ""), (1, ""), (2, ""), (0, "default")]

MEASURE_02 = """
import json, sys, torch
import dca_course
dca_course.configure_process()          # before any tensor operation, as a notebook's setup() does
from dca_course.data import Vocab
from dca_course.data.toy import load_toy
from dca_course.exercises import load_solution
from dca_course.exercises.training import check_attention_trains
import dca_course.exercises.training as training
train, valid, test = load_toy("dates", 6000, 200, 500, seed=0)     # notebook 02's data
vocab = Vocab.build([ex.source + ex.target for ex in train])
seen = {}
real = training._exact_match
training._exact_match = lambda *a, **k: seen.setdefault("score", real(*a, **k))
check_attention_trains(load_solution("02.1")[0], train, test, vocab, epochs=4, floor=0.0, seed=int(sys.argv[1]))
print("RESULT", json.dumps(seen["score"]))
"""

SOLUTION_07 = """    advantage = (r_sample - r_greedy).detach()                    # the solution of exercise 07.1
    summed = (sample_lp * mask.to(sample_lp.dtype)).sum(dim=1)
    return -(advantage * summed).mean()"""


def _env(seed: int, capability: str) -> dict:
    env = {**os.environ, "DCA_SEED": str(seed), "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    env.pop("DCA_FULL", None)
    env.pop("ATEN_CPU_CAPABILITY", None)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    return env


def measure_02(seed: int, capability: str) -> float:
    out = subprocess.run([sys.executable, "-c", MEASURE_02, str(seed)], env=_env(seed, capability),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(re.search(r"^RESULT (.*)$", out, re.MULTILINE).group(1))


def measure_07(seed: int, capability: str, scratch: Path) -> float:
    nb = json.loads((ROOT / "notebooks" / "07_reinforcement_learning.ipynb").read_text(encoding="utf-8"))
    stub = [c for c in nb["cells"] if c["cell_type"] == "code" and '"""Exercise 07.1' in "".join(c["source"])]
    exercise = [c for c in nb["cells"] if c["cell_type"] == "code" and "def rl_with(" in "".join(c["source"])]
    assert len(stub) == 1 and len(exercise) == 1, "notebook 07 has no stub 07.1 or no exercise 07.3"
    src = "".join(stub[0]["source"])
    stub[0]["source"] = src.replace("    raise NotImplementedError   # your code here", SOLUTION_07)
    src = "".join(exercise[0]["source"])
    exercise[0]["source"] = re.sub(r"at_least=[-\d.]+", "at_least=-1e9", src)      # measure, never fail
    copy = scratch / f"07-{seed}{capability}.ipynb"       # notebook 07 reads no file by a relative path
    log = scratch / f"07-{seed}{capability}.jsonl"
    copy.write_text(json.dumps(nb), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                    "--ExecutePreprocessor.timeout=1800", "--output", f"executed-07-{seed}{capability}",
                    "--output-dir", str(scratch), str(copy)],
                   env={**_env(seed, capability), "DCA_CLAIMS_LOG": str(log)}, check=True, capture_output=True)
    values = [json.loads(line)["value"] for line in log.read_text(encoding="utf-8").splitlines()
              if json.loads(line)["claim"].startswith("your self-critical loss")]
    assert len(values) == 1, values
    return values[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["02.3", "07.3"], default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    measures = {"02.3": ("test exact match of Seq2Seq with the solution's dot-product attention, 4 epochs", measure_02),
                "07.3": ("sampled ROUGE-L on 100 held-out articles, RL with the solution's loss minus the trained DCA "
                         "it starts from (points)", None)}
    previous = json.loads((args.out / "exercise_claims.json").read_text()) if (args.out / "exercise_claims.json").is_file() \
        else {"exercises": {}}
    exercises = previous["exercises"]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        for key, (what, fn) in measures.items():
            if args.only and key != args.only:
                continue
            values = {}
            for seed, capability in CONFIGS:
                label = f"seed {seed}" + (f", {capability}" if capability else "")
                values[label] = fn(seed, capability) if fn else measure_07(seed, capability, Path(scratch))
                print(f"{key} {label}: {values[label]:.4f}", flush=True)
            exercises[key] = {"measures": what, "values": values, "worst": min(values.values())}
    command = "python tools/exercise_claims.py" + (f" --only {args.only}" if args.only else "")
    payload = {"command": command, "machine": platform.machine(), "wall_seconds": round(time.perf_counter() - started),
               "exercises": exercises}
    rows = ["# The training exercises, measured with their solutions", "", f"On {platform.machine()} (one thread).", "", "| exercise | measures | " +
            " | ".join(label for label in next(iter(exercises.values()))["values"]) + " | worst |",
            "|---|---|" + "---|" * (len(next(iter(exercises.values()))["values"]) + 1)]
    for key, e in sorted(exercises.items()):
        rows.append(f"| {key} | {e['measures']} | " + " | ".join(f"{v:.3f}" for v in e["values"].values())
                    + f" | {e['worst']:.3f} |")
    write_report(args.out, "exercise_claims", payload, "\n".join(rows) + "\n", command=command,
                 config={"only": args.only, "configs": [list(c) for c in CONFIGS]},
                 measures=["tools/exercise_claims.py", "dca_course/exercises", "notebooks/02_attention_seq2seq.ipynb",
                           "notebooks/07_reinforcement_learning.ipynb"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
