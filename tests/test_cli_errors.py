"""Bad input on the command line: one line `dca-course: error: ...`, exit 2, no traceback.

Each case runs the real command in a subprocess, as a learner would, and checks the whole of
stderr, so that a traceback (or PyTorch's page on weights_only) cannot creep back in.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "dca_course", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT)


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dca-course: error: "), lines[0]
    assert "Traceback" not in result.stderr
    return lines[0][len("dca-course: error: "):]


@pytest.fixture()
def bad_babi_folder(tmp_path):
    """A v1.2 folder whose task 1 training file has a line without an integer id (line 3)."""
    en = tmp_path / "en"
    en.mkdir()
    train = en / "qa1_single-supporting-fact_train.txt"
    train.write_text("1 Mary moved to the bathroom.\n2 John went to the hallway.\n"
                     "three Where is Mary?\tbathroom\t1\n", encoding="utf-8")
    (en / "qa1_single-supporting-fact_test.txt").write_text(
        "1 Mary moved to the bathroom.\n2 Where is Mary?\tbathroom\t1\n", encoding="utf-8")
    return tmp_path, train


def test_malformed_babi_file_names_file_and_line(bad_babi_folder):
    folder, train = bad_babi_folder
    message = one_line_error(run_cli("train", "dmn", "--data", f"babi:{folder}:1", "--quiet"))
    assert message.startswith(f"{train}:3: "), message
    assert "integer id" in message


def test_debug_shows_the_traceback(bad_babi_folder):
    folder, _ = bad_babi_folder
    result = run_cli("train", "dmn", "--data", f"babi:{folder}:1", "--quiet", "--debug")
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "BabiFormatError" in result.stderr


def test_unknown_data_spec():
    message = one_line_error(run_cli("train", "dmn", "--data", "nope:1"))
    assert "unknown data spec 'nope:1'" in message and "babi:TASK" in message


def test_bad_babi_task():
    message = one_line_error(run_cli("train", "dmn", "--data", "babi:7x"))
    assert "'7x'" in message


def test_garbage_checkpoint(tmp_path):
    (tmp_path / "last.pt").write_text("not a checkpoint\n")
    message = one_line_error(run_cli("evaluate", str(tmp_path)))
    assert message.startswith(f"{tmp_path / 'last.pt'}: cannot read this checkpoint"), message
    assert "weights_only" not in message


def test_missing_checkpoint(tmp_path):
    message = one_line_error(run_cli("evaluate", str(tmp_path)))
    assert message == f"{tmp_path / 'last.pt'}: no such checkpoint file"


def test_cnndm_folder_without_data(tmp_path):
    message = one_line_error(run_cli("train", "pointer-generator", "--data", f"cnndm:{tmp_path}"))
    assert "no CNN/DailyMail data" in message and str(tmp_path) in message


def test_cnndm_folder_that_does_not_exist(tmp_path):
    message = one_line_error(run_cli("train", "pointer-generator", "--data", f"cnndm:{tmp_path / 'nowhere'}"))
    assert "no such folder" in message


def test_score_files_of_different_lengths(tmp_path):
    (tmp_path / "pred.txt").write_text("a b\n")
    (tmp_path / "ref.txt").write_text("a b\nc d\n")
    message = one_line_error(run_cli("score", "--pred", str(tmp_path / "pred.txt"), "--ref", str(tmp_path / "ref.txt")))
    assert message.startswith(f"{tmp_path / 'pred.txt'}:2: the file ends here, but {tmp_path / 'ref.txt'} has 2 lines")


def test_missing_score_file(tmp_path):
    message = one_line_error(run_cli("score", "--pred", str(tmp_path / "none.txt"), "--ref", str(tmp_path / "none.txt")))
    assert message.startswith(str(tmp_path / "none.txt")), message
