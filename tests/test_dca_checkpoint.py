"""The shipped checkpoints (data/checkpoints/): the 3-agent DCA and the 400-word pointer-generator that notebook
06 compares it with. Each is small, loaded with weights_only=True, has its command, configs, commit and
metrics beside it, and gives the same numbers as stored when recomputed on the CPU (the teacher-forced loss and
the greedy summaries of 16 test articles)."""
import json
from pathlib import Path

import pytest
import torch

from conftest import load_benchmark_module  # noqa: E402  (tests/ is on sys.path under pytest)

CHECKPOINTS = Path(__file__).resolve().parent.parent / "data" / "checkpoints"
# folder -> (recipe, the command's start, the least late-fact recall on its test split, the most)
SHIPPED = {
    "dca3-synthnews-long": ("dca", "python -m dca_course train dca --agents 3 --data synthnews-long", 0.1, 1.0),
    # a 400-word reader never reads a late fact: it could only guess one
    "pg400-synthnews-long": ("pointer-generator", "python -m dca_course train pointer-generator --coverage", 0.0, 0.05),
}


def info(name):
    return json.loads((CHECKPOINTS / name / "checkpoint.json").read_text())


def trained_on_cnndm(folder) -> bool:
    """A real-news checkpoint (experiments/cnndm_dca.py ship): tests/test_shipped_real_news.py checks those."""
    return json.loads((folder / "checkpoint.json").read_text()).get("trained_on", {}).get("dataset") == "cnndm"


def test_every_checkpoint_folder_is_listed_here():
    assert sorted(p.name for p in CHECKPOINTS.iterdir() if p.is_dir() and not trained_on_cnndm(p)) == sorted(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_it_is_small_and_loads_with_weights_only(name):
    record, path = info(name), CHECKPOINTS / name / "last.pt"
    assert path.stat().st_size < 5_000_000 and path.stat().st_size == record["file"]["bytes"]
    state = torch.load(path, map_location="cpu", weights_only=True)
    assert "optimizer" not in state and state["recipe"] == SHIPPED[name][0] and state["data"] == "synthnews-long"
    assert state["hparams"] == record["hparams"] and state["model_config"] == record["model_config"]
    assert len(state["vocab"]) == state["model_config"]["vocab_size"]
    assert sum(t.numel() for t in state["model"].values()) == record["parameters"]


def test_the_dca_has_three_agents_and_the_reader_400_words():
    assert info("dca3-synthnews-long")["hparams"]["agents"] == 3
    assert info("pg400-synthnews-long")["hparams"]["max_src"] == 400


@pytest.mark.parametrize("name", SHIPPED)
def test_its_record_says_how_it_was_made(name):
    recipe, start, least, most = SHIPPED[name]
    record = info(name)
    assert record["command"].startswith(start)
    assert len(record["trained_at_commit"]) == 40 and len(record["made_at_commit"]) == 40
    metrics = record["test_metrics"]
    assert metrics["model"] == recipe and metrics["split"] == "test"
    assert least <= metrics["late_fact_recall"] <= most


@pytest.mark.parametrize("name", SHIPPED)
def test_it_gives_its_stored_numbers_on_the_cpu(name):
    module = load_benchmark_module("dca_checkpoint")
    now, stored = module.check_values(CHECKPOINTS / name), info(name)["check"]
    assert now["teacher_forced_nll"] == pytest.approx(stored["teacher_forced_nll"], rel=1e-5)
    assert now["greedy_summaries"] == stored["greedy_summaries"]
    for key in ("greedy_fact_recall", "greedy_late_fact_recall", "greedy_misattributed_facts"):
        assert now[key] == pytest.approx(stored[key], abs=1e-12), key
