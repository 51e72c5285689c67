"""What the scripts of ``experiments/``, ``benchmarks/`` and ``tools/`` share: where things are,
the machine they ran on, and how results are written with their provenance (``results/``).

A script runs as ``python FOLDER/NAME.py`` from the repository root.  Its first lines put the
repository root first on ``sys.path`` (the one path line of a script; CONTRIBUTING.md, "Scripts"):

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root
    from tools.provenance import ROOT, command_line, write_report

so that it imports this module, ``benchmarks.timing`` (the timing of training steps) or
``tools.notebook_times`` as modules of the repository, and measures the ``dca_course`` of the
checkout it lives in, installed or not.  This module changes no path itself.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"

import torch  # noqa: E402

from dca_course.io import write_json, write_lines, write_text  # noqa: E402  (re-exported for the scripts)

__all__ = ["ROOT", "RESULTS", "repo_path", "cpu_name", "cpu_model", "machine_speed", "write_json", "write_lines", "write_text",
           "write_report", "write_result_json", "provenance", "command_line", "machine", "generated_by",
           "with_generated_line", "code_only", "code_fingerprint", "train_command", "TRAINING_CODE", "POINTER_GENERATOR_CODE", "SUMMARIZER_CODE", "DMN_CODE"]


# -- the machine -----------------------------------------------------------------------------------
def cpu_name() -> str:
    """The processor's name where the system gives one (often empty on Linux), else the architecture."""
    return platform.processor() or platform.machine()


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``'s "model name", e.g. "AMD EPYC 9B14"), else
    :func:`cpu_name`: what a statement of time names beside the figure."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return cpu_name()


def machine_speed() -> float | None:
    """Milliseconds of one `lstm_limit.py --profile fast` training step here: the machine's speed."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lstm_limit.py"), "--steps", "10",
                           "--articles", "200"], capture_output=True, text=True, cwd=ROOT)
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            return round(json.loads(line)["model_step_ms"], 1)
    return None


# -- results ---------------------------------------------------------------------------------------
#: The code a result measures (repository paths), for its provenance's ``measures``.
TRAINING_CODE = ["dca_course/nn", "dca_course/losses.py", "dca_course/decoding.py", "dca_course/train.py",
                 "dca_course/recipes/base.py", "dca_course/recipes/config.py", "dca_course/data/batching.py",
                 "dca_course/data/vocab.py", "dca_course/metrics.py"]
POINTER_GENERATOR_CODE = TRAINING_CODE + ["dca_course/models/pointer_generator.py", "dca_course/recipes/copying.py",
                                          "dca_course/data/synthnews", "dca_course/fast"]
SUMMARIZER_CODE = POINTER_GENERATOR_CODE + ["dca_course/models/copynet.py", "dca_course/models/dca.py",
                                            "dca_course/recipes/dca.py", "dca_course/data/agents.py"]
DMN_CODE = TRAINING_CODE + ["dca_course/models/dmn.py", "dca_course/models/dmn_gate.py", "dca_course/models/extensions",
                            "dca_course/models/dmn_eval.py", "dca_course/recipes/dmn.py", "dca_course/data/babi"]


# -- the code a kept run ran -----------------------------------------------------------------------
def code_only(source: str) -> str:
    """``source``'s syntax tree without its docstrings (a module's, class's or function's first
    string), as text: equal for two sources exactly when they differ only in comments, docstrings
    and layout."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


def code_fingerprint(paths, leave_out=()) -> str:
    """sha256 (16 hex digits) of every Python file under ``paths`` (repository paths) but those in
    ``leave_out``, as code (:func:`code_only`): a script reads a kept training back only under the same
    fingerprint, so that a table never mixes two versions of the model, while mending a docstring
    discards nothing."""
    h = hashlib.sha256()
    skipped = {ROOT / p for p in leave_out}
    for top in paths:
        path = ROOT / top
        for f in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            if f in skipped:
                continue
            h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + code_only(f.read_text()).encode() + b"\0")
    return h.hexdigest()[:16]


def train_command(model: str, data: str, settings: dict, seed: int, profile: str = "full") -> str:
    """The ``python -m dca_course train`` line that trains ``model`` on ``data`` with the knobs
    ``settings`` ({knob name: value}, each spelled as its flag; a boolean as ``--x`` or ``--no-x``)."""
    from dca_course.recipes.config import flag_name

    words = []
    for name, value in settings.items():
        flag = flag_name(name)
        words.append(flag if value is True else flag.replace("--", "--no-", 1) if value is False
                     else f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}")
    return f"python -m dca_course train {model} --data {data} --profile {profile} --seed {seed} " + " ".join(words)


