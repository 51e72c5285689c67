"""results/gpu.md from the logs of tools/gpu_check.sh (``make gpu-check``).

    python tools/gpu_report.py LOGDIR [--seconds N] [--out results/gpu.md]

Reads ``info.json`` (device, driver, versions), ``nb_*.log`` (nbval of one notebook each, ending with
``rc=R wall=S``), ``unit.log``, ``cli_*.log`` (a command line's output, its metrics' JSON last, then
``rc=R wall=S command=...``), ``bench_*.txt`` (a benchmark's output, its JSON last) and
``executed/*.ipynb`` (the notebooks as they ran, for what their GPU timing cells printed), and writes one
Markdown file.  The file says "**All passed.**" only when every notebook, the unit tests and every
command line exited 0; otherwise it lists what failed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
from pathlib import Path

from dca_course.io import write_text

TAIL = re.compile(r"^rc=(?P<rc>-?\d+) wall=(?P<wall>\d+)(?: command=(?P<command>.*))?$")
SUMMARY = re.compile(r"(\d+ (?:passed|failed|skipped|errors?|xfailed|warnings?)(?:, )?)+ in [\d.]+s")


def _tail(text: str) -> dict:
    """The ``rc=... wall=...`` line a log ends with: rc and wall as ints (None when missing: it timed out)."""
    for line in reversed(text.strip().splitlines()):
        m = TAIL.match(line.strip())
        if m:
            return {"rc": int(m["rc"]), "wall": int(m["wall"]), "command": m["command"]}
    return {"rc": None, "wall": None, "command": None}


def _last_json(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def _summary(text: str) -> str:
    found = [m.group(0) for m in SUMMARY.finditer(text)]
    return found[-1] if found else "no pytest summary (timed out?)"


def _failed_cells(text: str) -> list[str]:
    return sorted(set(re.findall(r"FAILED \S+::(Cell \d+)", text)), key=lambda c: int(c.split()[1]))


def _commit() -> str:
    """The checked-out commit (``$GPU_CHECK_COMMIT`` where the copy has no git history)."""
    if os.environ.get("GPU_CHECK_COMMIT"):
        return os.environ["GPU_CHECK_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git here)"


def notebooks(logs: Path) -> tuple[list[str], list[str]]:
    rows, failures = [], []
    for log in sorted(logs.glob("nb_*.log")):
        text = log.read_text(errors="replace")
        tail, name = _tail(text), log.stem[3:]
        ok = tail["rc"] == 0
        cells = _failed_cells(text)
        result = "passed" if ok else ("timed out" if tail["rc"] in (None, 124) else "FAILED " + ", ".join(cells))
        rows.append(f"| {name} | {result} | {_summary(text)} | {tail['wall'] if tail['wall'] is not None else '-'} |")
        if not ok:
            failures.append(f"notebook {name}: {result}")
    return rows, failures


def command_lines(logs: Path) -> tuple[list[str], list[str]]:
    rows, failures = [], []
    for log in sorted(logs.glob("cli_*.log")):
        text = log.read_text(errors="replace")
        tail, metrics = _tail(text), _last_json(text)
        keys = ("accuracy", "exact_match", "rouge1", "rouge2", "rougeLsum", "final_loss", "epochs")
        shown = ", ".join(f"{k} {metrics[k]:.3g}" if isinstance(metrics[k], float) else f"{k} {metrics[k]}"
                          for k in keys if metrics and k in metrics)
        ok = tail["rc"] == 0 and metrics is not None
        rows.append(f"| `{tail['command'] or log.stem}` | {'ran' if ok else 'FAILED'} | {tail['wall'] or '-'} | "
                    f"{shown or '-'} |")
        if not ok:
            failures.append(f"command line {log.stem[4:]}: exit {tail['rc']}")
    return rows, failures


def benchmarks(logs: Path) -> list[str]:
    rows = []
    for name, title in (("bench_lstm_full", "`full` sizes"), ("bench_lstm_fast", "`fast` sizes"),
                        ("bench_lstm_fast_input_feeding", "`fast` sizes, with input feeding")):
        path = logs / f"{name}.txt"
        r = _last_json(path.read_text(errors="replace")) if path.exists() else None
        if r is None:
            rows.append(f"| pointer-generator + coverage training step, {title} | did not finish |")
            continue
        rows.append(f"| pointer-generator + coverage training step, {title} ({r.get('backend', '')}) | "
                    f"{r['model_step_ms']} ms against its LSTM layers' {r['lstm_layers_ms']} ms: **{r['ratio']}x** "
                    f"(medians {r['median_ratio']}x) |")
    path = logs / "bench_beam.txt"
    r = _last_json(path.read_text(errors="replace")) if path.exists() else None
    if r is None:
        rows.append("| beam search, batched against one article at a time | did not finish |")
    else:
        rows.append(f"| beam search (K = {r['beam']}), {r['examples']} articles in batches of {r['batch_size']}, "
                    f"against one at a time | {r['batched_examples_per_s']} against {r['one_by_one_examples_per_s']} "
                    f"articles/s: **{r['speedup']}x**; the same summaries: {r['same_summaries']} |")
    return rows


def _joined(text) -> str:
    """A notebook's text field: a string, or a list of lines as nbformat writes it."""
    return "".join(text) if isinstance(text, list) else text


