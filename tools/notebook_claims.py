"""Run the notebooks under strict nbval on several seeds (and, optionally, another CPU kernel
path), and report what held: each run's result and time, every asserted claim's value on each
seed with its bound and worst case, and what nbval compares in each notebook.

    python tools/notebook_claims.py                      # seeds 1 and 2 (`make claims`)
    python tools/notebook_claims.py --seeds 0 1 2 --cpu-capability default --out results
    python tools/notebook_claims.py --seeds 0 --times    # also rewrite the measured times table
    python tools/notebook_claims.py 05 --seeds --cpu-capability default   # only seed 0 on the scalar kernels
    ATEN_CPU_CAPABILITY=default python tools/notebook_claims.py 05 --seeds 0 1 2   # every seed on the scalar kernels

A run is one notebook under ``pytest --nbval`` with ``DCA_SEED`` set (and ``ATEN_CPU_CAPABILITY``
for the ``--cpu-capability`` runs, a stand-in for another processor).  Each ``claim(...)`` in a
notebook logs its measured value to ``$DCA_CLAIMS_LOG``; this script gives every run its own log
and collects them.  ``--out DIR`` writes ``notebook_claims.md`` and ``.json`` there.  ``--times``
writes the seed-0 CPU times (one thread: the wall time of the notebook run alone) to ``notebooks/times.json`` and regenerates the
time shown in the README, notebook 00's map and each notebook's first cell from it
(``tools/notebook_times.py``).  Exits 1 if any run failed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import ROOT, machine_speed, write_report  # noqa: E402
from tools.notebook_times import TIMES, load_times, update_times  # noqa: E402  (the table this script updates)

NOTEBOOKS = ROOT / "notebooks"
SANITIZE = NOTEBOOKS / "sanitize.cfg"


def nbval_command(notebook: Path) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
            "--nbval-sanitize-with", str(SANITIZE), "--nbval-cell-timeout", "900", "--durations=0", str(notebook)]


def gpu_cells(notebook: Path) -> set[int]:
    """nbval's numbers (code cells, from 0) of the "On a GPU / at full size" cells."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return {i for i, c in enumerate(code) if "on_this_machine(" in "".join(c["source"])
            or "full_requested(" in "".join(c["source"])}


def cell_seconds(pytest_output: str) -> dict[int, float]:
    """Each cell's run time, from pytest's --durations table ("12.34s call  path::Cell 7")."""
    found = {}
    for m in re.finditer(r"^([\d.]+)s call\s+\S+::Cell (\d+)\s*$", pytest_output, flags=re.MULTILINE):
        found[int(m.group(2))] = float(m.group(1))
    return found


