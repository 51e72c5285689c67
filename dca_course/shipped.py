"""The files the notebooks read beside the library: stored results and trained checkpoints.

The repository keeps one copy of each, where the experiments write them: ``results/`` and ``data/checkpoints/``.
Building the wheel copies the stored results named in :data:`SHIPPED_RESULTS` and every checkpoint folder into the
package (``setup.py``), so a pip install with no repository beside it (Colab) reads the same files:

    stored = json.loads(results_file("dca.json").read_text(encoding="utf-8"))
    recipe, model, vocab, _ = load_run(checkpoint_folder("dca3-synthnews-long"), device)

A checkpoint folder holds ``checkpoint.json`` and the file it records (``"file": {"name", "sha256", ...}``):
:func:`checkpoint_folder` checks that file's sha256 before it hands the folder out.

It imports only the standard library and the package's errors (the basics layer), and ``setup.py`` reads its two
constants as text, so that building the wheel imports nothing of the package (and needs no PyTorch).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .errors import InputError

__all__ = ["SHIPPED_RESULTS", "ShippedFileError", "checkpoint_folder", "results_file"]

#: The files of ``results/`` that a notebook reads (03, 03b, 05, 06, 07, 08 and 08's scoreboard): the wheel ships these
#: and no others, and :func:`results_file` refuses any other name, in a clone too, so that a notebook that reads a
#: new result fails where it is written rather than on Colab.
SHIPPED_RESULTS = (
    "babi_ceiling_replay.json", "babi_real_1k.json", "babi_selection.json", "cnndm_dca.json", "cnndm_real.json",
    "communication.json", "copying.json", "dca.json", "dmn_diagnosis.json", "lstm_limit_fast.json",
    "lstm_limit_full.json", "misattribution.json", "notebook_claims.json", "opennmt_throughput.json", "rl_dca.json",
)

#: The package's folder that holds the wheel's copies: ``results/NAME`` and ``checkpoints/NAME/...``.
PACKAGED = "shipped_files"

_PACKAGE = Path(__file__).resolve().parent


class ShippedFileError(InputError):
    """A shipped file that is not what its record says (a damaged or half-copied checkpoint)."""


def _home(folder: str, repository_folder: str) -> Path:
    """Where the files of ``folder`` are read: the wheel's copies where the package holds them, else the
    repository the package lives in (a git clone, installed editable or not at all). The copies are checked
    first so that an installed wheel never reads a folder that happens to lie beside its site-packages."""
    packaged = _PACKAGE / PACKAGED / folder
    return packaged if packaged.is_dir() else _PACKAGE.parent / repository_folder


def results_file(name: str) -> Path:
    """The path of the stored result ``name`` ("dca.json"), whether the course runs from a clone or a wheel."""
    if name not in SHIPPED_RESULTS:
        raise KeyError(f"results/{name} does not ship with the wheel: add it to dca_course.shipped.SHIPPED_RESULTS")
    return _home("results", "results") / name


def checkpoint_folder(name: str) -> Path:
    """The folder of the shipped checkpoint ``name`` ("dca3-synthnews-long"), its weights checked against the
    sha256 that its ``checkpoint.json`` records (a few milliseconds for the course's checkpoints)."""
    folder = _home("checkpoints", "data/checkpoints") / name
    record = json.loads((folder / "checkpoint.json").read_text(encoding="utf-8"))["file"]
    weights = folder / record["name"]
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    if digest != record["sha256"]:
        raise ShippedFileError(f"{weights}: sha256 {digest}, but checkpoint.json records {record['sha256']}")
    return folder
