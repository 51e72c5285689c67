"""The GPU check (`make gpu-check`): its script is valid bash, and its report says what the logs say.

The check itself needs CUDA; here its report writer reads logs made up in the shapes the script writes.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _logs(folder: Path, *, notebook_rc: int = 0) -> Path:
    folder.mkdir()
    (folder / "info.json").write_text(json.dumps({"gpu": "NVIDIA H200", "driver": "580.1", "gpu_memory": "143771 MiB",
                                                  "torch": "2.11.0", "cuda": "13.0", "cudnn": 91000,
                                                  "python": "3.12.3", "cpu_cores": 16}))
    (folder / "nb_01_gru_from_scratch.log").write_text("....\n42 passed in 31.20s\nrc=0 wall=35\n")
    failed = "FAILED notebooks/02_attention_seq2seq.ipynb::Cell 10 - boom\n1 failed, 40 passed in 20.00s\n"
    (folder / "nb_02_attention_seq2seq.log").write_text((failed if notebook_rc else "41 passed in 20.00s\n")
                                                         + f"rc={notebook_rc} wall=22\n")
    (folder / "unit.log").write_text("646 passed, 4 skipped in 120.50s\nrc=0 wall=125\n")
    (folder / "cli_dmn.log").write_text('training...\n{"model": "dmn", "accuracy": 0.998, "epochs": 7}\n'
                                        "rc=0 wall=41 command=python -m dca_course train dmn --data babi:1 --device cuda\n")
    lstm = {"backend": "cuDNN 91000", "model_step_ms": 33.3, "lstm_layers_ms": 12.2, "ratio": 2.74, "median_ratio": 2.8}
    (folder / "bench_lstm_full.txt").write_text("lines\n" + json.dumps(lstm) + "\n")
    (folder / "bench_beam.txt").write_text(json.dumps({"beam": 4, "examples": 64, "batch_size": 32, "speedup": 19.5,
                                                       "batched_examples_per_s": 120.0,
                                                       "one_by_one_examples_per_s": 6.2,
                                                       "same_summaries": "64/64"}) + "\n")
    return folder


def _report(logs: Path, out: Path) -> str:
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu_report.py"), str(logs), "--seconds", "250",
                        "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out.read_text()


def test_report_of_a_passing_check(tmp_path):
    text = _report(_logs(tmp_path / "logs"), tmp_path / "gpu.md")
    assert "**All passed.**" in text and "took 250 s" in text
    assert "| GPU | NVIDIA H200 (143771 MiB), driver 580.1 |" in text
    assert "| PyTorch | 2.11.0, CUDA 13.0, cuDNN 91000 |" in text
    assert "| 01_gru_from_scratch | passed | 42 passed in 31.20s | 35 |" in text
    assert "`python -m dca_course train dmn --data babi:1 --device cuda` | ran | 41 | accuracy 0.998, epochs 7 |" in text
    assert "33.3 ms against its LSTM layers' 12.2 ms: **2.74x**" in text
    assert "`fast` sizes | did not finish |" in text                  # no log: said, not hidden
    assert "**19.5x**; the same summaries: 64/64" in text
    assert "646 passed, 4 skipped in 120.50s (exit 0, 125 s)" in text


def test_report_names_failed_cells(tmp_path):
    text = _report(_logs(tmp_path / "logs", notebook_rc=1), tmp_path / "gpu.md")
    assert "All passed" not in text
    assert "**Failures:** notebook 02_attention_seq2seq: FAILED Cell 10." in text
    assert "| 02_attention_seq2seq | FAILED Cell 10 | 1 failed, 40 passed in 20.00s | 22 |" in text


def test_script_is_valid_bash_and_wired_into_make():
    assert subprocess.run(["bash", "-n", str(ROOT / "tools" / "gpu_check.sh")]).returncode == 0
    makefile = (ROOT / "Makefile").read_text()
    assert "gpu-check:" in makefile and "tools/gpu_check.sh" in makefile
    assert "device-check:" in makefile
    assert "make gpu-check" in (ROOT / "CONTRIBUTING.md").read_text()


def test_script_runs_in_a_copy_of_the_tracked_files():
    """A folder that git does not track (left in a GPU machine's copy of the checkout) must not reach the
    check: the script copies the tracked files to a scratch folder and runs every part from there."""
    script = (ROOT / "tools" / "gpu_check.sh").read_text()
    copy = script.index("git -C \"$CHECKOUT\" ls-files -z")
    assert script.index('ROOT="$SCRATCH/src"') < copy < script.index('cd "$ROOT"') < script.index("part bench &&")
    assert 'PYTHONPATH="$ROOT' in script and "cd \"$(dirname \"$0\")/..\"\nCHECKOUT=$PWD" in script


def test_report_keeps_the_notebooks_gpu_timings(tmp_path):
    logs = _logs(tmp_path / "logs")
    (logs / "executed").mkdir()
    cells = [{"cell_type": "code", "source": "x = 1", "outputs": [{"output_type": "stream", "name": "stderr",
                                                                   "text": "UserWarning: RNN module weights"}]},
             {"cell_type": "code", "source": ["# NBVAL_IGNORE_OUTPUT\n", "if gpu_present(device):\n", "    pass"],
              "outputs": [{"output_type": "stream", "name": "stdout",                 # as nbformat writes it
                           "text": ["one training step:\n", "  CPU 900 ms\n"]}]}]
    (logs / "executed" / "05_pointer_generator_coverage.ipynb").write_text(json.dumps({"cells": cells}))
    text = _report(logs, tmp_path / "gpu.md")
    assert "05_pointer_generator_coverage:\n```\none training step:\n  CPU 900 ms\n```" in text
    assert "05_pointer_generator_coverage, code cell 0: stderr `UserWarning: RNN module weights`" in text


def test_report_of_a_partial_check_on_another_seed(tmp_path):
    logs = _logs(tmp_path / "logs")
    (logs / "unit.log").unlink()                     # PARTS=notebooks: the unit tests did not run
    info = json.loads((logs / "info.json").read_text())
    (logs / "info.json").write_text(json.dumps({**info, "seed": 2, "parts": "notebooks"}))
    text = _report(logs, tmp_path / "gpu.md")
    assert "**All passed.**" in text and "unit tests: exit" not in text
    assert "Not run (`PARTS` left them out)." in text
    assert "the default device (CUDA), seed 2;" in text


def test_report_tables_every_claim_and_the_ones_nbval_failed(tmp_path):
    logs = _logs(tmp_path / "logs")
    (logs / "executed").mkdir()
    cells = [{"cell_type": "code", "source": "claim(...)", "outputs": [
        {"output_type": "stream", "name": "stdout",
         "text": ["claim: coverage cuts repeats: holds (≈0.708 >= 0.5)\n", "claim: |a - b|: holds (≈0.01 <= 0.25)\n"]}]}]
    (logs / "executed" / "05_pointer_generator_coverage.ipynb").write_text(json.dumps({"cells": cells}))
    (logs / "nb_05_pointer_generator_coverage.log").write_text(
        "\x1b[31mAssertionError\x1b[39m: claim failed: coverage cuts repeats: measured 0.453, needs >= 0.5\n"
        "1 failed, 20 passed in 105.18s\nrc=1 wall=107\n")
    text = _report(logs, tmp_path / "gpu.md")
    assert "| 05 | coverage cuts repeats | **0.453 fails (>= 0.5)**; 0.708 (>= 0.5) |" in text
    assert "| 05 | \\|a - b\\| | 0.01 (<= 0.25) |" in text
