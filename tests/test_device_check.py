"""The device check (``make device-check``): a CPU stand-in for a GPU that fails where CUDA fails.

Three parts: the check itself (what it stops, what it lets through, that it changes no number);
a notebook cell with a device mistake fails nbval under it, with the cell named; and every model's
training step, evaluation and decoding run under it from the command line.
"""
from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import dca_course
from dca_course import device_check
from dca_course.__main__ import main
from dca_course.gpu import copy_to, gpu_present, step_times
from dca_course.recipes import MODELS

from test_model_data_matrix import MODEL_FLAGS, TINY, small_data  # noqa: F401  (a fixture)


@pytest.fixture()
def checked(monkeypatch):
    """The check on for one test, as ``DCA_DEVICE_CHECK=1`` turns it on (the CPU asked for, so that
    a machine with a GPU checks too); off again after."""
    monkeypatch.setenv("DCA_DEVICE_CHECK", "1")
    dev = dca_course.device("cpu")
    assert dev == device_check.CHECK_DEVICE and device_check.is_active()
    try:
        yield dev
    finally:
        device_check.deactivate()
    assert not device_check.is_active()


def test_off_unless_asked(monkeypatch):
    monkeypatch.delenv("DCA_DEVICE_CHECK", raising=False)
    assert dca_course.device("cpu") == torch.device("cpu") and not device_check.is_active()


def test_mixing_devices_fails_as_on_cuda(checked):
    x = torch.randn(3, device=checked)
    assert device_check.on_device(x) and x.device == checked
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + torch.ones(3)
    with pytest.raises(RuntimeError, match="same device"):
        torch.allclose(x, torch.ones(3))
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([x, torch.zeros(2)])
    counts = torch.zeros(3)                                  # notebook 06's mistake
    with pytest.raises(RuntimeError, match="same device"):
        counts += torch.bincount(torch.tensor([0, 2], device=checked), minlength=3)
    emb = torch.nn.Embedding(10, 4).to(checked)              # notebook 05's hand-built beam search
    with pytest.raises(RuntimeError, match="in embedding"):
        emb(torch.tensor([1, 2]))


def test_what_cuda_allows_passes(checked):
    x = torch.randn(3, device=checked)
    assert device_check.on_device(x + torch.tensor(2.0))              # a 0-dimensional CPU tensor
    assert device_check.on_device(x * 2)
    assert device_check.on_device(x[torch.tensor([0, 2])])            # CPU indices
    assert device_check.on_device(torch.zeros(2, device=x.device))    # x.device is the checked device
    assert device_check.on_device(x.new_zeros(2)) and device_check.on_device(torch.zeros_like(x))
    y = torch.zeros(3, device=checked)
    y.copy_(torch.ones(3))                                            # copies cross devices
    assert y.sum().item() == 3.0
    host = x.cpu()
    assert not device_check.on_device(host) and device_check.on_device(x)
    assert np.asarray(host).shape == (3,) and x.tolist() == host.tolist()
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(2, 4, 3, device=checked), torch.tensor([4, 2]),
                                                     batch_first=True)        # CPU lengths, by design
    out, _ = torch.nn.LSTM(3, 5, batch_first=True).to(checked)(packed)
    padded, lengths = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    assert device_check.on_device(padded) and not device_check.on_device(lengths)


def test_numpy_of_a_device_tensor_fails(checked):
    x = torch.randn(3, device=checked)
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()
    with pytest.raises(TypeError, match="to numpy"):
        np.asarray(x)                                     # what matplotlib does (notebook 05's bar chart)


def test_a_non_blocking_copy_to_the_cpu_fails(checked):
    """Batch.to(device, non_blocking=True) back to the CPU let notebook 07's GPU check read a batch before
    its copy had finished (its CPU loss then differed from the GPU's by half)."""
    from dca_course.data import Example, Vocab
    from dca_course.data.batching import collate

    x = torch.randn(3, device=checked)
    with pytest.raises(RuntimeError, match="non-blocking copy from the GPU to the CPU"):
        x.to("cpu", non_blocking=True)
    assert not device_check.on_device(x.to("cpu"))
    batch = collate([Example(list("ab"), list("ba"))], Vocab(list("ab"))).to(checked)
    assert device_check.on_device(batch.src)
    assert not device_check.on_device(batch.to("cpu").src)          # Batch.to copies back blocking


def test_a_training_step_on_the_device(checked):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).to(checked)
    opt = torch.optim.Adam(model.parameters())
    loss = model(torch.randn(5, 4, device=checked)).pow(2).mean()
    loss.backward()
    assert all(device_check.on_device(p.grad) for p in model.parameters())
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    assert all(device_check.on_device(p) for p in model.parameters())
    with pytest.raises(RuntimeError, match="same device"):
        model(torch.randn(5, 4))


def test_no_number_changes():
    """The same computation with the check on and off: bit for bit."""
    def run(dev):
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(6, 7, batch_first=True).to(dev)
        head = torch.nn.Linear(7, 3).to(dev)
        x = torch.randn(4, 9, 6).to(dev)
        out, _ = lstm(x)
        loss = torch.log_softmax(head(out), -1).mean()
        loss.backward()
        return torch.cat([out.detach().cpu().flatten(), lstm.weight_hh_l0.grad.cpu().flatten()])

    plain = run(torch.device("cpu"))
    dev = device_check.activate()
    try:
        checked_run = run(dev)
    finally:
        device_check.deactivate()
    assert torch.equal(plain, checked_run)


