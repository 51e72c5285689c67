"""Every argument is checked before any work, and refused in one line.

The kinds of bad argument: a number outside its knob's range (every number knob of every model,
read from the configurations, so that a new knob is covered without being named here), a device
that does not exist or is not here, a run folder that cannot be written, and the command line's
own numbers (seeds, ``--limit-train``, ``data generate``'s counts).  Each case runs ``main``
in-process with the data loaders replaced by ones that fail the test if called.  Then the faults
after the work: a save that fails after training still prints the metrics and says what was not
saved, and an error raised under a progress bar starts on a line of its own.
"""
from __future__ import annotations

import errno
import json
import math
import typing
from dataclasses import fields
from pathlib import Path

import pytest
import torch

from dca_course import __main__ as cli
from dca_course.errors import InputError
from dca_course.recipes import CONFIGS, MODELS
from dca_course.recipes.config import KNOB_RANGES, Range, _flag_type, flag_name

pytestmark = pytest.mark.usefixtures("one_thread")

#: A data spec of the kind each model trains on (never read here: the loader fails the test).
DATA = {"seq2seq": "toy:dates", "gru-lm": "toy:dates", "copynet": "synthnews", "pointer-generator": "synthnews",
        "dca": "synthnews", "dmn": "babi:1"}


@pytest.fixture()
def no_work(monkeypatch):
    """Reading or generating data fails the test: a refusal must come before any of it."""
    def refuse(*args, **kwargs):
        raise AssertionError("data was read or generated before the arguments were checked")

    from dca_course.data import babi, synthnews

    monkeypatch.setattr(cli, "load_data", refuse)
    monkeypatch.setattr(babi, "load_generated", refuse)
    monkeypatch.setattr(synthnews, "load_synthnews", refuse)
    monkeypatch.delenv("DCA_DEVICE", raising=False)


def refused(argv, capsys) -> str:
    """Run the command line; it must exit 2 with one line ``dca-course: error: ...`` and print
    nothing on stdout.  Returns the message after ``dca-course: error: ``."""
    try:
        status = cli.main(argv)
    except SystemExit as exit_:          # argparse's refusals (a flag's type) exit from the parser
        status = exit_.code
    out, err = capsys.readouterr()
    assert status == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("dca-course: error: "), err
    assert out == ""
    return lines[0][len("dca-course: error: "):]


def number_knobs():
    """(model, knob name, its flag, int or float, its Range) for every number knob with a flag."""
    for model, config in CONFIGS.items():
        hints = typing.get_type_hints(config)
        ranges = config.number_knobs()
        for f in fields(config):
            if f.name in ranges and f.metadata.get("flag", True):
                yield model, f.name, flag_name(f.name), _flag_type(hints[f.name]), ranges[f.name]


def outside(valid: Range, kind: type) -> list:
    """Values just outside each end of ``valid``, and (for floats) not a number and infinities."""
    step = 1 if kind is int else 0.5
    values = []
    if valid.low is not None:
        values.append(valid.low if valid.low_open else valid.low - step)
    if valid.high is not None:
        values.append(valid.high if valid.high_open else valid.high + step)
    if kind is float:
        values += [math.nan, math.inf, -math.inf]
    return [kind(v) if math.isfinite(v) else v for v in values]


def shown(value) -> str:
    return str(value) if not isinstance(value, float) or not value.is_integer() else str(int(value))


KNOB_CASES = [(model, flag, value) for model, _, flag, kind, valid in number_knobs()
              for value in outside(valid or Range(), kind)]


def test_every_number_knob_of_every_model_has_a_range():
    """A new number knob needs a range (its ``valid=``, or its name in ``KNOB_RANGES``)."""
    missing = sorted((model, name) for model, name, _, _, valid in number_knobs() if valid is None)
    assert not missing, f"number knobs without a range: {missing}"
    assert len(KNOB_CASES) > 100


def test_every_profile_is_in_range():
    for model, config in CONFIGS.items():
        for profile in config.profile_names():
            config.check_ranges(config.from_profile(profile).to_dict())


def test_the_ends_of_each_range_are_accepted():
    for model, name, _, kind, valid in number_knobs():
        for end, is_open in ((valid.low, valid.low_open), (valid.high, valid.high_open)):
            if end is not None and not is_open:
                CONFIGS[model].check_ranges({name: kind(end)})


