"""``experiments/dmn_diagnosis.py`` (issue 49): each arm is the `dmn` row with one thing changed, a
diagnosis never reads the test, a kept run is read back, and the paired differences are the
hand-computed ones."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from conftest import load_script

from dca_course.recipes import DMNConfig, DMNRecipe
from dca_course.recipes.dmn import BABI_FIXED, BABI_ROWS

diag = load_script("dmn_diagnosis")
TINY = dict(epochs=1, emb_size=8, hidden_size=8)


def test_each_arm_changes_one_named_thing_of_the_dmn_row():
    base = diag.settings_for("base")
    assert base == {**BABI_FIXED, **BABI_ROWS["dmn"], **diag.DIAGNOSED_POINT, "ceiling_patience": 0}
    # the row as version 4 chose it, what every stored arm was paired with
    stored = json.loads((RESULTS / "dmn_diagnosis.json").read_text())["base_settings"]
    assert {k: stored[k] for k in diag.DIAGNOSED_POINT} == diag.DIAGNOSED_POINT
    fields = set(DMNConfig.__dataclass_fields__)
    base_config = DMNConfig.from_profile("full", base).to_dict()
    for arm, (_, _, change) in diag.ARMS.items():
        settings = diag.settings_for(arm)
        assert set(settings) <= fields
        config = DMNConfig.from_profile("full", settings).to_dict()      # every arm is a valid configuration
        assert {k for k in config if config[k] != base_config[k]} == set(change), arm
    assert DMNRecipe(DMNConfig.from_profile("full", diag.settings_for("D1"))).gate_loss_form() == "dmn+"
    assert DMNRecipe(DMNConfig.from_profile("full", base)).gate_loss_form() == "dmn"


def test_paired_difference_and_its_standard_error_by_hand():
    d = diag.paired([0.5, 0.6, 0.7], [0.6, 0.9, 0.7])          # differences 0.1, 0.3, 0.0
    assert math.isclose(d["mean"], 0.1333, abs_tol=1e-4)
    sd = math.sqrt(((0.1 - 0.4 / 3) ** 2 + (0.3 - 0.4 / 3) ** 2 + (0.4 / 3) ** 2) / 2)
    assert math.isclose(d["se"], round(sd / math.sqrt(3), 4), abs_tol=1e-4)
    assert diag.paired([0.5], [0.6])["se"] is None


def _result(acc, hits):
    return {"held_out_accuracy": acc, "per_pass_hits": hits, "epochs": 3, "train_seconds": 1.0}


def test_the_table_pairs_each_arm_with_base_by_seed():
    runs = {"base": {2: {0: _result(0.5, [0.6, 0.4]), 1: _result(0.6, [0.6, 0.5])}},
            "D1": {2: {0: _result(0.9, [1.0, 0.8]), 1: _result(0.8, [0.9, 0.9])}}}
    table = diag.summarise(runs, [0, 1])
    assert table["base"]["2"]["held_out_accuracy"] == 0.55 and "minus_base" not in table["base"]["2"]
    d1 = table["D1"]["2"]
    assert d1["held_out_accuracy"] == 0.85 and d1["per_pass_hits"] == [0.95, 0.85]
    assert d1["minus_base"]["held_out_accuracy"]["mean"] == 0.3
    assert [p["mean"] for p in d1["minus_base"]["per_pass_hits"]] == [0.35, 0.4]
    text = diag.markdown(table, [0, 1])
    assert "| D1 | the form of gate supervision |" in text and "+30.0 ± 10.0" in text
    # a cheater: an arm equal to base differs by 0 with standard error 0
    same = diag.summarise({"base": runs["base"], "D4": runs["base"]}, [0, 1])
    assert same["D4"]["2"]["minus_base"]["held_out_accuracy"] == {"mean": 0.0, "se": 0.0}


@pytest.mark.parametrize("args, says", [
    (["--tasks", "0"], "--tasks '0': each from 1 to 20"), (["--tasks", "2,x"], "comma-separated whole numbers"),
    (["--seeds", "-1"], "--seeds '-1'"), (["--seeds", "1,1"], "each once"), (["--arms", "D9"], "no arm 'D9'"),
    (["--jobs", "0"], "--jobs 0")])
def test_bad_arguments_get_one_line_before_any_work(tmp_path, capsys, args, says):
    (tmp_path / "en").mkdir()
    with pytest.raises(SystemExit) as err:
        diag.main([str(tmp_path), *args, "--runs", str(tmp_path / "runs")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert err.value.code == 2 and len(lines) == 1 and lines[0].startswith("dca-course: error: ") and says in lines[0]
    assert not (tmp_path / "runs").exists()


def test_a_diagnosis_never_reads_the_test_and_is_kept(babi_spy, babi_folder, tmp_path):
    settings = dict(diag.settings_for("base"), **TINY)
    result = diag.diagnose(1, str(babi_folder), settings, tmp_path / "run", 0)
    assert babi_spy.never_scored_the_test()
    assert 0.0 <= result["held_out_accuracy"] <= 1.0 and len(result["per_pass_hits"]) == 1
    assert result["held_out_questions"] > 0
    # read back, not trained again; other settings train again
    assert diag.kept(tmp_path / "run", settings) == result
    assert diag.kept(tmp_path / "run", dict(settings, gate_weight=3.0)) is None


def test_a_miss_is_told_by_what_the_picked_fact_shares_with_the_right_one():
    story = [["mary", "got", "the", "football", "there"], ["john", "went", "to", "the", "garden"],
             ["mary", "went", "back", "to", "the", "kitchen"], ["mary", "left", "the", "football"],
             ["sandra", "moved", "to", "the", "office"], ["mary", "travelled", "to", "the", "hallway"]]
    supporting = [3, 2]
    assert diag.entities(story[2]) == {"mary", "kitchen"}                   # not the verb, not "back to the"
    assert diag.miss_kind(story, supporting, 3, 2) == "another supporting fact"
    assert diag.miss_kind(story, supporting, 3, 0) == "same entity, earlier"    # an older fact about the ball
    assert diag.miss_kind(story, supporting, 2, 5) == "same entity, later"      # a newer move of mary's
    assert diag.miss_kind(story, supporting, 3, 4) == "no shared entity"
    # the verbs alone are not an entity: "went" is shared by facts 1 and 2
    assert diag.miss_kind(story, [2], 2, 1) == "no shared entity"


def test_a_difference_counts_only_beyond_two_standard_errors():
    assert diag.beyond({"mean": 0.170, "se": 0.089}) == "no: not distinguishable"      # 17.0 < 2 x 8.9
    assert diag.beyond({"mean": 0.227, "se": 0.022}) == "yes"
    assert diag.beyond({"mean": -0.227, "se": 0.022}) == "yes"                          # worse counts too
    assert diag.beyond({"mean": 0.1, "se": None}) == "-"                                # one seed: no verdict


# -- results/dmn_diagnosis_notes.md quotes results/dmn_diagnosis.json -----------------------------------------
RESULTS = Path(__file__).resolve().parents[1] / "results"


def _stored():
    return json.loads((RESULTS / "dmn_diagnosis.json").read_text())["table"]


def _pp(x):
    return f"{100 * x:.1f}"


def _diff(arm, task, key="held_out_accuracy", p=None):
    d = _stored()[arm][task]["minus_base"][key]
    d = d if p is None else d[p]
    return [_pp(d["mean"]), _pp(d["se"])]


def _miss(arm, task, p, key):
    return _stored()[arm][task]["misses"][p][key]


def _answered(arm, task, p, on):
    m = _stored()[arm][task]["misses"][p]
    n = m["hits"] if on == "hits" else m["questions"] - m["hits"]
    return f"{100 * m[f'answered_on_{on}'] / n:.0f}"


NOTES_QUOTES = [
    ("first pass missed its fact in {} held-out questions. All {} misses read an earlier fact",
     lambda: [str(300 - _miss("base", "2", 0, "hits"))] * 2 if _miss("base", "2", 0, "same entity, earlier")
     == 300 - _miss("base", "2", 0, "hits") else ["?", "?"]),
    ("the first pass missed {} times, and all {} misses",
     lambda: [str(300 - _miss("base", "3", 0, "hits"))] * 2 if _miss("base", "3", 0, "same entity, earlier")
     == 300 - _miss("base", "3", 0, "hits") else ["?", "?"]),
    ("first-pass hits rise by {} ± {} points and held-out accuracy by {} ± {} points",
     lambda: _diff("T", "2", "per_pass_hits", 0) + _diff("T", "2")),
    ("On task\n  2, first-pass hits rise by {} ± {} points", lambda: _diff("D1", "2", "per_pass_hits", 0)),
    ("Held-out accuracy on task 2 rises by {} ± {} points", lambda: _diff("D1", "2")),
    ("On task 3 its held-out accuracy moves by {} ± {} points", lambda: _diff("D1", "3")),
    ("On task 3 the probe raises held-out accuracy by {} ± {} points, and third-pass hits by {} ± {} points",
     lambda: _diff("T", "3") + _diff("T", "3", "per_pass_hits", 2)),
    ("Task 2's held-out accuracy moves\n  by {} ± {} points", lambda: _diff("D4", "2")),
    ("the answer is right in {}% of the questions whose second pass finds its fact, against {}% when it\n  misses",
     lambda: [_answered("base", "2", 1, "hits"), _answered("base", "2", 1, "misses")]),
    ("Whether the first pass hits matters little: {}% against {}%",
     lambda: [_answered("base", "2", 0, "hits"), _answered("base", "2", 0, "misses")]),
    ("{}% right when it hits, {}% when it misses. It hits in {}% of the questions",
     lambda: [_answered("base", "3", 2, "hits"), _answered("base", "3", 2, "misses"),
              _pp(_stored()["base"]["3"]["per_pass_hits"][2])]),
    ("{}% held out with D1, {}% with the probe", lambda: [_pp(_stored()["D1"]["2"]["held_out_accuracy"]),
                                                      _pp(_stored()["T"]["2"]["held_out_accuracy"])]),
    ("Task 2's held-out accuracy moves by {} ± {} points: not\n  distinguishable", lambda: _diff("D2-3", "2")),
    ("Task 2's held-out accuracy falls by\n  {} ± {} points, lower on every seed",
     lambda: [f"{-float(v):.1f}" if k == 0 else v for k, v in enumerate(_diff("D3", "2"))]),
    ("by {} ± {} points, and its second pass does not ({} ± {})",
     lambda: _diff("D3", "2", "per_pass_hits", 0) + _diff("D3", "2", "per_pass_hits", 1)),
    ("Task 2's held-out accuracy rises by {} ± {} points, higher on every seed", lambda: _diff("D7", "2")),
    ("first-pass hits by {} ± {} points, second-pass hits by {} ± {}.",
     lambda: _diff("D7", "2", "per_pass_hits", 0) + _diff("D7", "2", "per_pass_hits", 1)),
    ("It is right in {}% of the questions whose second pass finds its fact, against {}% when it misses\n  (the row: "
     "{}% and {}%)", lambda: [_answered("D7", "2", 1, "hits"), _answered("D7", "2", 1, "misses"),
                             _answered("base", "2", 1, "hits"), _answered("base", "2", 1, "misses")]),
    ("memory. Task 2's\n  held-out accuracy moves by {} ± {} points: not distinguishable", lambda: _diff("D8", "2")),
    ("(D1+D7), task 2's held-out accuracy rises by {} ± {} points, to {}%",
     lambda: _diff("D1+D7", "2") + [_pp(_stored()["D1+D7"]["2"]["held_out_accuracy"])]),
    ("On task 3, D7 raises held-out accuracy by {} ± {} points", lambda: _diff("D7", "3")),
    ("D1+D7 raises it by {} ± {} points, to {}%: not distinguishable",
     lambda: _diff("D1+D7", "3") + [_pp(_stored()["D1+D7"]["3"]["held_out_accuracy"])]),
]


@pytest.mark.parametrize("template, values", NOTES_QUOTES, ids=[q[0][:40] for q in NOTES_QUOTES])
def test_the_notes_quote_the_stored_diagnosis(template, values):
    notes = (RESULTS / "dmn_diagnosis_notes.md").read_text()
    assert template.format(*values()) in notes


def test_the_notes_claims_about_differences_follow_the_two_standard_error_rule():
    notes = (RESULTS / "dmn_diagnosis_notes.md").read_text()
    table = _stored()
    assert diag.beyond(table["D1"]["2"]["minus_base"]["held_out_accuracy"]).startswith("no")
    assert diag.beyond(table["D4"]["2"]["minus_base"]["held_out_accuracy"]).startswith("no")
    assert diag.beyond(table["D1"]["3"]["minus_base"]["held_out_accuracy"]).startswith("no")
    assert diag.beyond(table["T"]["2"]["minus_base"]["held_out_accuracy"]) == "yes"
    assert diag.beyond(table["T"]["3"]["minus_base"]["held_out_accuracy"]) == "yes"
    assert diag.beyond(table["D2-3"]["2"]["minus_base"]["held_out_accuracy"]).startswith("no")
    d3 = table["D3"]["2"]
    assert diag.beyond(d3["minus_base"]["held_out_accuracy"]) == "yes" and d3["minus_base"]["held_out_accuracy"]["mean"] < 0
    assert all(d3["per_seed"][k]["held_out_accuracy"] < table["base"]["2"]["per_seed"][k]["held_out_accuracy"]
               for k in ("0", "1", "2"))                                                 # "lower on every seed"
    d7 = table["D7"]["2"]
    assert diag.beyond(d7["minus_base"]["held_out_accuracy"]) == "yes" and d7["minus_base"]["held_out_accuracy"]["mean"] > 0
    assert all(d7["per_seed"][k]["held_out_accuracy"] > table["base"]["2"]["per_seed"][k]["held_out_accuracy"]
               for k in ("0", "1", "2"))                                                 # "higher on every seed"
    assert diag.beyond(table["D1+D7"]["2"]["minus_base"]["held_out_accuracy"]) == "yes"
    assert diag.beyond(table["D8"]["2"]["minus_base"]["held_out_accuracy"]).startswith("no")
    d7_3 = table["D7"]["3"]                                                              # "4 points on each seed"
    assert {round(d7_3["per_seed"][k]["held_out_accuracy"] - table["base"]["3"]["per_seed"][k]["held_out_accuracy"], 4)
            for k in ("0", "1", "2")} == {0.04}
    assert diag.beyond(table["D1+D7"]["3"]["minus_base"]["held_out_accuracy"]).startswith("no")
    assert notes.count("not\n  distinguishable") + notes.count("not distinguishable") == 6


def test_a_kept_run_is_read_back_under_its_own_code_or_a_checked_same_training_only(tmp_path):
    settings = diag.settings_for("base")
    run = tmp_path / "run"
    run.mkdir()
    result = {"held_out_accuracy": 0.5}
    for code, readable in ((diag.CODE, True), (next(iter(diag.SAME_TRAINING)), True), ("0" * 16, False)):
        (run / "result.json").write_text(json.dumps({"settings": settings, "code": code, "result": result}))
        assert (diag.kept(run, settings) == result) is readable, code
    for fingerprint, check in diag.SAME_TRAINING.items():      # each names the commit and what was compared
        assert len(fingerprint) == 16 and fingerprint != diag.CODE
        assert re.match(r"[0-9a-f]{7}\b", check) and "same weights" in check


def test_protocol_version_5_quotes_the_stored_diagnosis():
    """results/babi_protocol.md's version 5 gives the diagnosis's figures for the two choices it adds to the grid."""
    protocol = (RESULTS / "babi_protocol.md").read_text()
    version5 = protocol[protocol.index("## Version 5"):protocol.index("## Version 6")]
    flat = " ".join(version5.split())
    for template, arm in [("(D1) +{} ± {} points, not distinguishable", "D1"), ("(D7) +{} ± {};", "D7"),
                          ("both together +{} ± {}.", "D1+D7"), ("(T, +{} ± {})", "T")]:
        assert template.format(*_diff(arm, "2")) in flat
    beyond = {a: abs((d := _stored()[a]["2"]["minus_base"]["held_out_accuracy"])["mean"]) > 2 * d["se"]
              for a in ("D1", "D7", "D1+D7", "T")}
    assert beyond == {"D1": False, "D7": True, "D1+D7": True, "T": True}
