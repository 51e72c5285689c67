"""The scripts' own logic (``experiments/``, ``benchmarks/``, ``tools/``): reading OpenNMT-py's reports,
the config it is given, that the timing scripts run end to end on a few articles (no timing is
asserted), and how the scripts share code and write results."""
import ast
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
SCRIPT_FOLDERS = ("experiments", "benchmarks", "tools")


from conftest import load_benchmark_module as load  # noqa: E402  (tests/ is on sys.path under pytest)


LOG = """\
[2026-11-23 12:51:57,515 INFO] Step  5/   30; acc: 1.5; ppl: 719.7; xent: 6.6; lr: 0.00300; sents:      80; bsz: 2681/ 607/16; 106/ 24 tok/s;    127 sec;
[2026-11-23 12:51:58,000 INFO] Weighted corpora loaded so far:
[2026-11-23 12:51:59,971 INFO] Step 10/   30; acc: 1.9; ppl: 518.8; xent: 6.3; lr: 0.00300; sents:      80; bsz: 2925/ 600/16; 5958/1200 tok/s;    129 sec;
[2026-11-23 12:52:03,628 INFO] Step 15/   30; acc: 2.0; ppl: 386.9; xent: 6.0; lr: 0.00300; sents:      80; bsz: 3408/ 600/16; 4663/600 tok/s;    133 sec;
"""


def test_opennmt_reports_are_parsed_and_pooled_without_the_warm_up():
    bench = load("opennmt_throughput")
    reports = bench.parse_reports(LOG)
    assert [r["step"] for r in reports] == [5, 10, 15]
    assert reports[1] == dict(step=10, xent=6.3, src_per_batch=2925, tgt_per_batch=600, src_per_s=5958,
                              tgt_per_s=1200)
    # 3,000 tokens in 2.5 s and 3,000 in 5 s: 6,000 / 7.5 s, not the mean of the two rates (900)
    assert bench.pooled_rate(reports, 5) == pytest.approx(800.0)
    with pytest.raises(ValueError, match="fewer than two"):
        bench.pooled_rate(reports[:1], 5)


def test_opennmt_config_mirrors_the_pointer_generator_with_coverage(tmp_path):
    bench = load("opennmt_throughput")
    from dca_course.recipes import PointerGeneratorConfig

    pg = PointerGeneratorConfig.from_profile("fast")
    path = bench.onmt_config(tmp_path, tmp_path / "s.txt", tmp_path / "t.txt", pg, 128, 60, 10, cuda=False)
    cfg = dict(line.split(": ", 1) for line in path.read_text().splitlines() if ": " in line)
    assert cfg["copy_attn"] == cfg["coverage_attn"] == cfg["bridge"] == "true"
    assert cfg["enc_hid_size"] == cfg["dec_hid_size"] == "128" and cfg["encoder_type"] == "brnn"
    assert cfg["word_vec_size"] == str(pg.emb_size) and cfg["batch_size"] == str(pg.batch_size)
    assert cfg["src_seq_length_trunc"] == "400" and cfg["tgt_seq_length_trunc"] == "100"
    assert cfg["learning_rate"] == str(pg.lr) and cfg["max_grad_norm"] == str(pg.clip)
    assert "gpu_ranks" not in cfg
    gpu = bench.onmt_config(tmp_path, tmp_path / "s.txt", tmp_path / "t.txt", pg, 64, 60, 10, cuda=True)
    assert "gpu_ranks: [0]" in gpu.read_text()


def test_export_writes_one_article_and_one_summary_per_line(tmp_path):
    bench = load("opennmt_throughput")
    from dca_course.data.synthnews import load_synthnews

    train, _, _ = load_synthnews(5, 1, 1, seed=0)
    src, tgt = bench.export_text(train, tmp_path)
    lines = tgt.read_text().splitlines()
    assert len(src.read_text().splitlines()) == len(lines) == 5
    assert lines[0].split() == train[0].target and "\t" not in lines[0]


