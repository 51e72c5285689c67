"""Numbers and attributions in README.md that have a stored source agree with it."""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_attention_baselines_rouge2_and_seconds_are_copying_json_rounded():
    rows = json.loads((ROOT / "results/copying.json").read_text(encoding="utf-8"))["rows"]
    baseline = next(r for r in rows if r["label"].startswith("attention seq2seq"))
    found = re.search(r"It scores ROUGE-2 ([\d.]+) in (\d+) s of training", README)
    assert found, "README no longer quotes the attention baseline"
    assert found.group(1) == f"{baseline['rouge2']:.1f}"
    assert int(found.group(2)) == round(baseline["train_seconds"])


def test_the_results_readme_quotes_copying_json():
    """The copying section of results/README.md: each figure is copying.json's, rounded as quoted."""
    rows = {r["name"]: r for r in json.loads((ROOT / "results/copying.json").read_text(encoding="utf-8"))["rows"]}
    text = (ROOT / "results/README.md").read_text(encoding="utf-8")
    section = text[text.index("## Copying and coverage"):]
    section = " ".join(section[:section.index("\n## ")].split())
    base, pg, pg4, cov = rows["baseline"], rows["pg"], rows["pg4"], rows["pgcov"]
    quoted = [
        f"ROUGE-2 ({cov['rouge2']:.1f} against {base['rouge2']:.1f})",
        f"attributed fact recall ({cov['attributed_fact_recall']:.3f} against {base['attributed_fact_recall']:.3f};",
        f"anywhere: {cov['fact_recall']:.3f} against {base['fact_recall']:.3f})",
        f"from {pg['repeated_trigrams']:.3f} (the same model",
        f"or {pg4['repeated_trigrams']:.3f} (trained a 4th epoch",
        f"to {cov['repeated_trigrams']:.3f}: by {1 - cov['repeated_trigrams'] / pg['repeated_trigrams']:.0%} and "
        f"{1 - cov['repeated_trigrams'] / pg4['repeated_trigrams']:.0%}",
        f"({cov['rouge2']:.2f} against {pg4['rouge2']:.2f};",
        f"{base['oov_entity_recall']:.1%} for the baseline",
        f"{rows['copynet']['oov_entity_recall']:.0%} for CopyNet, {pg['oov_entity_recall']:.0%} for the "
        f"pointer-generator and {cov['oov_entity_recall']:.0%} with coverage",
    ]
    for phrase in quoted:
        assert phrase in section, phrase


def test_the_results_readme_quotes_dca_json():
    """The agents section of results/README.md: its table and its paired differences are dca.json's, as quoted."""
    suite = json.loads((ROOT / "results/dca.json").read_text(encoding="utf-8"))
    rows, paired = {r["name"]: r for r in suite["rows"]}, {p["label"]: p for p in suite["paired"]}
    text = (ROOT / "results/README.md").read_text(encoding="utf-8")
    section = text[text.index("## Deep Communicating Agents and RL"):]
    section = " ".join(section[:section.index("\n## ")].split())

    def cells(name):
        s = rows[name]["spread"]
        facts = [f"{s[k]['mean']:.3f} ± {s[k]['sd']:.3f}" for k in ("attributed_fact_recall", "attributed_late_fact_recall")]
        return " | ".join(facts + [f"{rows[name][k]:.1f}" for k in ("rouge2", "rougeLsum")])

    for name in ("lead3", "pg400", "pg800", "dca1", "dca2", "dca3", "dca5"):
        assert cells(name) in section.replace("**", ""), name

    def seeds(label):
        return ", ".join(f"{v:+.3f}" for v in paired[label]["values"])

    to400 = paired["attributed facts: 3 agents minus the pointer-generator reading 400 words"]
    to800 = paired["attributed facts: 3 agents minus the pointer-generator reading 800 words"]
    *before, last = to400["values"]
    for phrase in ["by " + ", ".join(f"{v:+.3f}" for v in before) + f" and {last:+.3f} on seeds 0, 1 and 2",
                   f"(mean {to400['mean']:.3f}, sd {to400['sd']:.3f})",
                   f"can only guess ({rows['pg400']['spread']['attributed_late_fact_recall']['mean']:.3f})",
                   f"(3 agents minus it: {seeds(to800['label'])}; mean {to800['mean']:.3f}, sd {to800['sd']:.3f})",
                   f"(3 minus 1: {seeds('attributed facts: 3 agents minus 1 agent')})"]:
        assert phrase in section, phrase


