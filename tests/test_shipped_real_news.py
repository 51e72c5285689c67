"""The real-news checkpoints the package ships (issue 48): the folders of data/checkpoints/ whose checkpoint.json says
they were trained on CNN/DailyMail, put there by ``experiments/cnndm_dca.py ship`` from a kept run of the real-news
table.  Each loads through the library's ``load_run`` with ``weights_only=True`` (its float16 weights copied into
the model's float32 parameters), is a few MB, and gives its stored summary of the stored example article exactly;
where ../shared/data/cnndm is here (a folder or a link), also its stored ROUGE on its 50 held-out articles (lines
10,001-10,050 of the test split, never trained on) within 1e-6.

``ship`` itself is tested on a tiny run of the real lines (skipped without the data): the round trip into a
package's folder, and its refusals.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from conftest import load_script  # noqa: E402  (tests/ is on sys.path under pytest)
from dca_course import shipped
from dca_course.data.cnndm import load_cnndm
from dca_course.recipes import load_run
from dca_course.shipped import ShippedFileError, checkpoint_folder
from dca_course.summarise import summarise_text

cnndm_dca = load_script("cnndm_dca")
ROOT = Path(__file__).resolve().parents[1]
CHECKPOINTS = ROOT / "data" / "checkpoints"
REAL = ROOT.parent / "shared" / "data" / "cnndm"      # as written: ../shared may be a folder or a link
HAVE_DATA = (REAL / "test.source").is_file()
NO_DATA = "no ../shared/data/cnndm here"

pytestmark = pytest.mark.usefixtures("one_thread")


def real_news(folder: Path = CHECKPOINTS) -> list[str]:
    """The checkpoint folders under ``folder`` whose checkpoint.json says they were trained on CNN/DailyMail."""
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and cnndm_dca.trained_on_cnndm(p))


REAL_NEWS = real_news()


def record(folder: Path) -> dict:
    return json.loads((folder / "checkpoint.json").read_text(encoding="utf-8"))


# -- what every shipped real-news checkpoint must do (the tiny run's below does the same) --------------------------
def loads_in_float32(folder: Path, monkeypatch) -> tuple:
    """load_run on ``folder``: torch.load called once, with weights_only=True; the file's floating-point weights
    float16, the model's parameters float32 holding exactly those values; no optimizer state."""
    calls, load = [], torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: calls.append(k.get("weights_only")) or load(*a, **k))
    recipe, model, vocab, state = load_run(folder, "cpu")
    monkeypatch.setattr(torch, "load", load)
    assert calls == [True]
    assert "optimizer" not in state and state["data"] == "cnndm-sample"
    assert {t.dtype for t in state["model"].values() if t.is_floating_point()} == {torch.float16}
    for key, value in model.state_dict().items():
        assert value.dtype == torch.float32 and torch.equal(value, state["model"][key].float()), key
    return recipe, model, vocab


def is_recorded(folder: Path) -> dict:
    """checkpoint.json: the file it records, how the run was trained, its limits in plain words."""
    info = record(folder)
    weights = folder / info["file"]["name"]
    assert weights.stat().st_size == info["file"]["bytes"] < 0.6 * info["float32_bytes"]
    assert info["trained_on"]["dataset"] == "cnndm" and info["weights"].startswith("float16")
    n = info["trained_on"]["articles"]
    assert info["limits"] == (f"trained on {n:,} CNN/DailyMail articles for minutes at the fast sizes; "
                              "not comparable with the papers")
    assert info["command"].startswith("python experiments/cnndm_dca.py run ")
    assert info["shipped_by"].startswith("python experiments/cnndm_dca.py ship ")
    assert len(info["trained_at_commit"]) == len(info["made_at_commit"]) == 40
    first, last = info["held_out"]["first_line"], info["held_out"]["last_line"]
    assert (first, last) == (n + 1, n + 50) and info["held_out"]["articles"] == 50
    assert "/work" not in json.dumps(info) and "/home" not in json.dumps(info)
    return info


def blocked(info: dict) -> int:
    """The n of no n-gram said twice that the checkpoint decodes with (0: the recipe's own search)."""
    return info.get("decoding", {}).get("block_ngram_repeat", 0)


def example_summary(recipe, model, vocab, info: dict) -> str:
    return " ".join(summarise_text(recipe, model, vocab, "", device="cpu", block_ngram_repeat=blocked(info)).words)