def repo_path(path) -> str:
    """``path`` as results store it: relative to the repository (``../shared/data/babi`` for a
    folder beside the checkout), never absolute, so that a results file names no home folder.

    Symbolic links are kept as written: a ``../shared`` that links to another disk is stored as
    ``../shared/...``, not as the path to where the link points (``../../../mnt/.../shared``),
    which would differ from one machine to the next."""
    written = Path(os.path.abspath(Path(path).expanduser()))     # `..` folded, links left alone
    # The repository's folder and the ones above it, each against the folders above `path` as
    # written: the first pair that is the same folder (however either is spelled) is where the
    # relative path starts.
    for ups, root in enumerate([ROOT, *ROOT.parents]):
        for above in [written, *written.parents]:
            if _same_folder(above, root):
                rest = written.relative_to(above).as_posix()
                return "/".join([".."] * ups + ([rest] if rest != "." else [])) or "."
    return Path(os.path.relpath(written, ROOT)).as_posix()      # not reached: `/` is above both


def _same_folder(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:          # one of them does not exist
        return False


def git_commit() -> tuple[str | None, bool]:
    """(HEAD's commit, whether the checkout has uncommitted changes to tracked files); (None, False)
    outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, cwd=ROOT, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None, False
    return head.stdout.strip(), bool(dirty.stdout.strip())


def command_line(script: str, argv=None) -> str:
    """``python FOLDER/SCRIPT.py ARGS`` as it was run (``script``: the script's ``__file__``, shown
    with its own folder: ``experiments``, ``benchmarks`` or ``tools``; ``argv``: the arguments,
    default ``sys.argv[1:]``), absolute paths made relative to the repository (see :func:`repo_path`)."""
    args = sys.argv[1:] if argv is None else list(argv)
    shown = [repo_path(a) if os.path.isabs(a) else a for a in map(str, args)]
    script = Path(script)
    return " ".join(["python", f"{script.parent.name}/{script.name}", *(shlex.quote(a) for a in shown)])


def machine() -> dict:
    """What the run ran on: processor, cores, torch's threads, the OS, Python, PyTorch, and the GPU."""
    return {"cpu": cpu_name(), "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "system": platform.system(), "python": platform.python_version(), "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def provenance(command: str, config: dict | None, measures: list[str]) -> dict:
    """What made a result: the commit (and whether the checkout had changes), the command, the
    full configuration, the machine, the date, and ``measures``: the repository paths whose code
    the result measures (``make results-status`` lists a result older than their last change)."""
    commit, dirty = git_commit()
    return {"commit": commit, "uncommitted_changes": dirty, "command": command,
            "config": _relative(json.loads(json.dumps(config, default=str))) if config is not None else None,
            "machine": machine(), "date": time.strftime("%Y-%m-%d", time.gmtime()), "measures": list(measures)}


def _relative(obj):
    """Absolute paths in a configuration made relative to the repository."""
    if isinstance(obj, dict):
        return {k: _relative(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_relative(v) for v in obj]
    return repo_path(obj) if isinstance(obj, str) and os.path.isabs(obj) else obj


def generated_by(command: str, notes: str | None = None) -> str:
    """The line a generated Markdown file starts with (after its title)."""
    line = f"Generated by `{command}`; do not edit: a new run rewrites this file."
    if notes:
        line += f" Hand-written notes on it: [{notes}]({notes})."
    return line


def with_generated_line(markdown: str, command: str, notes: str | None = None) -> str:
    """``markdown`` with :func:`generated_by`'s line after its ``# title`` (or first)."""
    lines = markdown.split("\n")
    at = 2 if lines and lines[0].startswith("# ") else 0
    return "\n".join(lines[:at] + [generated_by(command, notes), ""] + lines[at:])


def write_result_json(path: Path, data: dict, *, command: str, config: dict | None, measures: list[str]) -> Path:
    """``data`` with its ``provenance`` (:func:`provenance`) as indented JSON, atomically."""
    return write_json(path, dict(data, provenance=provenance(command, config, measures)))


def write_report(folder: Path, name: str, data, markdown: str, *, command: str, config: dict | None,
                 measures: list[str]) -> tuple[Path, Path]:
    """``folder/name.json`` (with its provenance) and ``folder/name.md`` (with its "Generated by"
    line), each written atomically.  Hand-written notes live in ``name_notes.md`` beside them,
    which no script writes; the Markdown links it when it is there."""
    folder = Path(folder)
    notes = f"{name}_notes.md" if (folder / f"{name}_notes.md").is_file() else None
    return (write_result_json(folder / f"{name}.json", data, command=command, config=config, measures=measures),
            write_text(folder / f"{name}.md", with_generated_line(markdown, command, notes)))