def test_the_results_readme_quotes_input_feeding_json():
    """The input-feeding section of results/README.md: each seed's row and the paired differences are
    input_feeding.json's."""
    stored = json.loads((ROOT / "results/input_feeding.json").read_text(encoding="utf-8"))
    table, paired = stored["table"], stored["paired"]
    text = (ROOT / "results/README.md").read_text(encoding="utf-8")
    section = text[text.index("## Input feeding, measured"):]
    section = " ".join(section[:section.index("\n## ")].split())

    def cells(variant, k):
        t = table[variant]
        return (f"{t['rouge2'][k]:.2f} / {t['rougeL'][k]:.2f} / {t['attributed_fact_recall'][k]:.3f} / "
                f"{t['repeated_trigrams'][k]:.3f}")

    for k, seed in enumerate(stored["seeds"]):
        assert f"| {seed} | {cells('with', k)} | {cells('without', k)} |" in section, seed
    assert (f"ROUGE-2 {paired['rouge2']['mean']:+.2f} ± {paired['rouge2']['se']:.2f} and attributed facts "
            f"{paired['attributed_fact_recall']['mean']:+.3f} ± {paired['attributed_fact_recall']['se']:.3f}") in section
    spread = [max(table[v]["rouge2"]) - min(table[v]["rouge2"]) for v in ("with", "without")]
    assert f"({spread[0]:.1f} ROUGE-2 points with input feeding, {spread[1]:.1f} without)" in section


def test_the_dmn_passes_cap_is_called_the_course_s_own():
    from dca_course.models import dmn
    from dca_course.recipes import DMNConfig

    row = next(line for line in README.splitlines() if line.startswith("| `dmn` | 80 / 80"))
    assert f"at most {DMNConfig().max_passes} (this course's cap" in row
    assert "end-of-passes" in row and "end-of-passes" in dmn.__doc__


def test_readme_numbers_without_a_stored_source_are_gone():
    for unsourced in ("18.6 minutes", "exact match 1.0", "0.99 and 0.76"):
        assert unsourced not in README


def test_the_speed_claims_are_the_stored_benchmarks_rounded():
    """The README's speed sentence quotes opennmt_throughput.json and lstm_limit_*.json, all with input feeding."""
    peer = json.loads((ROOT / "results/opennmt_throughput.json").read_text(encoding="utf-8"))
    fast, full = (json.loads((ROOT / f"results/lstm_limit_{p}.json").read_text(encoding="utf-8")) for p in ("fast", "full"))
    assert peer["input_feeding"] == {"ours": True, "opennmt": True} and fast["input_feeding"] and full["input_feeding"]
    found = re.search(r"trains ([\d.]+)x-([\d.]+)x as many target\s+tokens per second", README)
    assert found and [float(x) for x in found.groups()] == sorted(peer["ratio_ours_over_opennmt"].values())
    found = re.search(r"takes ([\d.]+)x the time of its LSTM layers[^(]*\(([\d.]+)x at the papers'", README, re.S)
    assert found and found.groups() == (f"{fast['stepwise_ratio']:.1f}", f"{full['stepwise_ratio']:.1f}")


