"""dca_course.shipped: the stored results and checkpoints a notebook reads, found in a clone or in the wheel's copies,
a checkpoint's weights checked against their recorded sha256, and no notebook reaching for ../results itself."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dca_course import shipped
from dca_course.shipped import SHIPPED_RESULTS, ShippedFileError, checkpoint_folder, results_file

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = "dca3-synthnews-long"


def test_in_a_clone_the_repository_folders_are_read():
    assert all(results_file(name) == ROOT / "results" / name and results_file(name).is_file()
               for name in SHIPPED_RESULTS)
    assert checkpoint_folder(CHECKPOINT) == ROOT / "data" / "checkpoints" / CHECKPOINT


def test_a_result_the_wheel_does_not_ship_is_refused_in_a_clone_too():
    assert (ROOT / "results" / "step_profile.json").is_file()
    with pytest.raises(KeyError, match="SHIPPED_RESULTS"):
        results_file("step_profile.json")


@pytest.fixture()
def packaged(tmp_path, monkeypatch):
    """A package folder holding copies as the wheel does (shipped_files/), with the checkpoint copied in."""
    package = tmp_path / "dca_course"
    copy = package / shipped.PACKAGED / "checkpoints" / CHECKPOINT
    shutil.copytree(ROOT / "data" / "checkpoints" / CHECKPOINT, copy)
    (package / shipped.PACKAGED / "results").mkdir()
    monkeypatch.setattr(shipped, "_PACKAGE", package)
    return copy


def test_the_packaged_copies_win_where_the_package_has_them(packaged):
    assert checkpoint_folder(CHECKPOINT) == packaged
    assert results_file("dca.json").parent == packaged.parents[1] / "results"


def test_a_damaged_checkpoint_is_refused(packaged):
    record = json.loads((packaged / "checkpoint.json").read_text())["file"]
    weights = bytearray((packaged / record["name"]).read_bytes())
    weights[len(weights) // 2] ^= 1                                    # one bit
    (packaged / record["name"]).write_bytes(bytes(weights))
    with pytest.raises(ShippedFileError, match="sha256"):
        checkpoint_folder(CHECKPOINT)


# A notebook that builds a path to the repository's folders itself: it works in a clone and fails on Colab.
BY_HAND = re.compile(r"""["']\.\.["']\s*\)\s*/\s*["'](results|data)["']|["']\.\./(results|data)/""")


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_open_stored_files_only_through_shipped(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    by_hand = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and BY_HAND.search("".join(c["source"]))]
    assert not by_hand, f"{path.name}: cells {by_hand} build a path to results/ or data/; use dca_course.shipped"