def test_copied_recurrent_layers_warn_as_cudnn_does(checked):
    lstm = torch.nn.LSTM(3, 4, batch_first=True).to(checked)
    x = torch.randn(2, 5, 3, device=checked)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        lstm(x)
        assert not seen                                   # .to(device) put the weights into one block
        copied = copy.deepcopy(lstm)                      # notebooks 05 and 07: a deep copy does not
        copied(x)
        assert len(seen) == 1 and "not part of single contiguous chunk" in str(seen[0].message)
        copy_to(lstm, checked)(x)                         # the mend: a copy flattened again
        assert len(seen) == 1


def test_torch_load_onto_the_device(checked):
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    buffer.seek(0)
    state = torch.load(buffer, map_location=checked, weights_only=True)
    assert device_check.on_device(state["w"])


def test_deactivate_restores_torch():
    load, flatten = torch.load, torch.nn.RNNBase.flatten_parameters
    device_check.activate()
    assert torch.load is not load
    device_check.deactivate()
    assert torch.load is load and torch.nn.RNNBase.flatten_parameters is flatten


def test_gpu_sections_run_under_the_check(checked):
    assert gpu_present(checked) and not gpu_present("cpu")
    times = step_times(lambda: torch.nn.Linear(4, 2), lambda: torch.randn(3, 4), lambda m, b: m(b).sum(),
                       ["cpu", checked])
    assert len(times) == 2 and all(t > 0 for t in times.values())


def _notebook(path, cells):
    nb = {"cells": [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "outputs": [],
                     "source": src} for i, src in enumerate(cells)],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def _nbval(path, env):
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
                           "-q", str(path)], capture_output=True, text=True, env=env, cwd=path.parent)


def test_a_notebook_cell_that_mixes_devices_fails_with_its_cell_named(tmp_path, monkeypatch):
    import os

    env = dict(os.environ, DCA_DEVICE_CHECK="1", DCA_DEVICE="cpu")     # the CPU, also where a GPU is
    setup = "import torch\nimport dca_course\ndevice = dca_course.setup()"
    bad = _notebook(tmp_path / "bad.ipynb", [setup, "x = torch.randn(3, device=device)\ny = x + torch.ones(3)"])
    good = _notebook(tmp_path / "good.ipynb", [setup, "x = torch.randn(3, device=device)\ny = x + torch.ones(3, device=device)"])
    failed = _nbval(bad, env)
    assert failed.returncode != 0
    assert "bad.ipynb::Cell 1" in failed.stdout and "Expected all tensors to be on the same device" in failed.stdout
    passed = _nbval(good, env)
    assert passed.returncode == 0, passed.stdout[-2000:]
    env.pop("DCA_DEVICE_CHECK")
    assert _nbval(bad, env).returncode == 0              # without the check, a CPU machine does not see it


def _train(argv, capsys):
    assert main(argv) == 0, argv
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


DMN_VARIANTS = [[], ["--variant", "dmn+", "--input-module", "fusion", "--memory-update", "relu", "--gate-features",
                     "dmn+", "--time-features", "--word-match", "--episode-reads", "sentences"]]


@pytest.mark.parametrize("model", list(MODEL_FLAGS))
def test_every_model_trains_evaluates_and_decodes_on_the_checked_device(model, small_data, checked, tmp_path,  # noqa: F811
                                                                        capsys):
    kind = MODELS[model].data_kinds[0]                 # the kind of data the model is for
    variants = DMN_VARIANTS if model == "dmn" else [[]]
    for i, extra in enumerate(variants):
        out = tmp_path / f"{model}{i}"
        argv = ["train", model, "--data", small_data[kind][0], "--limit-train", "6", "--device", "cpu", "--quiet",
                "--out", str(out), *TINY, *MODEL_FLAGS[model], *extra]
        result = _train(argv, capsys)
        assert result["model"] == model
        assert main(["evaluate", str(out), "--data", small_data[kind][0], "--device", "cpu"]) == 0
        capsys.readouterr()
    if model == "dca":                                    # RL from the MLE run: sampling, rewards, the mixed loss
        rl = _train(["train", "dca", "--rl", "--init", str(tmp_path / "dca0"), "--data", small_data[kind][0],
                     "--limit-train", "6", "--device", "cpu", "--quiet", "--out", str(tmp_path / "dca-rl"),
                     "--rl-samples", "2", *TINY, *MODEL_FLAGS["dca"]], capsys)
        assert rl["model"] == "dca"


def test_decoding_on_the_checked_device(checked):
    from dca_course.data import Example, Vocab
    from dca_course.data.batching import collate
    from dca_course.decoding import beam_search, beam_search_one_by_one, greedy, sample
    from dca_course.models import Seq2Seq
    from dca_course.models.copynet import CopyNet
    from dca_course.models.pointer_generator import PointerGenerator

    vocab = Vocab(list("abcdefgh"))
    batch = collate([Example(list("abcz"), list("cba")), Example(list("de"), list("edq"))], vocab).to(checked)
    torch.manual_seed(0)
    for model in (Seq2Seq(len(vocab), 8, 12), CopyNet(len(vocab), 8, 12),
                  PointerGenerator(len(vocab), 8, 12).set_coverage(True)):
        model = model.to(checked).eval()
        with torch.no_grad():
            assert len(greedy(model, batch, max_len=5).ids) == 2
            assert len(sample(model, batch, 5, generator=torch.Generator().manual_seed(0)).ids) == 2
            if not isinstance(model, Seq2Seq):
                a = beam_search(model, batch, 2, max_len=5)
                b = beam_search_one_by_one(model, batch, 2, max_len=5)
                assert a.ids == b.ids
