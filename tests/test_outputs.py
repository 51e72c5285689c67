"""The convention that separates deterministic notebook output (compared) from trained output (masked)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbval.plugin import get_sanitize_patterns

import dca_course
from dca_course.outputs import SANITIZE_REGEX, claim, full_requested, on_this_machine, trained, trained_text

ROOT = Path(__file__).resolve().parent.parent
CFG = ROOT / "notebooks" / "sanitize.cfg"


def sanitize(text):
    """What nbval does to an output before comparing it, with the project's sanitize file."""
    import re

    for regex, replace in get_sanitize_patterns(CFG.read_text(encoding="ascii")):
        text = re.sub(regex, replace, text)
    return text


def test_sanitize_file_is_ascii_and_holds_the_library_rule():
    text = CFG.read_text(encoding="ascii")          # nbval opens it in the platform's encoding
    regexes = [regex for regex, _ in get_sanitize_patterns(text)]
    assert SANITIZE_REGEX in regexes
    assert all(replace.strip() for _, replace in get_sanitize_patterns(text)), "an empty replacement"


@pytest.mark.parametrize("line", [
    "ours 0.1985, library 0.1985; equal: True",
    "GRU, z ~ 0.95     2.3e-01  1.4e-01",
    "torch.Size([2, 4])",
    "reference of test article 0:",
    "kolvar united beat trinsby city 3 - 1 on saturday .",
    "tensor([ 1.5410, -0.2934, -2.1788])",
])
def test_deterministic_lines_survive(line):
    assert sanitize(line) == line


def test_trained_numbers_are_masked_and_the_words_around_them_kept():
    a = f"validation ROUGE-L {trained(0.2541)} (MLE {trained(0.25)})"
    b = f"validation ROUGE-L {trained(0.1)} (MLE {trained(12.75, '.1f')})"
    assert a != b and sanitize(a) == sanitize(b)
    assert sanitize(a).startswith("validation ROUGE-L") and "MLE" in sanitize(a)
    # a deterministic word after a masked number is still compared
    assert sanitize(f"{trained(0.5)} of 100 right") != sanitize(f"{trained(0.5)} of 99 right")


def test_padded_table_columns_of_other_widths_compare_equal():
    row = lambda xs: "model" + "".join(f"{trained(x, '.1f'):>9}" for x in xs)
    assert sanitize(row([32.3, 5.0])) == sanitize(row([100.0, 12.25]))
    assert sanitize(row([32.3])) != sanitize(row([32.3, 5.0]))   # a missing column is still seen


def test_trained_text_masks_whole_lines_and_nothing_below():
    a = "reference:\nthe cat sat .\nmodel:\n" + trained_text("the the cat\n. sat")
    b = "reference:\nthe cat sat .\nmodel:\n" + trained_text("a dog\nran")
    assert sanitize(a) == sanitize(b)
    assert sanitize(a).splitlines()[:3] == ["reference:", "the cat sat .", "model:"]
    assert sanitize(a.replace("cat sat", "cat sits")) != sanitize(b)   # the reference is compared


def test_trained_rejects_a_string_with_spaces():
    with pytest.raises(ValueError, match="trained_text"):
        trained("two words")


def test_claim_holds_prints_a_masked_value_and_fails_loudly(capsys):
    assert claim("RL beats MLE", 0.031, at_least=0.01) == 0.031
    out = capsys.readouterr().out
    assert sanitize(out) == sanitize("claim: RL beats MLE: holds (" + trained(0.9) + " >= 0.01)\n")
    assert "RL beats MLE" in sanitize(out) and ">= 0.01" in sanitize(out)
    with pytest.raises(AssertionError, match="claim failed: RL beats MLE: measured -0.020, needs >= 0.01"):
        claim("RL beats MLE", -0.02, at_least=0.01)
    claim("few repeats", 0.01, at_most=0.05)
    with pytest.raises(AssertionError):
        claim("few repeats", 0.06, at_most=0.05)
    with pytest.raises(ValueError):
        claim("no bound", 1.0)


def test_claim_logs_value_bound_and_seed(tmp_path, monkeypatch):
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("DCA_CLAIMS_LOG", str(log))
    monkeypatch.setenv("DCA_SEED", "2")
    claim("a", 0.5, at_least=0.1)
    with pytest.raises(AssertionError):
        claim("b", 0.0, at_least=0.1)          # a failed claim is logged too: its value is the news
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["claim"], r["value"], r["op"], r["bound"], r["seed"]) for r in records] == [
        ("a", 0.5, ">=", 0.1, 2), ("b", 0.0, ">=", 0.1, 2)]


def test_dca_seed_reaches_setup(monkeypatch):
    import torch

    monkeypatch.setenv("DCA_SEED", "1")
    assert dca_course.run_seed() == 1
    dca_course.setup(plots=False)
    a = torch.rand(3)
    torch.manual_seed(1)
    assert torch.equal(a, torch.rand(3))
    monkeypatch.setenv("DCA_SEED", "0")
    dca_course.setup(plots=False)
    assert not torch.equal(torch.rand(3), a)
    monkeypatch.delenv("DCA_SEED")
    assert dca_course.run_seed() == 0
    dca_course.setup(seed=5, plots=False)        # an explicit seed wins over the default
    b = torch.rand(3)
    torch.manual_seed(5)
    assert torch.equal(b, torch.rand(3))
    monkeypatch.setenv("DCA_SEED", "one")
    with pytest.raises(ValueError, match="DCA_SEED"):
        dca_course.run_seed()


def test_dca_seed_reaches_a_notebook_kernel(tmp_path):
    """nbval starts the kernel from pytest's environment: the seed must get through that way too."""
    probe = "import dca_course, torch; dca_course.setup(plots=False); print(torch.rand(1).item())"
    env = {**os.environ, "DCA_SEED": "2"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    import torch

    torch.manual_seed(2)
    assert float(out.stdout) == pytest.approx(torch.rand(1).item(), abs=0)


def test_full_runs_need_dca_full(monkeypatch):
    monkeypatch.delenv("DCA_FULL", raising=False)
    assert not full_requested()
    for value, expected in [("1", True), ("yes", True), ("0", False), ("", False)]:
        monkeypatch.setenv("DCA_FULL", value)
        assert full_requested() is expected


def test_on_this_machine_sanitizes_to_one_text():
    import torch

    assert sanitize(on_this_machine(torch.device("cpu"))) == sanitize(on_this_machine(torch.device("cuda", 0)))
    assert sanitize(on_this_machine("mps")) == "this machine: device='DEVICE'"


def test_a_trained_text_of_another_length_compares_equal():
    a = "summary:\n" + trained_text("one line") + "\nreference:\nthe cat sat ."
    b = "summary:\n" + trained_text("first line\nsecond line\nthird") + "\nreference:\nthe cat sat ."
    assert sanitize(a) == sanitize(b) == "summary:\nTRAINED\nreference:\nthe cat sat ."