def test_the_range_table_names_only_knobs_some_model_has():
    every = {f.name for config in CONFIGS.values() for f in fields(config)}
    assert set(KNOB_RANGES) <= every, set(KNOB_RANGES) - every


@pytest.mark.parametrize("model, flag, value", KNOB_CASES,
                         ids=[f"{m}{f}={shown(v)}" for m, f, v in KNOB_CASES])
def test_a_knob_out_of_range_is_refused_in_one_line(model, flag, value, no_work, tmp_path, capsys):
    out = tmp_path / "run"
    # FLAG=VALUE: argparse reads a lone "-inf" or "-1" after a flag as another option
    message = refused(["train", model, "--data", DATA[model], f"{flag}={shown(value)}", "--out", str(out)], capsys)
    assert message.startswith(f"{flag} {shown(value)}: must be "), message
    assert not out.exists()


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("text", ["nan", "1.5", "x"])
def test_an_int_knob_given_something_else_is_refused_in_one_line(model, text, no_work, capsys):
    message = refused(["train", model, "--data", DATA[model], "--epochs", text], capsys)
    assert message.startswith(f"argument --epochs: invalid int value: '{text}'"), message


@pytest.mark.parametrize("argv, said", [
    (["--seed=-1"], "argument --seed: '-1' is not a seed from 0 to 4294967295"),
    (["--seed", str(2**32)], "argument --seed: "),
    (["--limit-train", "0"], "argument --limit-train: '0' is not a whole number at least 1"),
    (["--limit-train=-5"], "argument --limit-train: '-5' is not a whole number at least 1"),
])
def test_the_command_lines_own_numbers(argv, said, no_work, capsys):
    assert refused(["train", "seq2seq", "--data", "toy:dates", *argv], capsys).startswith(said)


# -- devices -------------------------------------------------------------------------------------
NOT_DEVICES = ["tpu", "banana", "cuda:x", "gpu", "cuda:-1"]
ABSENT = (["cuda", "cuda:0"] if not torch.cuda.is_available() else [f"cuda:{torch.cuda.device_count()}"]) + \
    ([] if torch.backends.mps.is_available() else ["mps"]) + ["cuda:99", "meta", "cpu:2"]


@pytest.mark.parametrize("device", NOT_DEVICES + ABSENT)
@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_a_device_that_is_not_here_is_refused_before_any_work(device, command, no_work, tmp_path, capsys):
    argv = (["train", "seq2seq", "--data", "toy:dates", "--out", str(tmp_path / "run")] if command == "train"
            else ["evaluate", str(tmp_path / "run")])
    message = refused([*argv, "--device", device], capsys)
    assert message.startswith(f"--device {device}: "), message
    assert not (tmp_path / "run").exists()


def test_a_device_from_the_environment_is_checked_too(no_work, monkeypatch, capsys):
    monkeypatch.setenv("DCA_DEVICE", "tpu")
    assert refused(["train", "seq2seq", "--data", "toy:dates"], capsys).startswith("DCA_DEVICE=tpu: not a device")


# -- run folders ---------------------------------------------------------------------------------
def unwritable_folders(tmp_path):
    (tmp_path / "afile").write_text("x\n")
    folders = {"a file": tmp_path / "afile", "under a file": tmp_path / "afile" / "run"}
    if Path("/proc/self").is_dir():
        folders["under /proc"] = Path("/proc/dca-course-run")     # root cannot make folders there either
    return folders


@pytest.mark.parametrize("case", ["a file", "under a file", "under /proc"])
def test_a_run_folder_that_cannot_be_written_is_refused_before_any_work(case, no_work, tmp_path, capsys):
    folders = unwritable_folders(tmp_path)
    if case not in folders:
        pytest.skip("no /proc here")
    out = folders[case]
    message = refused(["train", "seq2seq", "--data", "toy:dates", "--out", str(out)], capsys)
    assert message.startswith(f"--out {out}: cannot write there: "), message