def _text(cell: dict) -> str:
    return "".join(_joined(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def notebook_timings(logs: Path) -> list[str]:
    """What each executed notebook's GPU timing cells printed (they run only where a GPU is), and any
    error or stderr output of the executed notebooks."""
    lines = []
    for path in sorted((logs / "executed").glob("*.ipynb")):
        cells = [c for c in json.loads(path.read_text()).get("cells", []) if c.get("cell_type") == "code"]
        for c in cells:
            source = _joined(c.get("source", ""))
            if source.startswith("# NBVAL_IGNORE_OUTPUT") and "gpu_present(device)" in source and _text(c).strip():
                lines += [f"{path.stem}:", "```", _text(c).rstrip(), "```", ""]
        for i, c in enumerate(cells):
            deliberate = ("raises-exception" in c.get("metadata", {}).get("tags", [])
                          or "NBVAL_RAISES_EXCEPTION" in _joined(c.get("source", "")))
            for o in c.get("outputs", []):
                if o.get("output_type") == "error" and not deliberate:
                    lines.append(f"{path.stem}, code cell {i}: error {o.get('ename')}: {o.get('evalue', '')[:200]}")
                elif o.get("output_type") == "stream" and o.get("name") == "stderr":
                    lines.append(f"{path.stem}, code cell {i}: stderr `{_joined(o.get('text', '')).strip()[:200]}`")
    return lines


CLAIM = re.compile(r"^claim: (?P<statement>.*): (?P<verdict>holds|FAILS?\w*) \(≈?(?P<value>-?[\d.]+) "
                   r"(?P<op>>=|<=) (?P<bound>-?[\d.]+)\)")
FAILED_CLAIM = re.compile(r"claim failed: (?P<statement>.*): measured (?P<value>-?[\d.]+), needs (?P<op>>=|<=) "
                          r"(?P<bound>-?[\d.]+)")


def claims(logs: Path) -> dict[tuple[str, str], str]:
    """Every trained claim's value in one run: {(notebook, statement): "value (op bound)"}.

    Two executions of each notebook ran: nbval's, which shows a value only when a claim fails (its
    AssertionError), and the executed copy, which prints every claim. Both are the same seed on the
    same GPU, yet not the same numbers: CUDA's atomic additions make training differ from run to run,
    so each counts as one more sample of the claim."""
    found = {}
    for path in sorted((logs / "executed").glob("*.ipynb")):
        for c in json.loads(path.read_text()).get("cells", []):
            for line in _text(c).splitlines() if c.get("cell_type") == "code" else []:
                m = CLAIM.match(line.strip())
                if m:
                    found[(path.stem, m["statement"])] = f"{m['value']} ({m['op']} {m['bound']})"
    for log in sorted(logs.glob("nb_*.log")):
        for m in FAILED_CLAIM.finditer(re.sub(r"\x1b\[[\d;]*m", "", log.read_text(errors="replace"))):
            key = (log.stem[3:], m["statement"])
            found[key] = f"**{m['value']} fails ({m['op']} {m['bound']})**; {found.get(key, '?')}"
    return found


def claims_table(runs: list[tuple[str, Path]]) -> list[str]:
    """One row per claim, one column per run; a claim that failed in nbval's execution shows that value
    first, then the executed copy's."""
    values = [claims(logs) for _, logs in runs]
    keys = sorted({k for v in values for k in v})
    rows = ["| notebook | claim | " + " | ".join(name for name, _ in runs) + " |",
            "|---|---|" + "---|" * len(runs)]
    for nb, statement in keys:
        cells = [v.get((nb, statement), "-") for v in values]
        rows.append(f"| {nb[:2]} | " + statement.replace("|", "\\|") + " | " + " | ".join(cells) + " |")
    return rows


def other_run(logs: Path) -> list[str]:
    """A further run of the notebooks (``--also``: another seed, ``PARTS=notebooks``): its results."""
    info = json.loads((logs / "info.json").read_text()) if (logs / "info.json").exists() else {}
    rows, failures = notebooks(logs)
    return [f"### Seed {info.get('seed', '?')}", "",
            "**All notebooks passed.**" if not failures else "**Failures:** " + "; ".join(failures) + ".", "",
            "| notebook | result | pytest | wall s |", "|---|---|---|---:|", *rows, ""]


def report(logs: Path, seconds: int | None = None, note: str | None = None, also: tuple[Path, ...] = ()) -> str:
    info = json.loads((logs / "info.json").read_text()) if (logs / "info.json").exists() else {}
    nb_rows, nb_fail = notebooks(logs)
    cli_rows, cli_fail = command_lines(logs)
    unit_ran = (logs / "unit.log").exists()      # absent when PARTS left the unit tests out: not a failure
    unit_text = (logs / "unit.log").read_text(errors="replace") if unit_ran else ""
    unit_tail = _tail(unit_text)
    failures = nb_fail + cli_fail + ([] if unit_tail["rc"] == 0 or not unit_ran
                                     else [f"unit tests: exit {unit_tail['rc']}"])
    unit_line = (f"`pytest tests`: {_summary(unit_text)} (exit {unit_tail['rc']}, {unit_tail['wall']} s)."
                 if unit_ran else "Not run (`PARTS` left them out).")
    took = f"; the whole check took {seconds} s" if seconds is not None else ""
    lines = [
        "# The course on a GPU",
        "",
        f"Generated by `make gpu-check` (`tools/gpu_check.sh`, then `python tools/gpu_report.py LOGDIR`) on "
        f"{datetime.date.today().isoformat()}, commit {_commit()}{took}. Hand-written notes belong in "
        "[README.md](README.md), not here.",
        "",
        *([note, ""] if note else []),
        "| | |",
        "|---|---|",
        f"| GPU | {info.get('gpu', '?')} ({info.get('gpu_memory', '?')}), driver {info.get('driver', '?')} |",
        f"| PyTorch | {info.get('torch', '?')}, CUDA {info.get('cuda', '?')}, cuDNN {info.get('cudnn', '?')} |",
        f"| Python, CPU | {info.get('python', '?')}, {info.get('cpu_cores', '?')} cores |",
        "",
        "**All passed.**" if not failures else "**Failures:** " + "; ".join(failures) + ".",
        "",
        "## Notebooks under strict nbval on CUDA",
        "",
        "The README's options (`--nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg`), the "
        f"default device (CUDA), seed {info.get('seed', 0)}; all notebooks at once, one process each, so a wall "
        "time includes waiting "
        "for the GPU and the CPU cores.",
        "",
        "| notebook | result | pytest | wall s |",
        "|---|---|---|---:|",
        *nb_rows,
        "",
        "## Unit tests",
        "",
        unit_line,
        "",
        "## Command lines on CUDA",
        "",
        "| command | result | wall s | final metrics |",
        "|---|---|---:|---|",
        *cli_rows,
        "",
        "## Benchmarks (alone on the GPU, before the rest)",
        "",
        "| benchmark | result |",
        "|---|---|",
        *benchmarks(logs),
        "",
        "## What the GPU buys, as the notebooks print it",
        "",
        "Each notebook's timing cell, from a second execution of it that ran beside all the others (so these "
        "times are indicative; the benchmarks above ran alone), then any error or stderr output of those runs.",
        "",
        *(notebook_timings(logs) or ["(none printed)"]),
        "",
    ]
    if also:
        lines += ["## The notebooks on other seeds", "",
                  "The same check's notebook part (`DCA_SEED=N PARTS=notebooks make gpu-check`), on the same GPU.", "",
                  *[line for extra in also for line in other_run(extra)]]
    runs = [(f"seed {info.get('seed', 0)}", logs)] + [
        (f"seed {json.loads((e / 'info.json').read_text()).get('seed', '?')}", e) for e in also]
    lines += ["## The trained claims on CUDA", "",
              "Each claim's value and bound from every run above. On a GPU the same seed does not give the same "
              "numbers twice (atomic additions in the backward pass), so a claim's margin must cover that too. "
              "A claim that failed under nbval shows nbval's value, then the executed copy's.", "",
              *claims_table(runs), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", type=Path)
    parser.add_argument("--seconds", type=int, default=None, help="the whole check's wall time")
    parser.add_argument("--out", type=Path, default=Path("results/gpu.md"))
    parser.add_argument("--note", default=None, help="one paragraph under the heading, e.g. which runs the logs "
                                                         "come from when they were merged")
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="the logs of a further notebooks-only run (another seed); repeatable")
    args = parser.parse_args(argv)
    write_text(args.out, report(args.logs, args.seconds, args.note, tuple(args.also)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