def test_missing_opennmt_is_a_clear_error(tmp_path, capsys):
    bench = load("opennmt_throughput")
    with pytest.raises(SystemExit):
        bench.main(["--onmt-bin", str(tmp_path)])
    assert "no onmt_train in" in capsys.readouterr().err


def test_lstm_limit_and_throughput_run_on_a_few_articles():
    limit = load("lstm_limit").main(["--articles", "80", "--steps", "1", "--device", "cpu"])
    assert limit["model_step_ms"] > 0 and limit["lstm_layers_ms"] > 0 and limit["lstm_stepwise_decoder_ms"] > 0
    assert limit["ratio"] == pytest.approx(limit["model_step_ms"] / limit["lstm_layers_ms"], rel=0.05)
    assert limit["input_feeding"] and limit["stepwise_ratio"] == pytest.approx(
        limit["model_step_ms"] / limit["lstm_stepwise_decoder_ms"], rel=0.05)       # the default, against its floor
    assert limit["attention_floor_over_stepwise"] == pytest.approx(
        limit["attention_floor_ms"] / limit["lstm_stepwise_decoder_ms"], rel=0.05)  # the floor with the attention
    assert limit["attention_floor_ratio"] == pytest.approx(limit["model_step_ms"] / limit["attention_floor_ms"], rel=0.05)
    speed = load("train_throughput").main(["--articles", "64", "--steps", "1", "--device", "cpu"])
    assert speed["tokens_per_s_random_batches"] > 0 and speed["tokens_per_s_length_buckets"] > 0


def test_summarizers_spreads_paired_differences_and_data_baselines(tmp_path):
    s = load("summarizers")
    results = {name: {seed: {"attributed_fact_recall": v, "rougeL": 40.0 + v, "train_seconds": 1.0}
                      for seed, v in zip((0, 1, 2), values)}
               for name, values in [("dca3", (0.6, 0.5, 0.7)), ("pg400", (0.4, 0.45, 0.5)), ("pg800", (0.5, 0.5, 0.8)),
                                    ("dca1", (0.7, 0.4, 0.6))]}
    rows = {r["label"]: r for r in s.paired(results, "dca", [0, 1, 2])}
    gap = rows["attributed facts: 3 agents minus the pointer-generator reading 400 words"]
    assert gap["values"] == pytest.approx([0.2, 0.05, 0.2]) and gap["min"] == pytest.approx(0.05)
    assert gap["mean"] == pytest.approx(0.15) and gap["sd"] == pytest.approx(0.0866, abs=1e-4)
    assert "ROUGE-L: mixed RL minus the MLE control (same steps)" not in rows      # rows not run: no difference
    table = s.table(results, {n: n for n in results}, [0, 1, 2])
    assert "| dca3 | — | — | 40.60 ± 0.10 |" in table                               # mean ± sd over the seeds
    lead = s.data_baseline("lead:2 --data synthnews:50", "fast", 0)
    first = s.data_baseline("first:10000 --data synthnews:50", "fast", 0)
    assert 0 < lead["fact_recall"] < first["fact_recall"] == 1.0                  # a whole article states every fact
    assert lead["train_seconds"] == 0.0 and lead["novel_bigrams"] == 0.0


PATH_LINES = {"sys.path.insert(0, str(Path(__file__).resolve().parents[1]))",    # the repository root first
              "sys.path.insert(0, str(ROOT))"}                                    # the same, ROOT named first


def test_scripts_share_code_through_tools_provenance_with_one_path_line():
    """A script of experiments/, benchmarks/ or tools/ touches ``sys.path`` only to put the repository
    root first, and imports no other script: shared code is in ``tools.provenance`` (results and
    provenance) and ``benchmarks.timing`` (timing training steps); only notebook_claims imports
    ``tools.notebook_times``, the module that owns the notebook-time table."""
    scripts = {f"{p.parent.name}.{p.stem}": p for folder in SCRIPT_FOLDERS for p in (ROOT / folder).glob("*.py")
               if p.stem != "__init__"}
    shared = {"tools.provenance", "benchmarks.timing"}
    stems = {name.split(".")[1] for name in scripts}
    for name, path in scripts.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and "sys.path" in ast.unparse(node.func):
                assert ast.unparse(node) in PATH_LINES, (name, ast.unparse(node))
            elif isinstance(node, ast.Assign) and any("sys.path" in ast.unparse(t) for t in node.targets):
                raise AssertionError((name, ast.unparse(node)))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}   # from experiments import x
        allowed = shared | ({"tools.notebook_times"} if name == "tools.notebook_claims" else set())
        scripts_imported = {m for m in imported if m in scripts or m.split(".")[0] in stems | {"common"}}
        assert scripts_imported <= allowed - {name}, (name, scripts_imported - allowed)