def held_out_rouge(recipe, model, vocab, info: dict, data: Path) -> dict:
    """ROUGE on the held-out lines that checkpoint.json names, as the recipes evaluate (``recipe.predict`` with the
    checkpoint's decoding, ``recipe.score_predictions``)."""
    first, last = info["held_out"]["first_line"], info["held_out"]["last_line"]
    assert cnndm_dca.lines_sha(data, first, last) == info["held_out"]["lines_sha"], "not the same lines of data"
    examples = load_cnndm(data, "test", limit=last - first + 1, start=first - 1)
    with torch.no_grad():
        preds = recipe.predict(model, examples, vocab, "cpu", block_ngram_repeat=blocked(info))
        scores = recipe.score_predictions(preds, examples, vocab, "summaries")
    return {k: scores[k] for k in ("rouge1", "rouge2", "rougeL", "rougeLsum")}


def stored_rouge(info: dict) -> dict:
    return {k: info["held_out"][k] for k in ("rouge1", "rouge2", "rougeL", "rougeLsum")}


def test_only_checkpoints_trained_on_cnndm_are_real_news():
    assert set(REAL_NEWS) <= {p.name for p in CHECKPOINTS.iterdir() if p.is_dir()}
    assert "dca3-synthnews-long" not in REAL_NEWS and "pg400-synthnews-long" not in REAL_NEWS


@pytest.mark.parametrize("name", REAL_NEWS)
def test_it_loads_with_weights_only_is_a_few_mb_and_gives_its_stored_example_summary(name, monkeypatch):
    folder = checkpoint_folder(name)                     # its sha256 checked
    info = is_recorded(folder)
    assert info["file"]["bytes"] < 10_000_000 and info["trained_on"]["articles"] == cnndm_dca.N_TRAIN
    assert (info["held_out"]["first_line"], info["held_out"]["last_line"]) == (10_001, 10_050)
    recipe, model, vocab = loads_in_float32(folder, monkeypatch)
    assert example_summary(recipe, model, vocab, info) == info["example"]["summary"]


@pytest.mark.skipif(not HAVE_DATA, reason=NO_DATA)
@pytest.mark.parametrize("name", REAL_NEWS)
def test_it_gives_its_stored_rouge_on_the_held_out_articles(name):
    folder = checkpoint_folder(name)
    recipe, model, vocab, _ = load_run(folder, "cpu")
    info = record(folder)
    assert held_out_rouge(recipe, model, vocab, info, REAL) == pytest.approx(stored_rouge(info), abs=1e-6)