def run_one(notebook: Path, seed: int, capability: str | None, log_dir: Path) -> dict:
    """One notebook under nbval; returns its result, times and the claims it logged.  An
    ``ATEN_CPU_CAPABILITY`` already set in the environment labels the run as ``capability`` would."""
    capability = capability or os.environ.get("ATEN_CPU_CAPABILITY") or None
    tag = f"{notebook.stem}-seed{seed}" + (f"-{capability}" if capability else "")
    claims_log = log_dir / f"{tag}.jsonl"
    claims_log.unlink(missing_ok=True)
    env = {**os.environ, "DCA_SEED": str(seed), "DCA_CLAIMS_LOG": str(claims_log), "OMP_NUM_THREADS": "1"}
    env.pop("DCA_FULL", None)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(nbval_command(notebook), cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    (log_dir / f"{tag}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    summary = (proc.stdout.strip().splitlines() or [""])[-1]
    cells = cell_seconds(proc.stdout)
    slowest = max(cells.items(), key=lambda kv: kv[1]) if cells else (None, 0.0)
    claims = [json.loads(line) for line in claims_log.read_text(encoding="utf-8").splitlines()] \
        if claims_log.is_file() else []
    return {"notebook": notebook.stem, "seed": seed, "cpu_capability": capability or "", "passed": proc.returncode == 0,
            "summary": summary, "wall_s": round(wall, 1),
            "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
            "slowest_cell": slowest[0], "slowest_cell_s": round(slowest[1], 1),
            "gpu_cells_s": round(max([cells.get(i, 0.0) for i in gpu_cells(notebook)], default=0.0), 2),
            "claims": claims}


def _sanitize(text: str, patterns) -> str:
    for regex, replace in patterns:
        text = re.sub(regex, replace, text)
    return text


def audit(notebook: Path) -> dict:
    """What nbval does with each output-bearing code cell of the stored notebook."""
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns(SANITIZE.read_text(encoding="ascii"))
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    counts = {"output_cells": 0, "exact": 0, "partly_masked": 0, "ignored": 0, "image_only": 0, "claims": 0}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        counts["claims"] += len(re.findall(r"\bclaim\(", src))
        if not cell.get("outputs"):
            continue
        counts["output_cells"] += 1
        if "NBVAL_IGNORE_OUTPUT" in src or "NBVAL_SKIP" in src:
            counts["ignored"] += 1
            continue
        texts = [("".join(o["text"]) if "text" in o else "".join(o.get("data", {}).get("text/plain", "")))
                 for o in cell["outputs"] if o["output_type"] != "error"]
        texts = [t for t in texts if t and not t.startswith("<Figure")]
        if not texts:
            counts["image_only"] += 1
        elif any(_sanitize(t, patterns) != t for t in texts):
            counts["partly_masked"] += 1
        else:
            counts["exact"] += 1
    return counts


def claim_table(runs: list[dict]) -> list[dict]:
    """One row per (notebook, claim): its bound and its value in every run, and the worst."""
    rows: dict[tuple, dict] = {}
    for run in runs:
        label = f"seed {run['seed']}" + (f", {run['cpu_capability']}" if run["cpu_capability"] else "")
        for c in run["claims"]:
            row = rows.setdefault((run["notebook"], c["claim"]), {
                "notebook": run["notebook"], "claim": c["claim"], "op": c["op"], "bound": c["bound"], "values": {}})
            row["values"][label] = c["value"]
    for row in rows.values():
        values = list(row["values"].values())
        row["worst"] = min(values) if row["op"] == ">=" else max(values)
        row["held"] = row["worst"] >= row["bound"] if row["op"] == ">=" else row["worst"] <= row["bound"]
    return list(rows.values())


def _resolve(arg: Path) -> Path:
    """A notebook's path, or its number (``05``, ``03b``) -> notebooks/05_*.ipynb."""
    if arg.exists() or not re.fullmatch(r"\d+[a-z]?", str(arg)):
        return arg.resolve()
    found = sorted(NOTEBOOKS.glob(f"{str(arg).zfill(2 + (not str(arg).isdigit()))}_*.ipynb"))
    if len(found) != 1:
        raise SystemExit(f"no single notebook numbered {arg} in {NOTEBOOKS}")
    return found[0]


def write_results(out_dir: Path, runs: list[dict], notebooks: list[Path], speed, commands: list[str]) -> None:

    claims = claim_table(runs)
    audits = {nb.stem: audit(nb) for nb in notebooks}
    commands = [re.sub(r" --(?:out|log-dir) \S+", "", c) for c in commands]   # no scratch paths in results
    out_dir.mkdir(parents=True, exist_ok=True)
    write_report(out_dir, "notebook_claims",
                 {"command": " && ".join(commands), "machine": platform.machine(), "lstm_limit_fast_step_ms": speed,
                  "runs": runs, "claims": claims, "audit": audits},
                 markdown(runs, claims, audits, speed, commands), command=" && ".join(commands),
                 config={"notebooks": [nb.name for nb in notebooks]},
                 # the notebooks run and what nbval reads, not the whole folder: --times writes times.json there
                 measures=[nb.relative_to(ROOT).as_posix() for nb in notebooks]
                 + [SANITIZE.relative_to(ROOT).as_posix(), "dca_course"])


def markdown(runs, claims, audits, speed, commands) -> str:
    out = ["# Notebooks under strict nbval on several seeds", "",
           "Made by " + " and ".join(f"`{c}`" for c in commands)
           + f" on {platform.machine()} ({os.cpu_count()} cores, one thread per notebook"
           + (f"; this machine's speed: a `lstm_limit.py --profile fast` step took {speed:.0f} ms" if speed else "")
           + ").", "",
           "## Runs", "", "| notebook | run | result | wall s | CPU s | slowest cell (s) | slowest GPU-section cell (s) |",
           "|---|---|---|---|---|---|---|"]
    for r in runs:
        label = f"DCA_SEED={r['seed']}" + (f", ATEN_CPU_CAPABILITY={r['cpu_capability']}" if r["cpu_capability"] else "")
        out.append(f"| {r['notebook']} | {label} | {'passed' if r['passed'] else 'FAILED'}: {r['summary']} "
                   f"| {r['wall_s']:.0f} | {r['cpu_s']:.0f} | cell {r['slowest_cell']}: {r['slowest_cell_s']:.0f} "
                   f"| {r['gpu_cells_s']:.2f} |")
    out += ["", "## What nbval compares (stored notebooks)", "",
            "| notebook | code cells with output | exactly compared | partly masked (trained values) | ignored "
            "| image only | claims |", "|---|---|---|---|---|---|---|"]
    for name, a in audits.items():
        out.append(f"| {name} | {a['output_cells']} | {a['exact']} | {a['partly_masked']} | {a['ignored']} "
                   f"| {a['image_only']} | {a['claims']} |")
    labels = sorted({k for c in claims for k in c["values"]})
    out += ["", "## Claims: the bound each notebook asserts, and the value measured in each run", "",
            "| notebook | claim | bound | " + " | ".join(labels) + " | worst | held |",
            "|---|---|---|" + "---|" * len(labels) + "---|---|"]
    for c in claims:
        vals = " | ".join(f"{c['values'][k]:.3f}" if k in c["values"] else "" for k in labels)
        out.append(f"| {c['notebook']} | {c['claim']} | {c['op']} {c['bound']} | {vals} | {c['worst']:.3f} "
                   f"| {'yes' if c['held'] else 'NO'} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="paths, or numbers such as 05 (default: every notebook)")
    parser.add_argument("--seeds", type=int, nargs="*", default=[1, 2],
                        help="DCA_SEED values (default: 1 2); none with --cpu-capability runs only its seed-0 runs")
    parser.add_argument("--cpu-capability", default=None,
                        help="also run seed 0 with ATEN_CPU_CAPABILITY set to this (e.g. default)")
    parser.add_argument("--out", type=Path, default=None, help="write notebook_claims.md/.json here")
    parser.add_argument("--times", action="store_true",
                        help="write the seed-0 wall times to notebooks/times.json and regenerate the docs from it")
    parser.add_argument("--log-dir", type=Path, default=None, help="keep each run's nbval log here")
    parser.add_argument("--combine", type=Path, nargs="+", default=None, metavar="JSON",
                        help="run nothing: merge the runs of earlier notebook_claims.json files into --out")
    args = parser.parse_args(argv)
    if args.combine:
        if not args.out:
            parser.error("--combine needs --out")
        earlier = [json.loads(p.read_text(encoding="utf-8")) for p in args.combine]
        runs = [r for e in earlier for r in e["runs"]]
        # the speed recorded with the times (measured on a quiet machine), else the runs' own
        speed = (load_times().get("lstm_limit_fast_step_ms") if TIMES.is_file() else None) or next(
            (e["lstm_limit_fast_step_ms"] for e in earlier if e.get("lstm_limit_fast_step_ms")), None)
        notebooks = sorted({NOTEBOOKS / f"{r['notebook']}.ipynb" for r in runs})
        write_results(args.out, runs, notebooks, speed, [e["command"] for e in earlier])
        return 0 if all(r["passed"] for r in runs) else 1
    notebooks = [_resolve(p) for p in args.notebooks] or sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="dca-claims-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    configs = [(seed, None) for seed in args.seeds] + ([(0, args.cpu_capability)] if args.cpu_capability else [])
    runs = []
    for seed, capability in configs:
        for nb in notebooks:
            run = run_one(nb, seed, capability, log_dir)
            runs.append(run)
            print(f"{run['notebook']:<32} seed {seed} {capability or '':<8} "
                  f"{'passed' if run['passed'] else 'FAILED'} {run['wall_s']:>6.0f} s wall {run['cpu_s']:>6.0f} s CPU"
                  f"  {len(run['claims'])} claims  ({run['summary']})", flush=True)
    for c in claim_table(runs):
        if not c["held"]:
            print(f"claim did not hold: {c['notebook']}: {c['claim']}: worst {c['worst']:.3f}, bound {c['op']} {c['bound']}")
    speed = machine_speed() if (args.out or args.times) else None
    if args.out:
        # a capability set in the environment labels every run (run_one): the command says so
        env = f"ATEN_CPU_CAPABILITY={os.environ['ATEN_CPU_CAPABILITY']} " if os.environ.get("ATEN_CPU_CAPABILITY") else ""
        command = env + "python tools/notebook_claims.py " + " ".join(sys.argv[1:] if argv is None else argv)
        write_results(args.out, runs, notebooks, speed, [command])
    if args.times:
        # CPU seconds (the kernel's and pytest's): what a one-thread notebook takes alone, and not
        # inflated when another job shares the machine, as wall time is
        seed0 = {r["notebook"]: r["cpu_s"] for r in runs if r["seed"] == 0 and not r["cpu_capability"]}
        if not seed0:
            parser.error("--times needs a seed-0 run (--seeds 0 ...)")
        update_times(seed0, speed)
    print(f"nbval logs: {log_dir}")
    return 0 if all(r["passed"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