def test_the_script_check_finds_a_path_trick_and_an_imported_script():
    """The check above on two bad lines (it must be able to fail)."""
    bad = ast.parse("sys.path.append('/x')\nfrom experiments.babi_real import main\n")
    call = next(n for n in ast.walk(bad) if isinstance(n, ast.Call))
    assert ast.unparse(call) not in PATH_LINES
    assert next(n for n in ast.walk(bad) if isinstance(n, ast.ImportFrom)).module == "experiments.babi_real"


def test_provenance_writes_reports_atomically(tmp_path):
    common = load("provenance")
    assert common.ROOT == ROOT and common.RESULTS == ROOT / "results"
    js, md = common.write_report(tmp_path / "out", "bench", {"b": 1, "a": 2.5}, "# Bench\n\n| a |\n",
                                 command="python benchmarks/bench.py --x 1", config={"x": 1, "folder": str(tmp_path)},
                                 measures=["dca_course/nn"])
    stored = json.loads(js.read_text())
    assert {k: v for k, v in stored.items() if k != "provenance"} == {"a": 2.5, "b": 1}
    prov = stored["provenance"]
    assert prov["command"] == "python benchmarks/bench.py --x 1" and prov["measures"] == ["dca_course/nn"]
    assert prov["config"]["x"] == 1 and not prov["config"]["folder"].startswith("/")    # relative to the repository
    assert prov["commit"] is None or len(prov["commit"]) == 40
    assert set(prov["machine"]) >= {"cpu", "cpu_count", "torch_threads", "torch", "python"}
    assert md.read_text() == ("# Bench\n\nGenerated by `python benchmarks/bench.py --x 1`; do not edit: a new run "
                              "rewrites this file.\n\n| a |\n")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["bench.json", "bench.md"]
    # hand-written notes beside it: linked, never written
    notes = tmp_path / "out" / "bench_notes.md"
    notes.write_text("# my notes\n")
    _, md = common.write_report(tmp_path / "out", "bench", {}, "# Bench\n", command="python benchmarks/bench.py",
                                config=None, measures=[])
    assert "Hand-written notes on it: [bench_notes.md](bench_notes.md)." in md.read_text()
    assert notes.read_text() == "# my notes\n"
    assert common.cpu_name()
    assert common.command_line("/x/benchmarks/bench.py", ["--out", str(common.ROOT / "runs" / "b")]) == \
        "python benchmarks/bench.py --out runs/b"
    # the script's own folder, whichever it is
    assert common.command_line(str(ROOT / "experiments" / "babi_real.py"), ["x"]) == "python experiments/babi_real.py x"
    assert common.command_line(str(ROOT / "tools" / "notebook_claims.py"), []) == "python tools/notebook_claims.py"


COMMAND = "python experiments/babi_real.py ../shared/data/babi"


