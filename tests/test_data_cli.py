"""`python -m dca_course data ...`: generated data sets written as files read back the same."""
import json

from dca_course.__main__ import main
from dca_course.data.babi import TASK_NAMES, load_generated, read_babi
from dca_course.data.cnndm import load_cnndm
from dca_course.data.synthnews import load_synthnews


def _json_line(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_generate_babi_writes_v12_files_that_read_back(tmp_path, capsys):
    assert main(["data", "generate", "babi", "--task", "2", "--train", "60", "--test", "30",
                 "--out", str(tmp_path)]) == 0
    assert _json_line(capsys)["spec"] == f"babi:{tmp_path}:2"
    train, test = load_generated(2, 60, 30, seed=0)
    stem = tmp_path / "en" / TASK_NAMES[2]
    for split, expected in (("train", train), ("test", test)):
        got = read_babi(f"{stem}_{split}.txt")
        assert [(e.question, e.answer, e.supporting) for e in got] == \
               [(e.question, e.answer, e.supporting) for e in expected]


def test_generate_synthnews_writes_line_files_for_the_cnndm_reader(tmp_path, capsys):
    assert main(["data", "generate", "synthnews", "--train", "8", "--valid", "2", "--test", "3", "--long",
                 "--out", str(tmp_path)]) == 0
    assert _json_line(capsys)["articles"] == [8, 2, 3]
    expected = load_synthnews(8, 2, 3, seed=0, long=True)[2]
    got = load_cnndm(tmp_path, "test")
    assert [e.source for e in got] == [e.source for e in expected]
    assert [e.summary_text() for e in got] == [e.summary_text() for e in expected]


def test_download_cnndm_needs_a_folder(capsys):
    assert main(["data", "download", "cnndm"]) == 2
    assert "--out" in capsys.readouterr().err


def test_unknown_babi_task_is_a_clear_error(tmp_path, capsys):
    assert main(["data", "generate", "babi", "--task", "21", "--out", str(tmp_path)]) == 2
    assert "tasks 1..20" in capsys.readouterr().err


def test_profiles_lists_fast_and_full_for_every_model(capsys):
    from dataclasses import fields

    from dca_course.recipes import MODELS

    assert main(["profiles"]) == 0
    out = _json_line(capsys)
    assert set(out) == set(MODELS)
    assert all(set(p) == {"fast", "full"} for name, p in out.items() if name != "dmn")
    from dca_course.recipes.dmn import BABI_CHOSEN                   # the DMN's own: the headline, and a row's each
    assert set(out["dmn"]) == {"fast", "full", "babi-1k"} | {f"babi-{row}" for row in BABI_CHOSEN}
    assert out["pointer-generator"]["full"]["hidden_size"] == 256 and out["dca"]["full"]["agents"] == 3
    for name, recipe in MODELS.items():       # every knob training reads, under both profiles
        knobs = {f.name for f in fields(recipe.config_class)}
        assert all(set(values) == knobs for values in out[name].values()), name
    assert out["copynet"]["fast"]["eval_batch_size"] == 64 and out["dca"]["full"]["length_penalty"] == 1.0
    assert main(["profiles", "dmn"]) == 0
    assert set(_json_line(capsys)) == {"dmn"}
