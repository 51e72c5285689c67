"""``experiments/babi_rows.py``, the runner of ``results/babi_protocol.md``'s three rows: each row
is its paper's model, selection never scores the test, a stopped run goes on where it stopped, and
a row's figures are the protocol's (hand-computed here)."""
from __future__ import annotations

import json

import pytest
import torch
from conftest import load_script

from dca_course.data.babi import TASK_NAMES
from dca_course.data.babi.format import write_babi
from dca_course.data.babi.generate import generate_task
from dca_course.recipes import DMNConfig, DMNRecipe
from dca_course.recipes.config import config_overrides
from dca_course.recipes.dmn import BABI_CHOSEN, BABI_ROWS

rows = load_script("babi_rows")
POINT = rows.grid_points()[0]
TINY = dict(epochs=1, emb_size=8, hidden_size=8)


def test_each_row_is_its_papers_model_and_the_rows_differ_only_in_the_model():
    extensions = {row: sorted(e.name for e in DMNRecipe(rows.config_for(row, POINT)).extensions()) for row in rows.ROWS}
    assert extensions == {"dmn": [], "dmn+": [], "dmn+ext": ["time_features", "word_match"]}
    dmn = rows.config_for("dmn", POINT)
    assert (dmn.dmn_variant, dmn.input_module, dmn.gate_features, dmn.memory_update) == ("dmn", "gru", "dmn", "gru")
    plus = rows.config_for("dmn+", POINT)
    assert (plus.dmn_variant, plus.input_module, plus.gate_features, plus.memory_update) == \
        ("dmn+", "fusion", "dmn+", "relu")
    assert dmn.gate_supervision and plus.gate_supervision
    for a in rows.ROWS:
        for b in rows.ROWS:
            differ = {k for k, v in rows.config_for(a, POINT).to_dict().items()
                      if rows.config_for(b, POINT).to_dict()[k] != v}
            assert differ <= set(rows.ROWS[a]), (a, b, differ)


def test_one_trainings_command_line_trains_the_rows_configuration():
    from dca_course.__main__ import build_parser

    point = rows.grid_points()[-1]
    words = rows.command_for("dmn+ext", point, "FOLDER", 17, 2).split()[3:]      # after "python -m dca_course"
    args = build_parser("dmn").parse_args(words)
    assert (args.data, args.profile, args.seed) == ("babi:FOLDER:17", "full", 2)
    given = config_overrides(args, DMNConfig, {"dmn": DMNConfig}, "dmn")
    assert DMNConfig.from_profile(args.profile, given) == rows.config_for("dmn+ext", point)


def test_the_grid_is_the_protocols_and_a_tie_goes_to_the_smaller_values():
    assert len(rows.grid_points()) == 2 * 3 * 2 * 2
    p = lambda lr, wd, dr, cap: {"lr": lr, "weight_decay": wd, "dropout": dr, "max_passes": cap}
    scored = [{"point": p(3e-3, 1e-3, 0.1, 5), "held_out_mean": 0.9600},
              {"point": p(1e-3, 1e-3, 0.1, 5), "held_out_mean": 0.9585},     # 0.15 points under: a tie, smaller lr
              {"point": p(1e-3, 0.0, 0.0, 3), "held_out_mean": 0.9570}]      # 0.3 points under: not a tie
    assert rows.choose(scored) == scored[1]
    assert rows.choose(scored[:1] + scored[2:]) == scored[0]
    assert rows.retry_value(p(1e-3, 1e-3, 0, 3)) == 3e-4
    assert rows.retry_value(p(1e-3, 0.0, 0, 3)) is None


def test_a_rows_figures_are_the_protocols():
    acc = {t: [1.0, 1.0, 1.0] for t in TASK_NAMES}
    acc[3] = [0.94, 0.95, 0.96]        # mean 0.95: at the pass line
    acc[17] = [0.5, 0.6, 0.7]
    acc[19] = [0.3, 0.3, 0.3]
    runs = {t: {s: {"accuracy": a} for s, a in zip((0, 1, 2), v)} for t, v in acc.items()}
    row = rows.summarise_row(runs, [0, 1, 2])
    assert row["mean"] == round((17 + 0.95 + 0.6 + 0.3) / 20, 4) == 0.9425
    assert row["mean_without_17_19"] == round((17 + 0.95) / 18, 4) == 0.9972
    assert row["tasks_at_95"] == 18
    assert row["per_task"]["17"] == {"mean": 0.6, "sd": 0.1, "per_seed": {"0": 0.5, "1": 0.6, "2": 0.7}}
    assert row["seeds"] == [0, 1, 2]


def _fake_fit(calls, held_out):
    def fit(task, folder, settings, out, seed, score_test):
        calls.append(settings["weight_decay"])
        return {"val_accuracy": held_out[settings["weight_decay"]], "accuracy": 0.5, "best_epoch": 1, "epochs": 1,
                "train_seconds": 1.0, "wall_seconds": 1.0, "weight_decay": settings["weight_decay"]}
    return fit