def test_babi_real_reports_every_task_beside_the_papers_with_the_spread_over_seeds(tmp_path):
    babi_real = load("babi_real")
    run = lambda acc: {"accuracy": acc, "supporting_fact_accuracy": 0.9, "epochs": 40, "best_epoch": 15,
                       "train_seconds": 12.0, "passes": 2}
    runs = {2: {0: run(0.90), 1: run(0.96)}, 19: {0: run(0.30)}}
    settings = dict(babi_real.DEFAULTS, jobs=2, seeds=[0], cpu_count=2, dmn_variant="dmn+")
    babi_real.write_results(tmp_path / "r", runs, settings, wall=60.0, command=COMMAND)
    table = (tmp_path / "r.md").read_text()
    assert f"Generated by `{COMMAND}`" in table.splitlines()[2]
    assert json.loads((tmp_path / "r.json").read_text())["provenance"]["config"] == settings
    assert "| 2 | two-supporting-facts | 93.0 ± 4.2 (seeds 0, 1) | 98.2 | 100 |" in table
    assert "| 19 | path-finding | 30.0 | 34.5 | 36 |" in table
    assert "Tasks more than 3 points under the DMN paper: 2 (-5.2), 19 (-4.5)." in table
    assert "seed 0 alone (all 2 tasks): 60.0%, 0 tasks at >= 95%" in table
    payload = json.loads((tmp_path / "r.json").read_text())
    assert payload["mean_accuracy"] == 0.615 and payload["mean_accuracy_per_seed"] == [0.6]
    assert payload["paper"]["dmn"]["19"] == 34.5
    # a stored file gives back the runs it was written from, so that more seeds can be added to it
    assert babi_real._stored_runs(payload) == runs
    # the model line says which gate features, time features and L2 penalty the runs had
    assert "DMN+'s four-part gate features" in table and "`time_features=True`" in table
    assert "an L2 penalty of 0.001" in table
    assert "`word_match=True`" in table and "episode_reads" not in table.split("Settings")[0]
    babi_real.write_results(tmp_path / "s", runs, dict(settings, gate_features="dmn", time_features=False,
                                                       weight_decay=0.0, retry_weight_decay=None,
                                                       episode_reads="sentences", word_match=False), wall=60.0,
                            command=COMMAND)
    plain = (tmp_path / "s.md").read_text()
    assert "nine-part gate features" in plain and "time_features" not in plain.split("Settings")[0]
    assert '`episode_reads="sentences"`' in plain and "word_match" not in plain.split("Settings")[0]
    assert "L2 penalty" not in plain
    assert "trains again with 0.0003" in table and "trains again" not in plain.split("Settings")[0]
    # bAbI's pass line is 95%: three seeds at 95.0, 94.6 and 95.4 are 95.0% on the mean, at the line
    # (their float sum is 0.94999...), and one at 94.9 is under it
    babi_real.write_results(tmp_path / "p", {7: {0: run(0.950), 1: run(0.946), 2: run(0.954)}, 8: {0: run(0.949)}},
                            settings, wall=60.0, command=COMMAND)
    line = json.loads((tmp_path / "p.json").read_text())
    assert line["tasks_at_95_on_the_mean"] == 1 and line["failed_tasks"] == [8] and line["tasks_at_95"] == [1]
    # the protocol's rows (experiments/babi_rows.py's) survive a new run of this script
    line["rows"] = {"dmn": {"mean": 0.9}}
    (tmp_path / "p.json").write_text(json.dumps(line))
    babi_real.write_results(tmp_path / "p", runs, settings, wall=60.0, command=COMMAND)
    again = json.loads((tmp_path / "p.json").read_text())
    assert again["rows"] == {"dmn": {"mean": 0.9}} and again["mean_accuracy"] == 0.615


