"""``experiments/babi_rows.py cures``, the protocol's version 6 rule for the course's row's cures: a cure
joins only by held-out figures, on its target tasks first, then on seed 0's 20 tasks."""
from __future__ import annotations

import json

import pytest
from conftest import load_script

rows = load_script("babi_rows")


def _fake_fit(effects: dict):
    """A training whose held-out figures are the row's, moved by ``effects``: {cure: (accuracy
    change, answer-loss change, 20-task accuracy change)} on the cure's target tasks (the last
    entry on every other task)."""
    def fit(task, folder, settings, out, seed, score_test):
        fit.calls.append((task, seed, score_test, settings.get("ceiling_patience")))
        acc, loss = 0.9 + 0.001 * seed + 0.002 * (task % 3), 0.3 - 0.01 * seed - 0.004 * (task % 5)
        for name, (d_acc, d_loss, d_other) in effects.items():
            if any(settings.get(k) == v for k, v in rows.CURES[name]["settings"].items()):
                aimed = task in rows.CURES[name]["tasks"]
                acc += d_acc if aimed else d_other
                loss += (d_loss + 0.002 * seed) if aimed else 0.0     # a spread, so the paired se is not 0
        return {"val_accuracy": acc, "val_answer_loss": loss, "best_epoch": 1, "epochs": 1, "train_seconds": 1.0,
                "wall_seconds": 1.0}
    fit.calls = []
    return fit


def _run(monkeypatch, tmp_path, effects):
    fit = _fake_fit(effects)
    monkeypatch.setattr(rows, "_fit", fit)
    monkeypatch.setattr(rows, "passes_needed", lambda folder, task: 3 if task in (3, 7, 8) else 2)
    monkeypatch.setattr(rows, "CURES_OUT", tmp_path / "babi_cures.json")
    (tmp_path / "en").mkdir()
    assert rows.main([str(tmp_path), "cures", "--row", "dmn+ext", "--jobs", "1", "--runs", str(tmp_path / "runs")]) == 0
    return json.loads((tmp_path / "babi_cures.json").read_text()), fit


@pytest.mark.parametrize("effects, joined", [
    ({"answer_hidden": (0.0, -0.05, 0.0), "rename_entities": (0.03, 0.0, 0.0)}, ["answer_hidden", "rename_entities"]),
    ({"answer_hidden": (0.0, -0.001, 0.0), "rename_entities": (0.015, -0.0, 0.0)}, []),   # neither surer nor 2 points
    ({"answer_hidden": (-0.005, -0.05, 0.0), "rename_entities": (0.03, 0.0, -0.01)}, []),  # accuracy falls; 20 tasks fall
    ({"answer_hidden": (0.01, -0.05, 0.0), "rename_entities": (0.0, 0.0, 0.0)}, ["answer_hidden"]),
])
def test_a_cure_joins_only_by_the_held_out_rule(monkeypatch, tmp_path, effects, joined):
    stored, fit = _run(monkeypatch, tmp_path, effects)
    assert stored["joined"] == joined
    assert not any(call[2] for call in fit.calls)                       # the test is never scored
    assert all(call[3] == 0 for call in fit.calls)                      # trained as select trains: stop at 100%
    for name, v in stored["verdicts"].items():
        d_acc, d_loss, d_other = effects[name]
        assert v["held_out_accuracy"]["mean"] == pytest.approx(d_acc, abs=1e-6)
        assert v["passes"] is (d_acc >= 0 and (d_acc > 0.02 or d_loss < -0.01))
        assert ("mean20_cure" in v) is v["passes"]
    assert stored["provenance"]["command"].startswith("python experiments/babi_rows.py") and " cures --row dmn+ext" in stored["provenance"]["command"]