def test_a_finished_training_is_read_back_and_an_unsolved_one_retries_with_less_l2(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(rows, "_fit", _fake_fit(calls, {1e-3: 0.90, 3e-4: 0.93}))
    settings = rows.row_settings("dmn", dict(POINT, weight_decay=1e-3))
    kept = rows.train_kept(3, "f", settings, tmp_path / "t3", 0, True, retry_weight_decay=3e-4)
    assert calls == [1e-3, 3e-4] and kept["weight_decay"] == 3e-4 and kept["train_seconds"] == 2.0
    assert rows.train_kept(3, "f", settings, tmp_path / "t3", 0, True, retry_weight_decay=3e-4) == kept
    assert calls == [1e-3, 3e-4]                              # read back: nothing trained again
    stored = json.loads((tmp_path / "t3" / "result.json").read_text())
    assert stored["code"] == rows.CODE == rows.measured_code()
    assert stored["command"].startswith("python -m dca_course train dmn")
    monkeypatch.setattr(rows, "CODE", "other code")
    rows.train_kept(3, "f", settings, tmp_path / "t3", 0, True, retry_weight_decay=3e-4)
    assert calls == [1e-3, 3e-4] * 2                          # the model's code changed: trained again
    monkeypatch.undo()
    monkeypatch.setattr(rows, "_fit", _fake_fit(calls, {1e-3: 0.90, 3e-4: 0.93}))
    calls[:] = [1e-3, 3e-4]
    rows.train_kept(3, "f", dict(settings, lr=3e-3), tmp_path / "t3", 0, True, 3e-4)
    assert len(calls) == 4                                    # other settings: trained again
    calls.clear()
    monkeypatch.setattr(rows, "_fit", _fake_fit(calls, {1e-3: 0.97, 3e-4: 0.99}))
    rows.train_kept(1, "f", settings, tmp_path / "t1", 0, True, retry_weight_decay=3e-4)
    assert calls == [1e-3]                                    # solved on the held-out stories: no retry


def test_selection_trains_on_held_out_stories_and_never_scores_the_test(babi_spy, babi_folder, tmp_path):
    settings = dict(rows.row_settings("dmn+ext", POINT), **TINY)
    result = rows._fit(1, str(babi_folder), settings, tmp_path / "run", 0, score_test=False)
    assert "accuracy" not in result and 0.0 <= result["val_accuracy"] <= 1.0
    assert babi_spy.never_scored_the_test()
    # the final run scores the test once, at the end
    babi_spy.scored.clear()
    final = rows._fit(1, str(babi_folder), settings, tmp_path / "final", 0, score_test=True)
    assert 0.0 <= final["accuracy"] <= 1.0
    assert [id(ex) for ex in babi_spy.scored[-1]] == [id(ex) for ex in babi_spy.loaded[-1].test]


def test_select_then_final_writes_the_row_into_the_stored_results(monkeypatch, babi_folder, tmp_path):
    monkeypatch.setattr(rows, "ROW_GRID", {})          # version 4's grid only: the dmn row's last step aside
    monkeypatch.setattr(rows, "GRID", {"lr": (1e-3,), "weight_decay": (0.0, 1e-3), "dropout": (0.0,),
                                       "max_passes": (3,)})
    monkeypatch.setattr(rows, "FIXED", dict(rows.FIXED, **TINY))
    monkeypatch.setattr(rows, "SELECTION", tmp_path / "babi_selection.json")
    monkeypatch.setattr(rows, "STORED", tmp_path / "babi_real_1k.json")
    (tmp_path / "babi_real_1k.json").write_text(json.dumps({"mean_accuracy": 0.98}))
    folder = str(babi_folder)
    with pytest.raises(SystemExit):      # no choice yet: refused
        rows.main([folder, "final", "--row", "dmn", "--jobs", "1", "--runs", str(tmp_path / "runs")])
    runs = ["--tasks", "1", "--jobs", "1", "--runs", str(tmp_path / "runs")]
    assert rows.main([folder, "select", "--row", "dmn", *runs]) == 0
    selection = json.loads((tmp_path / "babi_selection.json").read_text())
    assert len(selection["dmn"]["points"]) == 2 and selection["dmn"]["chosen"] in rows.grid_points()
    assert selection["provenance"]["command"].startswith("python experiments/babi_rows.py")
    assert rows.main([folder, "final", "--row", "dmn", "--seeds", "0,1", *runs]) == 0
    stored = json.loads((tmp_path / "babi_real_1k.json").read_text())
    row = stored["rows"]["dmn"]
    assert stored["mean_accuracy"] == 0.98                    # the rest of the file is left as it was
    assert set(row) >= {"mean", "mean_without_17_19", "tasks_at_95", "per_task", "seeds", "provenance"}
    assert row["seeds"] == [0, 1] and list(row["per_task"]) == ["1"]
    assert row["mean"] == row["per_task"]["1"]["mean"]
    # each run names its data as results do, relative to the repository (never a home folder)
    assert {r["data"] for r in row["runs"]["1"].values()} == {f"babi:{rows.repo_path(folder)}:1"}
    assert not rows.repo_path(folder).startswith("/")
    # the notebooks (03b, 08) print the rows beside the papers' figures, or say that a row has not run
    from dca_course.data.babi.readings import rows_table

    table = rows_table(stored).splitlines()
    assert table[0].startswith("seeds 0, 1 ") and all(len(line) <= 120 for line in table)   # every row's seeds
    assert table[1].startswith("DMN (Kumar et al. 2016) ") and f"{100 * row['mean']:.1f}" in table[1]
    assert table[2].startswith("dmn+: not run yet") and table[3].startswith("dmn+ext: not run yet")
    assert table[4].split()[-7:-5] == ["93.6", "98.8"]        # Kumar et al.'s mean, and without 17 and 19
    assert table[1].split()[-2] == f"{row['train_seconds'] / 3600:.1f}"      # one-thread training hours
    slowest = max(row["runs"]["1"][s]["train_seconds"] for s in ("0", "1"))  # one task: its slower seed
    assert table[1].split()[-1] == f"{slowest / 60:.0f}"


def test_a_seeds_wall_time_is_the_pools_in_task_order():
    assert rows.pool_wall_seconds([5, 1, 1, 1], 2) == 5           # the short ones go to the free worker
    assert rows.pool_wall_seconds([1, 1, 2], 2) == 3              # in the order given, not the best order (2)
    assert rows.pool_wall_seconds([3, 4], 1) == 7
    runs = {1: {0: {"train_seconds": 60}, 1: {"train_seconds": 600}}, 2: {0: {"train_seconds": 120}, 1: {"train_seconds": 60}}}
    assert rows.longest_seed_minutes(runs, [0, 1]) == 10          # seed 1: 600 s and 60 s side by side
    assert rows.longest_seed_minutes(runs, [0, 1], workers=1) == 11
    # a rescored run counts with the time of the final command's training
    runs[1][1] = {"train_seconds": 6, "replaced_run": {"train_seconds": 600}}
    assert rows.longest_seed_minutes(runs, [0, 1]) == 10
    # in the runner's order: its pool takes a seed's tasks in rows.TASKS's order, 3 first (the longest)
    three = {1: {0: {"train_seconds": 60}}, 2: {0: {"train_seconds": 60}}, 3: {0: {"train_seconds": 120}}}
    assert rows.TASKS.index(3) < rows.TASKS.index(2) < rows.TASKS.index(1)
    assert rows.longest_seed_minutes(three, [0]) == 2             # 3 first, then 2 and 1 on the other worker
    # the row's summary stores it, and the tables read it from there
    row = rows.summarise_row({t: {s: dict(r, accuracy=1.0) for s, r in v.items()} for t, v in three.items()}, [0])
    assert row["longest_seed_minutes_2_workers"] == 2.0


def test_two_caps_a_task_cannot_use_train_one_model_and_the_grid_trains_it_once(monkeypatch, babi_folder, tmp_path):
    folder = str(babi_folder)
    assert rows.passes_needed(folder, 1) == 1                 # task 1: one supporting fact a question
    # the cap changes nothing the task can use: the same parameters, bit for bit
    import torch

    trained = {}
    for cap in (3, 5):
        settings = dict(rows.row_settings("dmn", dict(POINT, max_passes=cap)), **TINY)
        rows._fit(1, folder, settings, tmp_path / f"cap{cap}", 0, score_test=False)
        trained[cap] = torch.load(tmp_path / f"cap{cap}" / "last.pt", weights_only=True)["model"]
    assert trained[3].keys() == trained[5].keys()
    assert all(torch.equal(trained[3][k], trained[5][k]) for k in trained[3])
    # so select trains each (task, lr, L2, dropout) once for both caps, and gives both points its figure
    monkeypatch.setattr(rows, "ROW_GRID", {})          # version 4's grid only: the dmn row's last step aside
    monkeypatch.setattr(rows, "GRID", {"lr": (1e-3,), "weight_decay": (0.0,), "dropout": (0.0,), "max_passes": (3, 5)})
    monkeypatch.setattr(rows, "FIXED", dict(rows.FIXED, **TINY))
    fits = []
    fit = rows._fit
    monkeypatch.setattr(rows, "_fit", lambda *a: fits.append(a[2]["max_passes"]) or fit(*a))
    for split, n, seed in (("train", 40, 2), ("test", 10, 3)):
        write_babi(generate_task(2, n, seed=seed), babi_folder / "en" / f"{TASK_NAMES[2]}_{split}.txt")
    chosen = rows.select(folder, "dmn", tmp_path / "runs", 1, tasks=[1, 2], needed={1: 1, 2: 5})
    assert sorted(fits) == [1, 3, 5]                           # task 1 once (cap 1), task 2 under each cap
    first, second = chosen["points"]
    assert first["held_out_per_task"]["1"] == second["held_out_per_task"]["1"]
    assert chosen["chosen"]["max_passes"] == 3 or first["held_out_mean"] < second["held_out_mean"] - rows.TIE


def test_one_point_of_the_grid_is_a_share_of_select_that_a_later_select_reads_back(monkeypatch, babi_folder,
                                                                                     tmp_path):
    monkeypatch.setattr(rows, "ROW_GRID", {})          # version 4's grid only: the dmn row's last step aside
    monkeypatch.setattr(rows, "GRID", {"lr": (1e-3,), "weight_decay": (0.0, 1e-3), "dropout": (0.0,),
                                       "max_passes": (3,)})
    monkeypatch.setattr(rows, "FIXED", dict(rows.FIXED, **TINY))
    monkeypatch.setattr(rows, "SELECTION", tmp_path / "babi_selection.json")
    monkeypatch.setattr(rows, "POINTS", tmp_path / "babi_points.json")
    with pytest.raises(SystemExit, match="not a point of the grid"):
        rows.parse_point("lr=0.001,weight_decay=0.5,dropout=0,max_passes=3")
    with pytest.raises(SystemExit, match="give every setting"):
        rows.parse_point("lr=0.001")
    point = rows.parse_point("lr=0.001,weight_decay=0.001,dropout=0,max_passes=3")
    assert point == {"lr": 1e-3, "weight_decay": 1e-3, "dropout": 0.0, "max_passes": 3}
    fits = []
    fit = rows._fit
    monkeypatch.setattr(rows, "_fit", lambda *a: fits.append(a[2]["weight_decay"]) or fit(*a))
    runs = ["--tasks", "1", "--jobs", "1", "--runs", str(tmp_path / "runs")]
    folder = str(babi_folder)
    assert rows.main([folder, "select", "--row", "dmn", "--point", "lr=0.001,weight_decay=0.001,dropout=0,"
                      "max_passes=3", *runs]) == 0
    parts = json.loads((tmp_path / "babi_points.json").read_text())
    part = parts["dmn"][rows.point_name(point)]
    assert part["point"] == point and part["epochs"] == {"1": 1} and part["wall_seconds"] >= 0   # 0.1 s steps: may be 0
    assert "select --row dmn --point lr=0.001,weight_decay=0.001" in parts["provenance"]["command"]
    assert not (tmp_path / "babi_selection.json").exists()            # a share of the grid chooses nothing
    assert fits == [1e-3]
    assert rows.main([folder, "select", "--row", "dmn", *runs]) == 0   # the whole grid: the share read back
    assert fits == [1e-3, 0.0]
    chosen = json.loads((tmp_path / "babi_selection.json").read_text())["dmn"]
    assert [p["held_out_per_task"]["1"] for p in chosen["points"]][1] == part["held_out_per_task"]["1"]


@pytest.mark.parametrize("task3_cure, other_cure, joins", [(0.90, 0.99, False), (0.95, 0.99, True),
                                                           (0.95, 0.985, False)])
def test_the_cure_joins_the_row_only_by_the_protocols_rule(monkeypatch, tmp_path, task3_cure, other_cure, joins):
    """babi_rows.py cure: task 3 first (the cure must add more than 2 points over seeds 0-2),
    then, only if it does, the 20 tasks on seed 0 (a fall of at most the tie); held-out figures only."""
    fit = _arm_fit(task3_cure, other_cure)
    monkeypatch.setattr(rows, "_fit", fit)
    monkeypatch.setattr(rows, "passes_needed", lambda folder, task: 3 if task == 3 else 2)
    monkeypatch.setattr(rows, "CURE_OUT", tmp_path / "babi_cure.json")
    assert rows.main([str(tmp_path), "cure", "--row", "dmn+ext", "--jobs", "1", "--runs", str(tmp_path / "runs")]) == 0
    stored = json.loads((tmp_path / "babi_cure.json").read_text())
    verdict = stored["verdict"]
    assert verdict["task3_base"] == 0.92 and verdict["task3_cure"] == task3_cure
    assert verdict["joins_dmn+ext"] is joins
    assert ("mean20_cure" in verdict) is verdict["task3_passes"] is (task3_cure == 0.95)
    assert not any(call[1] for call in fit.calls)                          # score_test: never
    # the base arm's seed-0 trainings are the row's select folders (select reads them back)
    assert (tmp_path / "runs" / "dmn+ext" / "select" / "lr0.003_weight_decay0.001_dropout0.1_max_passes3" /
            "task03" / "result.json").is_file()


def _arm_fit(task3_cure, other_cure):
    def fit(task, folder, settings, out, seed, score_test):
        fit.calls.append((task, score_test))
        cured = settings.get("intervening_facts", False)
        val = (task3_cure if cured else 0.92) if task == 3 else (other_cure if cured else 0.99)
        return {"val_accuracy": val, "best_epoch": 1, "epochs": 1, "train_seconds": 1.0, "wall_seconds": 1.0}
    fit.calls = []
    return fit


def test_select_searches_one_setting_at_a_time_from_the_smallest_values(monkeypatch, tmp_path):
    """Version 4's search: lr, then L2, then dropout, each step every value under both caps with the
    rest at the choice so far; five (lr, L2, dropout) points instead of twelve, each trained once."""
    best = {"lr": 3e-3, "weight_decay": 3e-4, "dropout": 0.0}       # the held-out figures peak here

    def fit(task, folder, settings, out, seed, score_test):
        assert not score_test and settings["ceiling_patience"] == 0        # selection stops at 100%
        fit.calls.append((task, rows.point_name({k: settings[k] for k in rows.GRID})))
        miss = sum(settings[k] != v for k, v in best.items()) + (settings["max_passes"] != 5) * (task == 7)
        return {"val_accuracy": 1.0 - 0.01 * miss, "best_epoch": 1, "epochs": 1, "train_seconds": 1.0,
                "wall_seconds": 1.0}
    fit.calls = []
    monkeypatch.setattr(rows, "_fit", fit)
    chosen = rows.select("f", "dmn+", tmp_path / "runs", 1, tasks=[1, 7], needed={1: 1, 7: 5})
    assert [s["setting"] for s in chosen["steps"]] == ["lr", "weight_decay", "dropout"]
    assert [len(s["points"]) for s in chosen["steps"]] == [4, 6, 4]
    assert [s["chosen"] for s in chosen["steps"]] == [dict(lr=3e-3, weight_decay=0.0, dropout=0.0, max_passes=5),
                                                     dict(best, max_passes=5), dict(best, max_passes=5)]
    assert chosen["chosen"] == dict(best, max_passes=5)
    # (lr, L2, dropout): (1,0,0) (3,0,0), then (3,3e-4,0) (3,1e-3,0), then (3,3e-4,0.1): 5 points;
    # task 1 once a point (cap 1), task 7 under each cap
    assert len(fit.calls) == 5 * 3 == len(set(fit.calls))
    assert len(chosen["points"]) == 10 and all(p["point"] in rows.grid_points() for p in chosen["points"])


def test_the_dmn_rows_search_ends_with_gate_loss_and_initialisation_together(monkeypatch, tmp_path):
    """Version 5: the dmn row's grid adds the gate loss's form and the initialisation, tried together in
    one last step (four points, both caps) at the point the first three steps keep; every training of the
    row names both, its first values (the row as it was) from the first step on."""
    best = {"lr": 1e-3, "weight_decay": 0.0, "dropout": 0.0, "gate_loss": "softmax", "dmn_init": "xavier"}

    def fit(task, folder, settings, out, seed, score_test):
        fit.calls.append((task, rows.point_name({k: settings[k] for k in rows.grid_for("dmn")})))
        both = settings["gate_loss"] == "softmax" and settings["dmn_init"] == "xavier"     # they help only together
        miss = sum(settings[k] != best[k] for k in ("lr", "weight_decay", "dropout")) + 2 * (not both)
        return {"val_accuracy": 1.0 - 0.01 * miss, "best_epoch": 1, "epochs": 1, "train_seconds": 1.0,
                "wall_seconds": 1.0}
    fit.calls = []
    monkeypatch.setattr(rows, "_fit", fit)
    chosen = rows.select("f", "dmn", tmp_path / "runs", 1, tasks=[1], needed={1: 1})
    assert [s["setting"] for s in chosen["steps"]] == ["lr", "weight_decay", "dropout", "gate_loss+dmn_init"]
    assert [len(s["points"]) for s in chosen["steps"]] == [4, 6, 4, 8]
    assert chosen["chosen"] == dict(best, max_passes=3)
    assert all(p["point"] in rows.grid_points("dmn") for p in chosen["points"])
    assert {p["point"]["gate_loss"] for p in chosen["points"][:10]} == {"bce"}      # the first steps: the row as it was
    assert len(fit.calls) == len(set(fit.calls)) == 5 + 3                           # cap 1 for task 1: one training a point
    # the other rows' search is version 4's, and a point of the dmn row names its two settings
    assert rows.grid_for("dmn+") == rows.GRID and len(rows.grid_points("dmn")) == 4 * len(rows.grid_points())
    assert rows.parse_point("lr=0.001,weight_decay=0,dropout=0,max_passes=3,gate_loss=softmax,dmn_init=xavier",
                            "dmn") == dict(best, max_passes=3)
    with pytest.raises(SystemExit, match="give every setting"):
        rows.parse_point("lr=0.001,weight_decay=0,dropout=0,max_passes=3", "dmn")
    with pytest.raises(SystemExit, match="not a point of the grid"):
        rows.parse_point("lr=0.001,weight_decay=0,dropout=0,max_passes=3,gate_loss=mse,dmn_init=xavier", "dmn")
    config = rows.config_for("dmn", chosen["chosen"])
    assert (config.gate_loss, config.dmn_init) == ("softmax", "xavier")
    assert rows.point_name(chosen["chosen"]).endswith("_gate_loss-softmax_dmn_init-xavier")
    table = rows.selection_rows(chosen)
    assert table[-1].startswith("| gate loss, initialisation | lr 0.001, no L2, no dropout, softmax gate loss, "
                                "xavier initialisation | 100.00 (100.00) |")


def test_only_the_selections_trainings_stop_at_the_ceiling(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(rows, "_fit", lambda task, folder, settings, out, seed, score_test: seen.append(
        (score_test, settings.get("ceiling_patience"))) or {"val_accuracy": 1.0, "accuracy": 1.0, "best_epoch": 1,
                                                          "epochs": 1, "train_seconds": 1.0, "wall_seconds": 1.0})
    rows.select("f", "dmn", tmp_path / "runs", 1, tasks=[1], needed={1: 1}, points=[POINT])
    rows.final("f", "dmn", tmp_path / "runs", 1, [0], POINT, tasks=[1])
    assert seen == [(False, 0), (True, None)]
    assert DMNConfig.from_profile("full", rows.row_settings("dmn", POINT)).ceiling_patience is None


def test_the_code_fingerprint_reads_code_not_docstrings_or_comments():
    source = 'def f(x):\n    """Add one."""\n    return x + 1  # why\n'
    reworded = 'def f(x):\n    """Add one to x."""\n\n    return (x +\n            1)\n'
    assert rows.code_only(source) == rows.code_only(reworded)
    assert rows.code_only(source) == rows.code_only('def f(x):\n    return x + 1\n')
    assert rows.code_only(source) != rows.code_only(source.replace("x + 1", "x + 2"))
    assert rows.code_only(source) != rows.code_only(source.replace('"""Add one."""', 'y = "Add one."'))
    assert rows.code_only('"""A module."""\nimport os\n') == rows.code_only('import os\n')


def test_where_a_row_loses_lists_its_tasks_under_95_with_each_pass():
    from dca_course.data.babi.readings import row_losses as babi_row_losses

    per_task = {str(t): {"mean": 1.0, "sd": 0.0} for t in TASK_NAMES}
    per_task["3"] = {"mean": 0.84, "sd": 0.02}
    runs = {t: {s: {"supporting_fact_accuracy_per_pass": [1.0, 0.9, 0.5]} for s in ("0", "1")} for t in per_task}
    runs["3"]["1"]["supporting_fact_accuracy_per_pass"] = [1.0, 0.8, 0.7]
    stored = {"rows": {"dmn": {"name": "DMN", "seeds": [0, 1], "per_task": per_task, "runs": runs}}}
    lines = babi_row_losses(stored, "dmn").splitlines()
    assert len(lines) == 3 and lines[2].split()[0] == "3"
    assert lines[2].split()[-7:] == ["84.0", "±", "2.0", "95.2", "100", "85", "60"]   # passes: means over seeds
    assert babi_row_losses(stored, "dmn+") == "dmn+: not run yet (results/babi_protocol.md)"
    per_task["3"]["mean"] = 0.95                                  # at the line: not a loss
    assert babi_row_losses(stored, "dmn").splitlines()[-1].strip() == "(none)"


def test_a_rows_sentence_gives_its_figures_and_each_seeds_mean():
    runs = {"1": {"0": {"train_seconds": 1800}, "1": {"train_seconds": 60}},
            "17": {"0": {"train_seconds": 1800}, "1": {"train_seconds": 60}}}
    row = rows.summarise_row({1: {0: {"accuracy": 1.0}, 1: {"accuracy": 0.96}},
                              17: {0: {"accuracy": 0.9}, 1: {"accuracy": 0.8}}}, [0, 1])
    row.update(runs=runs, train_seconds=3720.0, longest_seed_minutes_2_workers=30.0)
    assert rows.row_sentence(row) == ("mean 91.5% over seeds 0, 1 (95.0, 88.0), 98.0% without tasks 17 and 19, "
                                     "1 of the 2 tasks at 95% or more on the mean; 1.0 h of one-thread training, "
                                     "30 min for its longest seed on two workers")


# -- the profiles: what `train dmn --profile ...` trains is what its help says --------------------------
def test_the_full_profile_is_kumar_et_als_dmn_as_its_help_says():
    """``--profile full``'s help names Kumar et al.'s DMN at size 80 for 30 epochs: the configuration
    is the `dmn` row's model, at those sizes and epochs."""
    config = DMNConfig.from_profile("full")
    assert {k: getattr(config, k) for k in BABI_ROWS["dmn"]} == BABI_ROWS["dmn"] and config.gate_supervision
    assert config.emb_size == config.hidden_size
    assert DMNConfig.FULL_HELP.startswith("the DMN as Kumar et al. describe it (GRU input module, nine-part gate "
                                          "features, GRU memory update, supervised gates) at size "
                                          f"{config.hidden_size} for {config.epochs} epochs")


def test_each_rows_profile_is_its_final_at_the_stored_choice():
    """``--profile babi-ROW`` is the configuration the row's ``final`` trains, at the point stored in
    results/babi_selection.json, for every row chosen there, and only those."""
    import dataclasses

    selection = {k: v for k, v in json.loads(rows.SELECTION.read_text()).items() if k not in ("provenance", "replaced")}
    assert set(BABI_CHOSEN) == set(selection)
    for row, chosen in selection.items():
        profile = DMNConfig.from_profile(f"babi-{row}")
        final = DMNConfig.from_profile("full", rows.final_settings(row, chosen["chosen"]))
        assert dataclasses.replace(profile, profile="full") == final, row
        assert profile.data_profile == "full" and f"`{row}` row" in DMNConfig.NAMED[f"babi-{row}"][2]


def test_the_cures_that_joined_are_the_ones_babi_cures_json_judged_and_only_the_final_trains_them():
    """BABI_JOINED_CURES is results/babi_cures.json's ``joined`` (each cure's knobs); the row's final trains with
    them, while its search and the cures' own row arm train the row as version 4 chose it."""
    from dca_course.recipes.dmn import BABI_JOINED_CURES

    stored = json.loads((rows.RESULTS / "babi_cures.json").read_text(encoding="utf-8"))
    joined = {k: v for name in stored["joined"] for k, v in stored["cures"][name]["settings"].items()}
    assert BABI_JOINED_CURES == ({stored["row"]: joined} if joined else {})
    point = BABI_CHOSEN["dmn+ext"]
    assert rows.final_settings("dmn+ext", point) == {**rows.row_settings("dmn+ext", point), **joined}
    assert not set(joined) & set(rows.cures_settings(point, 3))                 # the cures' row arm: without them
    assert rows.final_settings("dmn", BABI_CHOSEN["dmn"]) == rows.row_settings("dmn", BABI_CHOSEN["dmn"])


@pytest.mark.parametrize("row", sorted(BABI_CHOSEN))
def test_a_rows_profile_trains_that_rows_model_from_the_command_line(row, tmp_path, capsys):
    """The command line with ``--profile babi-ROW`` builds the row's model (its modules and extensions) and
    hands the row's learning rate and L2 to the optimiser (one tiny epoch on a generated task)."""
    import torch

    from dca_course.__main__ import main

    folder = tmp_path / "babi"
    assert main(["data", "generate", "babi", "--task", "1", "--train", "40", "--test", "10", "--out", str(folder)]) == 0
    capsys.readouterr()
    assert main(["train", "dmn", "--data", f"babi:{folder}:1", "--profile", f"babi-{row}", "--epochs", "1",
                 "--hidden-size", "8", "--emb-size", "8", "--device", "cpu", "--quiet", "--out",
                 str(tmp_path / "run")]) == 0
    saved = torch.load(tmp_path / "run" / "last.pt", weights_only=True)
    model = saved["model_config"]
    spec = BABI_ROWS[row]
    assert (model["variant"], model["input_module"], model["gate_features"], model["memory_update"]) == \
        (spec["dmn_variant"], spec["input_module"], spec["gate_features"], spec["memory_update"])
    assert sorted(model.get("extensions", [])) == sorted(k for k in ("time_features", "word_match") if spec[k])
    group = saved["optimizer"]["param_groups"][0]
    assert (group["lr"], group["weight_decay"]) == (BABI_CHOSEN[row]["lr"], BABI_CHOSEN[row]["weight_decay"])
    assert (saved["hparams"]["profile"], saved["hparams"]["max_passes"]) == (f"babi-{row}", BABI_CHOSEN[row]["max_passes"])


def test_what_each_step_buys_is_the_later_row_minus_the_earlier_seed_by_seed():
    from dca_course.data.babi.readings import row_steps as babi_row_steps

    def row(per_seed):       # {task: (seed 0, seed 1)}
        return {"seeds": [0, 1], "per_task": {t: {"mean": (a + b) / 2, "per_seed": {"0": a, "1": b}}
                                              for t, (a, b) in per_seed.items()}}

    stored = {"rows": {"dmn": row({"1": (1.0, 1.0), "2": (0.4, 0.5), "3": (0.3, 0.4)}),
                       "dmn+": row({"1": (1.0, 0.9), "2": (0.9, 0.9), "3": (0.5, 0.4)})}}
    lines = babi_row_steps(stored, top=2).splitlines()
    # seed 0: (1.0 + 0.9 + 0.5 - 1.0 - 0.4 - 0.3) / 3 = 0.2333; seed 1: (0.9 + 0.9 + 0.4 - 1.0 - 0.5 - 0.4) / 3 = 0.1
    # task 2 gains 45 points on its mean, task 3 10, task 1 loses 5
    assert lines[1].split()[-7:] == ["+16.7", "+23.3,", "+10.0", "2", "(+45.0),", "3", "(+10.0)"]
    assert lines[2].endswith("not run yet: dmn+ext") and all(len(line) <= 120 for line in lines)
    stored["rows"]["dmn+"]["per_task"]["1"]["mean"] = 0.4         # a loss larger than any gain comes first
    assert babi_row_steps(stored, top=1).splitlines()[1].split()[-2:] == ["1", "(-60.0)"]


def test_rescore_replaces_the_gate_figures_of_a_reproduced_run_and_a_whole_run_that_is_not(monkeypatch, tmp_path):
    """``rescore`` trains a stored run again at the row's stored settings: an equal answer accuracy
    keeps the run and replaces its supporting-fact figures (the stored ones kept beside them); another
    accuracy replaces the run whole (the stored one kept) and the row's summary is computed again."""
    settings = rows.row_settings("dmn", POINT)
    old = {"accuracy": 0.9, "val_accuracy": 1.0, "best_epoch": 1, "epochs": 1, "train_seconds": 5.0,
           "supporting_fact_accuracy": 0.8, "supporting_fact_accuracy_per_pass": [1.0, 0.9, 0.5],
           "data": "babi:../shared/data/babi:7"}
    runs = {"7": {"0": dict(old), "1": dict(old)}, "1": {"0": dict(old, accuracy=1.0), "1": dict(old, accuracy=1.0)}}
    stored_row = dict(rows.summarise_row({int(t): {int(s): r for s, r in v.items()} for t, v in runs.items()}, [0, 1]),
                      settings=settings, retry_weight_decay=None, runs=runs, provenance={"command": "final"})
    stored = tmp_path / "babi_real_1k.json"
    stored.write_text(json.dumps({"mean_accuracy": 0.98, "rows": {"dmn": stored_row}}))
    monkeypatch.setattr(rows, "STORED", stored)
    trained = []

    def fit(task, folder, given, out, seed, score_test):
        trained.append((task, seed, given))
        return {"val_accuracy": 1.0, "accuracy": 0.9 if seed == 0 else 0.8, "best_epoch": 1, "epochs": 1,
                "train_seconds": 1.0, "wall_seconds": 1.0, "weight_decay": given["weight_decay"],
                "supporting_fact_accuracy": 0.85, "supporting_fact_accuracy_per_pass": [1.0, 0.9, 0.7]}
    monkeypatch.setattr(rows, "_fit", fit)
    assert rows.main(["f", "rescore", "--row", "dmn", "--tasks", "7", "--seeds", "0,1", "--jobs", "1",
                      "--runs", str(tmp_path / "runs")]) == 0
    assert trained == [(7, 0, settings), (7, 1, settings)]          # the stored settings, task 7 only
    after = json.loads(stored.read_text())
    row = after["rows"]["dmn"]
    assert after["mean_accuracy"] == 0.98 and row["runs"]["1"] == runs["1"]   # the rest is left as it was
    same, other = row["runs"]["7"]["0"], row["runs"]["7"]["1"]
    assert same["supporting_fact_accuracy_per_pass"] == [1.0, 0.9, 0.7] and same["train_seconds"] == 5.0
    assert same[rows.BEFORE_RESCORING] == {"supporting_fact_accuracy": 0.8,
                                           "supporting_fact_accuracy_per_pass": [1.0, 0.9, 0.5]}
    assert other["accuracy"] == 0.8 and other["replaced_run"] == old and other["data"] == old["data"]
    assert row["per_task"]["7"]["per_seed"] == {"0": 0.9, "1": 0.8}      # the summary follows the new run
    record = row["rescoring"]
    assert record["runs"]["7"]["0"]["accuracy_reproduced"] and not record["runs"]["7"]["1"]["accuracy_reproduced"]
    assert record["runs"]["7"]["1"]["differs"] == ["accuracy"]
    assert record["provenance"][0]["command"] == ("python experiments/babi_rows.py f rescore --row dmn --tasks 7 "
                                                  f"--seeds 0,1 --jobs 1 --runs {rows.repo_path(tmp_path / 'runs')}")
    assert record["provenance"][0]["commit"] == rows.COMMIT[0]
    # a second rescoring keeps the figures the first one replaced
    assert rows.main(["f", "rescore", "--row", "dmn", "--tasks", "7", "--seeds", "0", "--jobs", "1",
                      "--runs", str(tmp_path / "runs")]) == 0
    again = json.loads(stored.read_text())["rows"]["dmn"]
    assert again["runs"]["7"]["0"][rows.BEFORE_RESCORING] == same[rows.BEFORE_RESCORING]
    assert len(again["rescoring"]["provenance"]) == 2 and len(trained) == 2     # read back, not trained again
    # a replaced run is compared with the final command's run again, and a rescoring written while another
    # one of the same row was running keeps the other's runs
    entries, done = rows.rescore("f", "dmn", again, tmp_path / "runs", 1, [1], [7])
    assert entries["7"]["1"]["replaced_run"] == old and not done["7"]["1"]["accuracy_reproduced"]
    row = json.loads(stored.read_text())
    row["rows"]["dmn"]["runs"]["1"]["0"]["marker"] = True
    stored.write_text(json.dumps(row))
    rows.write_rescored("dmn", entries, done, "python experiments/babi_rows.py", tmp_path / "runs" / "lock")
    last = json.loads(stored.read_text())["rows"]["dmn"]
    assert last["runs"]["1"]["0"]["marker"] and last["runs"]["7"]["1"] == entries["7"]["1"]


def test_a_run_under_95_held_out_restarts_from_other_weights_on_the_same_held_out_stories(monkeypatch, tmp_path):
    """``--restarts K`` (issue 49, part 3): after the L2 retry, a run still under 95% held out trains again
    from other initial weights (init seeds 1000, 2000, ... past the run's seed), until one reaches 95% or K
    restarts are spent; the best held-out model is kept, and a run that reached 95% never restarts."""
    calls = []

    def fit(task, folder, settings, out, seed, score_test, init_seed=None):
        calls.append((settings["weight_decay"], init_seed))
        held = {None: 0.60, 1002: 0.80, 2002: 0.97, 3002: 0.99}[init_seed]
        return {"val_accuracy": held, "accuracy": held, "best_epoch": 1, "epochs": 1, "train_seconds": 2.0,
                "wall_seconds": 2.0, "weight_decay": settings["weight_decay"],
                **({} if init_seed is None else {"init_seed": init_seed})}

    monkeypatch.setattr(rows, "_fit", fit)
    settings = rows.row_settings("dmn+ext", dict(POINT, weight_decay=1e-3))
    kept = rows.train_kept(19, "f", settings, tmp_path / "t19", 2, True, 3e-4, 3)
    assert calls == [(1e-3, None), (3e-4, None), (1e-3, 1002), (1e-3, 2002)]    # stops at the first >= 95%
    assert kept["val_accuracy"] == 0.97 and kept["init_seed"] == 2002 and kept["train_seconds"] == 8.0
    assert rows.restart_cost([kept], 3) == {"allowed_per_run": 3, "trainings": 2, "runs_restarted": 1,
                                            "kept_from_a_restart": 1, "train_seconds": 4.0}
    calls.clear()
    assert rows.train_kept(19, "f", settings, tmp_path / "t19", 2, True, 3e-4, 3) == kept and not calls
    rows.train_kept(19, "f", settings, tmp_path / "t19", 2, True, 3e-4, 1)        # other restarts: trained again
    assert calls == [(1e-3, None), (3e-4, None), (1e-3, 1002)]
    calls.clear()
    rows.train_kept(19, "f", settings, tmp_path / "none", 2, True, 3e-4)           # no restarts: as before
    assert calls == [(1e-3, None), (3e-4, None)]


def test_a_restart_keeps_the_runs_held_out_stories_and_draws_other_weights(monkeypatch, babi_folder, tmp_path):
    held_out, first_weights = [], []
    split, make = DMNRecipe.validation_split, DMNRecipe.model_for

    def spy_split(self, train, seed):
        out = split(self, train, seed)
        held_out.append([(ex.story, ex.question) for ex in out[1]])
        return out

    def spy_model(self, data, vocab):
        model = make(self, data, vocab)
        first_weights.append(model.W_b.detach().clone())
        return model

    monkeypatch.setattr(DMNRecipe, "validation_split", spy_split)
    monkeypatch.setattr(DMNRecipe, "model_for", spy_model)
    settings = dict(rows.row_settings("dmn", POINT), epochs=1, emb_size=8, hidden_size=8)
    a = rows._fit(1, str(babi_folder), settings, tmp_path / "a", 0, False)
    b = rows._fit(1, str(babi_folder), settings, tmp_path / "b", 0, False, init_seed=1000)
    assert held_out[0] and held_out[0] == held_out[1]                 # the same held-out stories
    assert not torch.equal(*first_weights)                            # other initial weights
    assert b["init_seed"] == 1000 and "init_seed" not in a


def test_restarts_are_for_final_only(capsys):
    with pytest.raises(SystemExit):
        rows.main(["/nowhere", "select", "--row", "dmn", "--restarts", "2"])
    assert "--restarts" in capsys.readouterr().err


def test_a_row_trained_again_at_other_settings_keeps_the_one_it_replaces():
    """A row trained again under a later protocol version (other settings) moves the stored row to
    ``replaced_rows``; the same settings trained again (a rerun) replace it without a copy."""
    old = {"settings": {"lr": 1e-3, "gate_loss": "bce"}, "mean": 0.854}
    new = {"settings": {"lr": 1e-3, "gate_loss": "softmax"}, "mean": 0.9}
    stored = {"rows": {"dmn": old}}
    rows.keep_replaced_row(stored, "dmn", new)
    assert stored["replaced_rows"] == {"dmn": [old]}
    again = {"rows": {"dmn": new}}
    rows.keep_replaced_row(again, "dmn", dict(new, mean=0.91))
    assert "replaced_rows" not in again
    rows.keep_replaced_row(again, "dmn+", new)                     # no stored row of that name: nothing to keep
    assert "replaced_rows" not in again
    rows.keep_replaced_row(again, "dmn", dict(new, restarts={"allowed_per_run": 2}))   # the same, with restarts
    assert again["replaced_rows"] == {"dmn": [new]}


def test_the_fingerprint_leaves_out_code_no_training_runs(monkeypatch, tmp_path):
    """A kept training is read back while the rows' text helpers change (``NOT_TRAINED``), and not once
    a file the training runs changes."""
    import tools.provenance as provenance

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text("def f(x):\n    return x + 1\n")
    (tmp_path / "pkg" / "readings.py").write_text("def text(r):\n    return str(r)\n")
    monkeypatch.setattr(provenance, "ROOT", tmp_path)
    before = provenance.code_fingerprint(["pkg"], leave_out=["pkg/readings.py"])
    (tmp_path / "pkg" / "readings.py").write_text("def text(r):\n    return f'{r:.1f}'\n")
    assert provenance.code_fingerprint(["pkg"], leave_out=["pkg/readings.py"]) == before
    assert provenance.code_fingerprint(["pkg"]) != before
    (tmp_path / "pkg" / "model.py").write_text("def f(x):\n    return x + 2\n")
    assert provenance.code_fingerprint(["pkg"], leave_out=["pkg/readings.py"]) != before
    assert rows.NOT_TRAINED == ["dca_course/data/babi/readings.py"] and rows._fit in rows.TRAINS


def test_the_rescoring_table_keeps_a_rescored_row_after_it_is_trained_again():
    """A row trained again with today's evaluation has no rescoring: the table then reads the replaced row's, so the
    protocol's table of the rescoring stays what it was."""
    import copy

    stored = json.loads((rows.STORED).read_text(encoding="utf-8"))
    before = rows.rescoring_table(stored)
    again = copy.deepcopy(stored)
    assert "rescoring" not in stored["rows"]["dmn"]                 # the dmn row of version 5: today's evaluation
    assert set(rows.rescored_rows(stored)) == {"dmn", "dmn+", "dmn+ext"}   # ... so its replaced row's rescoring
    new = copy.deepcopy(again["rows"]["dmn+"])                       # the dmn+ row trained again the same way
    new.pop("rescoring")
    new["settings"] = dict(new["settings"], dmn_init="xavier")
    rows.keep_replaced_row(again, "dmn+", new)
    again["rows"]["dmn+"] = new
    assert rows.rescoring_table(again) == before
    assert set(rows.rescored_rows(again)) == {"dmn", "dmn+", "dmn+ext"}
    again["replaced_rows"]["dmn+"][-1].pop("rescoring")            # neither rescored: the row leaves the table
    assert not [line for line in rows.rescoring_table(again).splitlines() if line.split()[:1] == ["dmn+"]]
    assert [line for line in before.splitlines() if line.split()[:1] == ["dmn+"]]