def test_babi_real_trains_a_task_again_with_a_weaker_penalty_only_when_its_held_out_accuracy_is_low(monkeypatch,
                                                                                                    tmp_path):
    babi_real = load("babi_real")
    held_out = {}      # (task, weight decay) -> held-out accuracy of the fake training
    calls = []

    def fake_train(task, folder, overrides, out, seed):
        calls.append((task, overrides["weight_decay"], out.name))
        out.mkdir(parents=True)
        (out / "wd").write_text(str(overrides["weight_decay"]))
        return {"accuracy": 0.5 + overrides["weight_decay"], "val_accuracy": held_out[task, overrides["weight_decay"]],
                "best_epoch": 3, "epochs": 9, "train_seconds": 10.0, "wall_seconds": 11.0,
                "weight_decay": overrides["weight_decay"]}

    monkeypatch.setattr(babi_real, "_train_once", fake_train)
    held_out.update({(1, 1e-3): 0.95, (17, 1e-3): 0.52, (17, 3e-4): 0.61, (3, 1e-3): 0.80, (3, 3e-4): 0.80})
    solved = babi_real._run_task(1, "f", {"weight_decay": 1e-3}, tmp_path / "runs", 0, 3e-4, 0.95)
    assert calls == [(1, 1e-3, "task01")] and solved["weight_decay"] == 1e-3 and len(solved["tries"]) == 1
    retried = babi_real._run_task(17, "f", {"weight_decay": 1e-3}, tmp_path / "runs", 0, 3e-4, 0.95)
    assert calls[1:] == [(17, 1e-3, "task17"), (17, 3e-4, "task17_wd0.0003")]
    assert retried["weight_decay"] == 3e-4 and retried["accuracy"] == 0.5 + 3e-4
    assert retried["train_seconds"] == 20.0 and [x["val_accuracy"] for x in retried["tries"]] == [0.52, 0.61]
    seed0 = tmp_path / "runs" / "seed0"          # the kept model is in task17, the other one beside it
    assert (seed0 / "task17" / "wd").read_text() == "0.0003" and (seed0 / "task17_wd0.001" / "wd").read_text() == "0.001"
    assert not (seed0 / "task17_wd0.0003").exists()
    tie = babi_real._run_task(3, "f", {"weight_decay": 1e-3}, tmp_path / "runs", 0, 3e-4, 0.95)
    assert tie["weight_decay"] == 1e-3                       # a tie keeps the first
    assert (seed0 / "task03" / "wd").read_text() == "0.001" and (seed0 / "task03_wd0.0003").is_dir()
    assert len(babi_real._run_task(17, "f", {"weight_decay": 1e-3}, tmp_path / "other", 0, None, 0.95)["tries"]) == 1


def test_babi_real_fits_an_unsolved_task_last_on_every_story_for_the_chosen_epochs(monkeypatch, tmp_path):
    babi_real = load("babi_real")
    calls = []

    def fake_train(task, folder, overrides, out, seed):
        calls.append((overrides["weight_decay"], overrides["val_fraction"], overrides["epochs"], out.name))
        out.mkdir(parents=True)
        (out / "fit").write_text(f"{overrides['weight_decay']:g} {overrides['val_fraction']:g}")
        held_out = {1e-3: 0.80, 3e-4: 0.85}[overrides["weight_decay"]] if overrides["val_fraction"] else None
        return {"accuracy": 0.7 if overrides["val_fraction"] else 0.75, "val_accuracy": held_out,
                "best_epoch": 12 if overrides["val_fraction"] else None, "epochs": overrides["epochs"],
                "train_seconds": 10.0, "wall_seconds": 11.0, "weight_decay": overrides["weight_decay"],
                "supporting_fact_accuracy": 0.9, "passes": 3}

    monkeypatch.setattr(babi_real, "_train_once", fake_train)
    settings = {"weight_decay": 1e-3, "val_fraction": 0.1, "epochs": 200}
    r = babi_real._run_task(3, "f", settings, tmp_path / "runs", 0, 3e-4, 0.95, 0.95)
    # the held-out stories chose L2 0.0003 and epoch 12; the last fit holds none out, for 12 epochs
    assert calls == [(1e-3, 0.1, 200, "task03"), (3e-4, 0.1, 200, "task03_wd0.0003"), (3e-4, 0.0, 12, "task03")]
    assert r["accuracy"] == 0.75 and r["weight_decay"] == 3e-4 and r["val_accuracy"] == 0.85
    assert r["refit"] == {"epochs": 12, "held_out_model_accuracy": 0.7} and r["best_epoch"] == 12
    assert r["epochs"] == 200 and r["train_seconds"] == 30.0 and len(r["tries"]) == 2
    seed0 = tmp_path / "runs" / "seed0"      # the last fit in taskNN, the model it replaced beside it
    assert (seed0 / "task03" / "fit").read_text() == "0.0003 0"
    assert (seed0 / "task03_heldout" / "fit").read_text() == "0.0003 0.1"
    assert (seed0 / "task03_wd0.001" / "fit").read_text() == "0.001 0.1"
    # a task solved on its held-out stories, or no --refit-below: no last fit
    calls.clear()
    assert "refit" not in babi_real._run_task(3, "f", settings, tmp_path / "other", 0, 3e-4, 0.95, 0.80)
    assert "refit" not in babi_real._run_task(3, "f", settings, tmp_path / "none", 0, 3e-4, 0.95, None)
    assert len(calls) == 4
    settings = dict(babi_real.DEFAULTS, jobs=2, seeds=[0], cpu_count=2, dmn_variant="dmn+")
    assert settings["refit_below"] is None                  # off by default (the results file says why)
    babi_real.write_results(tmp_path / "r", {3: {0: r}}, dict(settings, refit_below=0.95), wall=60.0,
                            command=COMMAND)
    table = (tmp_path / "r.md").read_text()
    assert f"Generated by `{COMMAND}`" in table.splitlines()[2]
    assert "| 12/200 | 0.0003 | 12 | 30 |" in table and "trains a last time on every training story" in table
    babi_real.write_results(tmp_path / "q", {3: {0: r}}, settings, wall=60.0, command=COMMAND)   # off: no "last fit" column
    assert "| 12/200 | 0.0003 | 30 |" in (tmp_path / "q.md").read_text() and "last fit" not in (tmp_path / "q.md").read_text()


