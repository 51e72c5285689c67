"""The shipped 3-agent DCA checkpoint (data/checkpoints/dca3-synthnews-long): small, loaded with
weights_only=True, its command, configs, commit and metrics beside it, and the same numbers as stored
when recomputed on the CPU (the teacher-forced loss and the greedy summaries of 16 test articles)."""
import json
from pathlib import Path

import pytest
import torch

from conftest import load_benchmark_module  # noqa: E402  (tests/ is on sys.path under pytest)

FOLDER = Path(__file__).resolve().parent.parent / "data" / "checkpoints" / "dca3-synthnews-long"
INFO = json.loads((FOLDER / "checkpoint.json").read_text())


def test_it_is_small_and_loads_with_weights_only():
    path = FOLDER / "last.pt"
    assert path.stat().st_size < 5_000_000 and path.stat().st_size == INFO["file"]["bytes"]
    state = torch.load(path, map_location="cpu", weights_only=True)
    assert "optimizer" not in state and state["recipe"] == "dca" and state["data"] == "synthnews-long"
    assert state["hparams"] == INFO["hparams"] and state["model_config"] == INFO["model_config"]
    assert state["hparams"]["agents"] == 3 and len(state["vocab"]) == state["model_config"]["vocab_size"]
    assert sum(t.numel() for t in state["model"].values()) == INFO["parameters"]


def test_its_record_says_how_it_was_made():
    assert INFO["command"].startswith("python -m dca_course train dca --agents 3 --data synthnews-long")
    assert len(INFO["trained_at_commit"]) == 40 and len(INFO["made_at_commit"]) == 40
    metrics = INFO["test_metrics"]
    assert metrics["model"] == "dca" and metrics["split"] == "test"
    assert metrics["late_fact_recall"] > 0.1          # it reads its late facts (a 400-word reader: about 0)


def test_it_gives_its_stored_numbers_on_the_cpu():
    module = load_benchmark_module("dca_checkpoint")
    now, stored = module.check_values(FOLDER), INFO["check"]
    assert now["teacher_forced_nll"] == pytest.approx(stored["teacher_forced_nll"], rel=1e-5)
    assert now["greedy_summaries"] == stored["greedy_summaries"]
    for key in ("greedy_fact_recall", "greedy_late_fact_recall", "greedy_misattributed_facts"):
        assert now[key] == pytest.approx(stored[key], abs=1e-12), key
