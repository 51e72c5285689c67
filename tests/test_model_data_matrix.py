"""Every model against every kind of data, through the command line's ``main``.

Each pair either trains to a sane smoke result (exit 0, a JSON line whose metrics are in range)
or refuses before loading any data with one line, ``dca-course: error: ...`` and exit 2, that
names the command to run instead.  The data sets are shrunk (a few examples per split) and the
models are tiny, so that the whole matrix costs seconds of CPU.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
import time

import pytest

from dataclasses import fields

from dca_course.__main__ import main
from dca_course.data import specs
from dca_course.recipes import MODELS
from dca_course.recipes.base import USE_INSTEAD

# Every table here is derived from the registry (recipes.MODELS): a new model is in the matrix
# with no line added to this file.


def expected(model: str, kind: str) -> str:
    """"trains" where the model's recipe takes this kind of data (its ``data_kinds``), else the
    command its refusal must suggest: the course's model for that kind."""
    return "trains" if kind in MODELS[model].data_kinds else USE_INSTEAD[kind][0]


EXPECTED = {model: {kind: expected(model, kind) for kind in USE_INSTEAD} for model in MODELS}

#: flags that make each model tiny (on top of the fast profile)
TINY = ["--epochs", "1", "--batch-size", "4", "--emb-size", "8", "--hidden-size", "8"]
#: a summariser's decoding and vocabulary cut small, and the fewest agents, for the models that have them
SMALL_SUMMARIES = ["--beam-size", "2", "--max-decode", "8", "--vocab-size", "300"]


def model_flags(model: str) -> list[str]:
    knobs = {f.name for f in fields(MODELS[model].config_class)}
    return (SMALL_SUMMARIES if "beam_size" in knobs else []) + (["--agents", "2"] if "agents" in knobs else [])


MODEL_FLAGS = {model: model_flags(model) for model in MODELS}

SENTENCES = [
    "the council of {p} voted on {n} new homes .", "{p} said the plan would cost {n} million .",
    "residents of {p} met on tuesday .", "the mayor of {p} was not available .",
    "{n} people signed a petition in {p} .", "work in {p} starts next year .",
]
PLACES = ["leeds", "york", "bath", "hull", "derby", "ely", "ripon", "wells"]


def write_cnndm_fixture(folder, n_train=8, n_other=3):
    """Line files as ``cnndm:PATH`` reads them: ``{split}.source`` (one tokenized article a
    line) and ``{split}.target.sents.tsv`` (its summary's sentences, TAB-separated)."""
    folder.mkdir()
    for split, n in (("train", n_train), ("val", n_other), ("test", n_other)):
        sources, targets = [], []
        for i in range(n):
            place, number = PLACES[i % len(PLACES)], str(10 + 7 * i)
            sents = [s.format(p=place, n=number) for s in SENTENCES[i % 2:] + SENTENCES[: i % 2]]
            sources.append(" ".join(sents))
            targets.append("\t".join(sents[:2]))
        (folder / f"{split}.source").write_text("\n".join(sources) + "\n", encoding="utf-8")
        (folder / f"{split}.target.sents.tsv").write_text("\n".join(targets) + "\n", encoding="utf-8")
    return folder


@pytest.fixture()
def small_data(monkeypatch, tmp_path):
    """The fast profile's data sets cut to a few examples per split; the specs of each kind."""
    monkeypatch.setitem(specs.TOY_SIZES, "fast", (40, 4, 6))
    monkeypatch.setitem(specs.SYNTHNEWS_SIZES, "fast", (6, 2, 3))
    monkeypatch.setitem(specs.BABI_SIZES, "fast", (12, 4, 6))
    return {"pairs": ["toy:dates"], "babi": ["babi:1"],
            "summaries": ["synthnews", f"cnndm:{write_cnndm_fixture(tmp_path / 'cnndm')}"]}


def _last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


def _check_sane(kind: str, result: dict) -> None:
    assert result["split"] == "test" and result["epochs"] >= 1
    assert math.isfinite(result["final_loss"]) and result["final_loss"] >= 0
    if kind == "pairs":
        assert 0 <= result["exact_match"] <= 1 and 0 <= result["token_accuracy"] <= 1
    elif kind == "summaries":
        for key in ("rouge1", "rouge2", "rougeLsum"):
            assert 0 <= result[key] <= 100, key
        assert 0 <= result["repeated_trigrams"] <= 1
    else:
        assert 0 <= result["accuracy"] <= 1


def test_every_spec_kind_is_what_its_loader_returns(small_data):
    for kind, spec_list in small_data.items():
        for spec in spec_list:
            assert specs.spec_kind(spec) == kind
            assert specs.load_data(spec, "fast", 0).kind == kind
    assert {spec.kind for spec in specs.DATA_SPECS.values()} == set(USE_INSTEAD) == {"pairs", "summaries", "babi"}


def test_every_kind_of_data_has_a_model_and_every_refusal_names_one_that_trains_on_it():
    """The matrix is derived from the recipes; what keeps it honest: each kind is trained by some
    model, the suggested command starts with a model that trains on that kind, and the papers'
    pairings hold (the copying models on summaries, the DMN alone on bAbI)."""
    for kind, (command, _) in USE_INSTEAD.items():
        assert command.split()[0] in MODELS and kind in MODELS[command.split()[0]].data_kinds, kind
    assert {name for name in MODELS if "babi" in MODELS[name].data_kinds} == {"dmn"}
    assert {"copynet", "pointer-generator", "dca"} <= {n for n in MODELS if "summaries" in MODELS[n].data_kinds}
    assert all(EXPECTED[model][kind] == "trains" for model in MODELS for kind in MODELS[model].data_kinds)


@pytest.mark.parametrize("model", list(EXPECTED))
def test_model_against_every_kind_of_data(model, small_data, tmp_path, capsys, monkeypatch):
    def no_loading(*args, **kwargs):
        raise AssertionError("a refused pair must not load its data")

    for kind, spec_list in small_data.items():
        expected = EXPECTED[model][kind]
        for spec in spec_list:
            out = tmp_path / f"{model}-{spec.partition(':')[0]}"
            argv = ["train", model, "--data", spec, "--limit-train", "6", "--device", "cpu", "--quiet",
                    "--out", str(out), *TINY, *MODEL_FLAGS[model]]
            if expected == "trains":
                assert main(argv) == 0, (model, spec)
                captured = capsys.readouterr()
                result = _last_json(captured.out)
                assert result["model"] == model
                _check_sane(kind, result)
                assert json.loads((out / "metrics.json").read_text()) == result
                continue
            with monkeypatch.context() as patch:
                patch.setattr("dca_course.__main__.load_data", no_loading)
                assert main(argv) == 2, (model, spec)
            captured = capsys.readouterr()
            lines = captured.err.strip().splitlines()
            assert len(lines) == 1 and captured.out == "", captured.err
            assert lines[0].startswith(f"dca-course: error: {model} does not train on {spec} "), lines[0]
            assert f"use `python -m dca_course train {expected} --data {spec}`" in lines[0], lines[0]
            assert not out.exists()


def test_seq2seq_on_synthnews_refuses_at_once_from_a_shell():
    """The pair a learner coming from notebook 02 tries: one line naming the attention baseline
    for summaries, before any data is made."""
    started = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "dca_course", "train", "seq2seq", "--data", "synthnews",
                        "--profile", "fast", "--device", "cpu"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "pointer-generator --no-pointer" in r.stderr and r.stderr.startswith("dca-course: error: ")
    assert time.perf_counter() - started < 60