# -- ship on a tiny run ----------------------------------------------------------------------------------------------
TINY = ["--lines", "32", "8"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A pg400 and a dca3 run of the real-news table on 32 training lines (seconds), kept in their run folders."""
    runs = tmp_path_factory.mktemp("cnndm_runs")
    assert cnndm_dca.main(["run", str(REAL), "--systems", "pg400", "dca3", "--seeds", "0", "--runs", str(runs),
                           *TINY]) == 0
    return runs


@pytest.fixture()
def package(tmp_path, monkeypatch):
    """A package folder as the wheel installs it, its checkpoints folder empty: checkpoint_folder reads it."""
    pkg = tmp_path / "dca_course"
    (pkg / shipped.PACKAGED / "checkpoints").mkdir(parents=True)
    monkeypatch.setattr(shipped, "_PACKAGE", pkg)
    return pkg / shipped.PACKAGED / "checkpoints"


def ship_args(runs, checkpoints, *more):
    """``ship``'s arguments for the tiny run (``checkpoints`` None: the default, data/checkpoints)."""
    where = [] if checkpoints is None else ["--checkpoints", str(checkpoints)]
    return ["ship", str(REAL), "--system", "pg400", "--seed", "0", *TINY, "--runs", str(runs), *where, *more]


@pytest.mark.skipif(not HAVE_DATA, reason=NO_DATA)
def test_ship_writes_a_float16_checkpoint_that_gives_its_stored_summary_and_rouge(tiny_run, package, monkeypatch,
                                                                                    capsys):
    assert cnndm_dca.main(ship_args(tiny_run, package)) == 0
    assert "pg400-cnndm: " in capsys.readouterr().out
    assert real_news(package) == ["pg400-cnndm"] and not list(package.parent.glob(".ship-*"))
    folder = checkpoint_folder("pg400-cnndm")
    assert folder == package / "pg400-cnndm" and sorted(p.name for p in folder.iterdir()) == ["checkpoint.json",
                                                                                             "last.pt"]
    info = is_recorded(folder)
    assert info["config"]["lines"] == [32, 8] and info["trained_on"]["train_lines"] == "1-32"
    assert (info["held_out"]["first_line"], info["held_out"]["last_line"]) == (33, 82)
    # smaller than the same state in float32 (the run's own last.pt also holds Adam's two moments)
    run_state = torch.load(tiny_run / "pg400" / "seed0" / "last.pt", weights_only=True)
    torch.save({k: run_state[k] for k in cnndm_dca.SHIPPED_KEYS}, package.parent / "float32.pt")
    float32 = (package.parent / "float32.pt").stat().st_size
    assert info["float32_bytes"] == float32 and info["file"]["bytes"] < 0.6 * float32
    recipe, model, vocab = loads_in_float32(folder, monkeypatch)
    state = torch.load(folder / "last.pt", weights_only=True)["model"]   # the one embedding stays stored once
    assert state["embedding.weight"].data_ptr() == state["encoder.embedding.weight"].data_ptr()
    assert info["parameters"] == sum(t.numel() for k, t in state.items() if k != "encoder.embedding.weight")
    assert example_summary(recipe, model, vocab, info) == info["example"]["summary"]
    assert held_out_rouge(recipe, model, vocab, info, REAL) == pytest.approx(stored_rouge(info), abs=1e-6)
    # one bit of the weights changed: checkpoint_folder refuses the folder
    weights = bytearray((folder / "last.pt").read_bytes())
    weights[len(weights) // 2] ^= 1
    (folder / "last.pt").write_bytes(bytes(weights))
    with pytest.raises(ShippedFileError, match="sha256"):
        checkpoint_folder("pg400-cnndm")


@pytest.mark.skipif(not HAVE_DATA, reason=NO_DATA)
@pytest.mark.parametrize("change, says", [
    (["--seed", "1"], "no such run"),
    (["UNFINISHED"], "the run is not finished"),
    (["--lines", "40", "8"], "a run of --lines 32 8, not 40 8"),
    (["--system", "lead3"], "--system lead3: it trains no model"),
    (["--system", "pg9"], "--system pg9: no such system"),
    (["--name", "PG/400"], "--name 'PG/400'"),
    ([], "pg400-cnndm exists (--force replaces it)"),
    (["--force", "--name", "synthnews"], "holds no real-news checkpoint"),
    (["--checkpoints", "{tmp}/nowhere"], "no such folder"),
    (["DEFAULT_CHECKPOINTS"], "ships only with --checkpoints DIR"),
    (["--lines", "11480", "8"], "not the 11,530 that the run and its 50 held-out articles need"),
])
def test_ship_refuses_in_one_line_before_any_work(change, says, tiny_run, package, tmp_path, capsys):
    (package / "pg400-cnndm").mkdir()                  # a real-news checkpoint of the default name
    (package / "pg400-cnndm" / "checkpoint.json").write_text(json.dumps({"trained_on": {"dataset": "cnndm"}}))
    (package / "synthnews").mkdir()                    # another checkpoint's folder
    (package / "synthnews" / "checkpoint.json").write_text(json.dumps({"trained_on": {"dataset": "synthnews"}}))
    runs = tiny_run
    if "UNFINISHED" in change:                         # a copy of the run stopped before its end
        runs = tmp_path / "runs"
        shutil.copytree(tiny_run / "pg400" / "seed0", runs / "pg400" / "seed0")
        (runs / "pg400" / "seed0" / "result.json").unlink()
    more = [a.format(tmp=tmp_path) for a in change if a not in ("UNFINISHED", "DEFAULT_CHECKPOINTS")]
    argv = ship_args(runs, None if "DEFAULT_CHECKPOINTS" in change else package, *more)
    before = sorted(p.relative_to(package.parent) for p in package.parent.rglob("*"))
    data_before = sorted(CHECKPOINTS.iterdir())
    with pytest.raises(SystemExit) as exit:
        cnndm_dca.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 2 and len(err) == 1 and err[0].startswith("dca-course: error: "), err
    assert says in err[0], err[0]
    assert sorted(p.relative_to(package.parent) for p in package.parent.rglob("*")) == before
    assert sorted(CHECKPOINTS.iterdir()) == data_before


@pytest.mark.skipif(not HAVE_DATA, reason=NO_DATA)
def test_force_replaces_only_a_real_news_checkpoint(tiny_run, package):
    (package / "pg400-cnndm").mkdir()
    (package / "pg400-cnndm" / "checkpoint.json").write_text(json.dumps({"trained_on": {"dataset": "cnndm"}}))
    args = cnndm_dca.build_parser().parse_args(ship_args(tiny_run, package, "--force"))
    cnndm_dca.check(args)                              # no SystemExit: ship would replace it
    assert args.name == "pg400-cnndm"


def test_half_weights_keep_a_shared_tensor_shared_and_leave_integers():
    shared = torch.randn(5, 3)
    out = cnndm_dca.half_weights({"a": shared, "b": shared, "c": torch.randn(2), "n": torch.arange(3)})
    assert out["a"] is out["b"] and out["a"].dtype == out["c"].dtype == torch.float16
    assert out["n"].dtype == torch.int64 and torch.equal(out["a"].float(), shared.half().float())
    assert cnndm_dca.distinct_parameters({"a": shared, "b": shared, "c": torch.randn(2)}) == 17


# -- the DCA ships only if it holds up ---------------------------------------------------------------------------
def report_saying(r1_minus_pg400: float | None) -> dict:
    """A cnndm_dca.json of seed 0 whose dca3 minus pg400, both decoded with no trigram repeated, is
    ``r1_minus_pg400`` R-1."""
    pairs = {} if r1_minus_pg400 is None else {"dca3 minus pg400": {"rouge1": {
        "diffs": [r1_minus_pg400], "mean": r1_minus_pg400, "se": None, "verdict": "not distinguishable"}}}
    return {"seeds": [0], "block3": {"paired_with_pg400": pairs}}


@pytest.mark.parametrize("r1, ships", [(-2.9, True), (-3.0, True), (-3.1, False), (+1.0, True), (None, False)])
def test_the_rule_a_dca_ships_by(r1, ships):
    ok, why = cnndm_dca.holds_up(report_saying(r1), "dca3")
    assert ok is ships and "dca3 minus pg400" in why
    partial = {**report_saying(r1), "seeds": [0, 1]}                                      # one seed of two: not judged
    assert cnndm_dca.holds_up(partial, "dca3")[0] is False


@pytest.mark.skipif(not HAVE_DATA, reason=NO_DATA)
@pytest.mark.parametrize("report, says", [(None, "no such file"), (-5.0, "does not hold up (R-1, dca3 minus pg400")])
def test_a_dca_that_does_not_hold_up_is_refused(report, says, tiny_run, package, tmp_path, capsys):
    where = tmp_path / "cnndm_dca.json"
    if report is not None:
        where.write_text(json.dumps(report_saying(report)))
    argv = ["ship", str(REAL), "--system", "dca3", *TINY, "--runs", str(tiny_run), "--checkpoints", str(package),
            "--report", str(where)]
    with pytest.raises(SystemExit):
        cnndm_dca.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err
    assert not list(package.iterdir())


@pytest.mark.skipif(not HAVE_DATA, reason=NO_DATA)
def test_a_dca_that_holds_up_ships_decoding_with_no_trigram_twice(tiny_run, package, tmp_path, monkeypatch):
    where = tmp_path / "cnndm_dca.json"
    where.write_text(json.dumps(report_saying(-1.0)))
    assert cnndm_dca.main(["ship", str(REAL), "--system", "dca3", *TINY, "--runs", str(tiny_run),
                           "--checkpoints", str(package), "--report", str(where)]) == 0
    folder = checkpoint_folder("dca3-cnndm")
    info = is_recorded(folder)
    assert info["decoding"]["block_ngram_repeat"] == 3 and "block_ngram_repeat=3" in info["example"]["how"]
    recipe, model, vocab = loads_in_float32(folder, monkeypatch)
    summary = example_summary(recipe, model, vocab, info)
    assert summary == info["example"]["summary"]
    words = summary.split()
    trigrams = list(zip(words, words[1:], words[2:]))
    assert len(set(trigrams)) == len(trigrams)
    assert held_out_rouge(recipe, model, vocab, info, REAL) == pytest.approx(stored_rouge(info), abs=1e-6)