def test_the_benchmarks_time_the_recipes_loss_not_a_copy_of_it():
    """The coverage loss has one definition (PointerGeneratorRecipe.loss); the timing code calls it."""
    for path in BENCH.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "coverage_loss(" not in text and "teacher_forced_nll(" not in text, path.name
    assert "self.recipe.loss(" in (BENCH / "timing.py").read_text(encoding="utf-8")


def test_opennmt_results_are_written_with_their_command_and_config(tmp_path):
    """write_results takes what it stores as arguments (it once read main's locals and failed on --out)."""
    bench = load("opennmt_throughput")
    result = {"device": "cpu", "threads": 1, "profile": "fast", "steps": 5, "batch_size": 16, "emb_size": 64,
              "hidden_size": 64, "vocab_size": 2000, "ours_tokens_per_s": 100.0,
              "ours_tokens_per_s_before_after": [90.0, 110.0], "input_feeding": {"ours": True, "opennmt": True},
              "opennmt": {"enc=dec=64": {"label": "x", "tokens_per_s": 50.0, "last_xent": 1.0, "reports": 2}},
              "ratio_ours_over_opennmt": {"enc=dec=64": 2.0}}
    bench.write_results(tmp_path, result, "python benchmarks/opennmt_throughput.py --steps 5", {"steps": 5})
    text = (tmp_path / "opennmt_throughput.md").read_text()
    assert "| 2.00 |" in text and "input feeding in both" in text and "90 and 110 tokens/s" in text
    assert '"steps": 5' in (tmp_path / "opennmt_throughput.json").read_text()


@pytest.mark.parametrize("profile", ["fast", "full"])
def test_the_attention_floor_has_the_models_sizes(profile):
    """lstm_limit.py's floor with the attention takes the model's own sizes: the full profile leaves the
    attention size unset (the model's 2H), which the floor once read as None and failed on."""
    import torch
    from benchmarks.timing import StepTimer
    from dca_course.data.synthnews import load_synthnews

    train, _, _ = load_synthnews(20, 1, 1, seed=0)
    timer = StepTimer(train, profile, {"input_feeding": True}, device=torch.device("cpu"))
    config = timer.config
    cell = torch.nn.LSTMCell(config.emb_size, config.hidden_size)
    load("lstm_limit").floor_with_attention(timer.model, cell, torch.device("cpu"))((2, 5, 3))   # raises on a bad size
    assert timer.model.attention.W_s.out_features == (config.attn_size or 2 * config.hidden_size)