def test_the_results_readme_quotes_lstm_limit_json():
    """The distance-from-the-limit table of results/README.md and the sentence under it are lstm_limit_*.json's."""
    text = (ROOT / "results/README.md").read_text(encoding="utf-8")
    section = text[text.index("## Training speed: where the step goes"):]
    section = section[:section.index("\n## ")]
    fast, full = (json.loads((ROOT / f"results/lstm_limit_{p}.json").read_text(encoding="utf-8")) for p in ("fast", "full"))
    for label, d in (("`fast`", fast), ("`full`", full)):
        row = next(line for line in section.splitlines() if line.startswith(f"| {label} "))
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        assert cells == [f"{d['model_step_ms']:.1f} ms", f"{d['lstm_layers_ms']:.1f} ms",
                         f"{d['lstm_stepwise_decoder_ms']:.1f} ms", f"{d['attention_floor_ms']:.1f} ms",
                         f"{d['ratio']:.2f}x", f"**{d['stepwise_ratio']:.2f}x**",
                         f"{d['attention_floor_over_stepwise']:.2f}x"], label
        assert d["input_feeding"] and d["device"] == "cpu" and d["threads"] == 1
    prose = " ".join(section.split())
    assert f"give {fast['median_ratio']:.2f}x and {full['median_ratio']:.2f}x the fused layers" in prose
    assert (f"to {fast['attention_floor_over_stepwise']:.2f}x (`fast`) and {full['attention_floor_over_stepwise']:.2f}x "
            f"(`full`)") in prose
    assert f"from there to {fast['stepwise_ratio']:.2f}x and {full['stepwise_ratio']:.2f}x" in prose
    assert f"--rounds {fast['rounds']} --device cpu --out results` times" in prose


def test_the_results_readme_quotes_opennmt_throughput_json():
    """The OpenNMT-py table of results/README.md and the drift under it are opennmt_throughput.json's."""
    peer = json.loads((ROOT / "results/opennmt_throughput.json").read_text(encoding="utf-8"))
    text = (ROOT / "results/README.md").read_text(encoding="utf-8")
    section = text[text.index("## Against OpenNMT-py"):]
    section = section[:section.index("\n## ")]
    rows = [line for line in section.splitlines() if line.startswith("| ours") or line.startswith("| OpenNMT-py")]
    speeds = [peer["ours_tokens_per_s"]] + [peer["opennmt"][k]["tokens_per_s"] for k in ("enc=dec=128", "enc=dec=64")]
    ratios = ["1.00"] + [f"{peer['ratio_ours_over_opennmt'][k]:.2f}" for k in ("enc=dec=128", "enc=dec=64")]
    for row, speed, ratio in zip(rows, speeds, ratios, strict=True):
        cells = [c.strip().strip("*") for c in row.strip("|").split("|")]
        assert cells[-2:] == [f"{speed:,.0f}", ratio], row
    before, after = peer["ours_tokens_per_s_before_after"]
    prose = " ".join(section.split())
    assert f"ours ran at {before:,.0f} target tokens/s before OpenNMT-py's runs and {after:,.0f} after" in prose
    assert f"At the same decoder size ours is {peer['ratio_ours_over_opennmt']['enc=dec=64']:.2f}x" in prose


def test_the_results_readme_quotes_step_profile():
    """The step-profile paragraph of results/README.md quotes step_profile.json (and the tanh row of the
    step_profile.md it generates)."""
    prof = json.loads((ROOT / "results/step_profile.json").read_text(encoding="utf-8"))
    table = (ROOT / "results/step_profile.md").read_text(encoding="utf-8")
    text = (ROOT / "results/README.md").read_text(encoding="utf-8")
    section = text[text.index("## Training speed: where the step goes"):]
    prose = " ".join(section[:section.index("\n## ")].split())
    models = {r["model"].split(",")[0] if r["model"].startswith(("CopyNet", "DCA")) else "input feeding": r
              for r in prof["models"]}
    compiled = prof["compile"]
    tanh = float(re.search(r"\| aten::tanh \| ([\d.]+) \|", table).group(1))
    for phrase in (f"The fast path is **{prof['speedup']:.2f}x** faster ({prof['fast_ms']:.1f} against "
                   f"{prof['reference_ms']:.1f} ms; the same model timed again in the `--models` table: "
                   f"{models['input feeding']['speedup']:.2f}x",
                   f"spent {tanh:.1f} ms a step in the attention's `tanh`",
                   f"pointer-generator {models['input feeding']['speedup']:.2f}x faster than its straightforward code, "
                   f"DCA with 3 agents {models['DCA']['speedup']:.2f}x",
                   f"CopyNet {models['CopyNet']['speedup']:.2f}x (its selective read",
                   f"{compiled['compile_s']:.1f} s to compile, then {compiled['compiled_us']:,.0f} us per forward + "
                   f"backward against {compiled['eager_us']:,.0f} us eager and {compiled['fused_us']:,.0f} us"):
        assert phrase in prose, phrase