def test_two_cures_that_join_alone_but_not_together_leave_the_one_with_the_higher_20_task_mean(monkeypatch,
                                                                                            tmp_path):
    effects = {"answer_hidden": (0.0, -0.05, 0.0), "rename_entities": (0.03, 0.0, 0.001)}
    fit = _fake_fit(effects)

    def together_loses_a_point(task, folder, settings, out, seed, score_test):
        r = fit(task, folder, settings, out, seed, score_test)
        both = settings.get("answer_hidden") and settings.get("rename_entities")
        return dict(r, val_accuracy=r["val_accuracy"] - (0.01 if both else 0.0))
    monkeypatch.setattr(rows, "_fit", together_loses_a_point)
    monkeypatch.setattr(rows, "passes_needed", lambda folder, task: 3 if task in (3, 7, 8) else 2)
    monkeypatch.setattr(rows, "CURES_OUT", tmp_path / "babi_cures.json")
    (tmp_path / "en").mkdir()
    assert rows.main([str(tmp_path), "cures", "--row", "dmn+ext", "--jobs", "1", "--runs", str(tmp_path / "runs")]) == 0
    stored = json.loads((tmp_path / "babi_cures.json").read_text())
    assert stored["together"]["cures"] == ["answer_hidden", "rename_entities"] and stored["together"]["joins"] is False
    assert stored["joined"] == ["rename_entities"]                      # its 20-task mean is the higher
    assert "answer_hidden+rename_entities" in stored["runs"]


def test_the_cures_are_for_the_course_row_only(tmp_path, capsys):
    (tmp_path / "en").mkdir()
    with pytest.raises(SystemExit):
        rows.main([str(tmp_path), "cures", "--row", "dmn", "--jobs", "1", "--runs", str(tmp_path / "runs")])
    assert "cures: the cures are for the dmn+ext row" in capsys.readouterr().err


def test_the_cures_table_gives_every_pair_the_differences_and_what_joined(monkeypatch, tmp_path):
    """cures_table, which the protocol quotes: each cure's (task, seed) pairs for the row and the cure, the paired
    differences with their standard errors, the 20-task step, and what joined; within 120 characters a line."""
    stored, _ = _run(monkeypatch, tmp_path, {"answer_hidden": (0.0, -0.05, 0.0), "rename_entities": (0.03, 0.0, 0.0)})
    text = rows.cures_table(stored)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 120
    pairs = [line.split() for line in lines if line.split()[:1] and line.split()[0].isdigit()]
    assert len(pairs) == 3 * (len(rows.CURES["answer_hidden"]["tasks"]) + len(rows.CURES["rename_entities"]["tasks"]))
    rename = [p for p in pairs if p[0] == "3"]
    assert all(float(p[3]) - float(p[2]) == pytest.approx(3.0, abs=0.051) for p in rename)     # +3 points held out
    v = stored["verdicts"]["answer_hidden"]
    assert f"answer loss {v['held_out_answer_loss']['mean']:+.4f} ± {v['held_out_answer_loss']['se']:.4f}" in text
    assert text.count("first step passed") == 2 and text.splitlines()[-2].endswith(": join")
    assert lines[-1] == "joined: answer_hidden, rename_entities"
    (tmp_path / "again").mkdir()
    none, _ = _run(monkeypatch, tmp_path / "again",
                   {"answer_hidden": (0.0, -0.001, 0.0), "rename_entities": (0.015, 0.0, 0.0)})
    assert rows.cures_table(none).splitlines()[-1] == "joined: none" and "first step passed" not in rows.cures_table(none)


def test_the_cures_sentences_say_what_the_rule_decided(monkeypatch, tmp_path):
    stored, _ = _run(monkeypatch, tmp_path, {"answer_hidden": (0.01, -0.0025, 0.0), "rename_entities": (0.03, 0.0, -0.01)})
    said = rows.cures_sentences(stored)
    assert "`answer_hidden` fails the first step: on its target tasks the held-out accuracy moves +1.00" in said
    assert "(not more than 2)" in said and "`rename_entities` passes the first step" in said
    assert "(a fall within two standard errors)" in said and "(no fall)" in said
    assert "(more than 2)" in said and "it does not join (the tie is 0.2 points)" in said
    assert said.endswith("So the course's row trains with neither cure in its `final` with the restarts.")