def test_a_refused_run_leaves_no_folder_behind(tmp_path, monkeypatch, capsys):
    """The run folder is made (and written) before the data is read; a data error removes it again."""
    def bad_data(*args):
        assert (tmp_path / "new" / "run").is_dir()
        raise InputError("data.txt:3: a bad line")

    monkeypatch.setattr(cli, "load_data", bad_data)
    assert refused(["train", "seq2seq", "--data", "toy:dates", "--out", str(tmp_path / "new" / "run")],
                   capsys) == "data.txt:3: a bad line"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, said", [
    (["babi", "--task", "1", "--train", "0"], "argument --train: '0' is not a whole number at least 1"),
    (["babi", "--task", "1", "--test=-1"], "argument --test: '-1' is not a whole number at least 1"),
    (["babi", "--task", "0"], "bAbI has tasks 1..20, not 0"),
    (["babi", "--seed=-1"], "argument --seed: '-1' is not a seed"),
    (["synthnews", "--valid", "0"], "argument --valid: '0' is not a whole number at least 1"),
    (["synthnews", "--train=-5"], "argument --train: '-5' is not a whole number at least 1"),
])
def test_data_generate_refuses_bad_numbers(argv, said, no_work, tmp_path, capsys):
    assert refused(["data", "generate", *argv, "--out", str(tmp_path / "g")], capsys).startswith(said)
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("what", ["babi", "synthnews"])
def test_data_generate_refuses_a_folder_it_cannot_write(what, no_work, tmp_path, capsys):
    out = unwritable_folders(tmp_path)["under a file"]
    assert refused(["data", "generate", what, "--out", str(out)], capsys).startswith("--out ")


# -- after the work: saving that fails, errors under a progress bar -----------------------------
TINY = ["--epochs", "2", "--batch-size", "8", "--emb-size", "4", "--hidden-size", "4", "--max-decode", "4"]


@pytest.fixture()
def tiny_data(monkeypatch):
    from dca_course.data import specs

    monkeypatch.setitem(specs.TOY_SIZES, "fast", (16, 2, 4))


def full_disk(fail: set):
    """A writer that fails (no space left) for the file names in ``fail`` and writes the others."""
    from dca_course import io

    real = io.atomic_write

    def write(path, writer):
        if Path(path).name in fail:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, writer)
    return write


def test_a_save_that_fails_still_prints_the_metrics_and_says_what_was_not_saved(tiny_data, monkeypatch,
                                                                                  tmp_path, capsys):
    from dca_course import io, train

    write = full_disk({"last.pt", "metrics.json"})
    monkeypatch.setattr(train, "atomic_write", write)
    monkeypatch.setattr(io, "atomic_write", write)          # metrics.json goes through io.write_json
    out = tmp_path / "run"
    assert cli.main(["train", "seq2seq", "--data", "toy:dates", *TINY, "--out", str(out), "--quiet"]) == 1
    stdout, err = capsys.readouterr()
    metrics = json.loads(stdout)
    assert metrics["epochs"] == 2 and "token_accuracy" in metrics
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[0] == (f"dca-course: warning: could not save {out / 'last.pt'} (No space left on device); "
                        "training goes on, and says at the end what was not saved")
    assert lines[-1] == ("dca-course: error: the training finished and its metrics are printed above, but not "
                         f"saved: {out / 'last.pt'} (No space left on device); {out / 'metrics.json'} "
                         "(No space left on device)")
    assert len(lines) == 2 and "Traceback" not in err


def test_a_checkpoint_saved_again_later_is_not_reported(tiny_data, monkeypatch, tmp_path, capsys):
    """A full disk at the first epoch's save, room again at the second's: everything is saved in the end."""
    from dca_course import io, train

    calls = []

    def first_fails(path, writer):
        calls.append(path)
        return full_disk({"last.pt"} if len(calls) == 1 else set())(path, writer)

    monkeypatch.setattr(train, "atomic_write", first_fails)
    out = tmp_path / "run"
    assert cli.main(["train", "seq2seq", "--data", "toy:dates", *TINY, "--out", str(out), "--quiet"]) == 0
    _, err = capsys.readouterr()
    assert "warning: could not save" in err and "error" not in err
    assert (out / "last.pt").is_file() and (out / "metrics.json").is_file()


def test_an_error_under_a_progress_bar_starts_on_its_own_line(tiny_data, monkeypatch, tmp_path, capsys):
    """An error raised while an epoch's bar is drawn (stderr here is not a terminal: the bar's text
    stays on its line) is printed on a new line, and no bar is drawn after it."""
    from dca_course.recipes import Seq2SeqRecipe

    def loss_fn(self, model, batch):
        raise InputError("something the user can fix")

    monkeypatch.setattr(Seq2SeqRecipe, "loss_fn", loss_fn)
    assert cli.main(["train", "seq2seq", "--data", "toy:dates", *TINY, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "epoch 1/2" in err                                  # a bar was drawn
    assert err.endswith("\ndca-course: error: something the user can fix\n"), repr(err[-200:])
