"""The training loop: it learns, checkpoints atomically, resumes, and refuses damaged files clearly."""
import os
from dataclasses import replace

import pytest
import torch

from dca_course import seed_everything
from dca_course.data import Vocab
from dca_course.data.batching import collate
from dca_course.data.toy import load_toy
from dca_course.losses import sequence_nll
from dca_course.models import Seq2Seq
from dca_course.io import atomic_write
from dca_course.train import CheckpointError, TrainConfig, fit, load_checkpoint, save_checkpoint


def _setup(n=64):
    seed_everything(0)
    train, _, _ = load_toy("reverse", n, 4, 4, seed=1)
    vocab = Vocab.build([e.source for e in train])
    model = Seq2Seq(len(vocab), 8, 16)

    def loss_fn(m, b):
        return sequence_nll(m(b)["log_probs"], b.tgt_out, b.tgt_mask), {}
    return train, vocab, model, loss_fn


def test_fit_lowers_the_loss_and_calls_the_hook(tmp_path):
    train, vocab, model, loss_fn = _setup()
    calls = []
    hist = fit(model, train, make_batch=lambda e: collate(e, vocab), loss_fn=loss_fn,
               config=TrainConfig(epochs=3, batch_size=16, lr=1e-2, progress=False),
               evaluate=lambda m: calls.append(1) or {"score": 1.0})
    losses = [r["loss"] for r in hist.epochs]
    assert losses[-1] < losses[0]
    assert len(calls) == 3 and hist.last("score") == 1.0


def test_resume_continues_from_the_last_checkpoint(tmp_path):
    train, vocab, model, loss_fn = _setup()
    kw = dict(make_batch=lambda e: collate(e, vocab), loss_fn=loss_fn, out_dir=tmp_path)
    fit(model, train, config=TrainConfig(epochs=2, batch_size=16, progress=False), **kw)
    state = load_checkpoint(tmp_path / "last.pt")
    assert state["epoch"] == 1 and len(state["history"]) == 2
    # A straight 3-epoch run and a 2-epoch run resumed for a third reach the same weights.
    train, vocab, straight, loss_fn = _setup()
    fit(straight, train, config=TrainConfig(epochs=3, batch_size=16, progress=False),
        make_batch=lambda e: collate(e, vocab), loss_fn=loss_fn, out_dir=tmp_path / "straight")
    _, _, resumed, _ = _setup()
    hist = fit(resumed, train, config=TrainConfig(epochs=3, batch_size=16, progress=False), **kw)
    assert len(hist.epochs) == 3
    for a, b in zip(straight.state_dict().values(), resumed.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6)


def test_truncated_checkpoint_names_the_file(tmp_path):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"model": {"w": torch.ones(1000)}})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=str(path)):
        load_checkpoint(path)


def test_missing_or_foreign_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        load_checkpoint(tmp_path / "nope.pt")
    torch.save({"not": 1}, tmp_path / "x.pt")
    with pytest.raises(CheckpointError, match="not a dca_course checkpoint"):
        load_checkpoint(tmp_path / "x.pt")


class Arbitrary:
    """Any class: unpickling it would mean running code named by the file."""


def test_checkpoints_refuse_pickled_code(tmp_path):
    torch.save({"model": {}, "obj": Arbitrary()}, tmp_path / "evil.pt")
    with pytest.raises(CheckpointError):
        load_checkpoint(tmp_path / "evil.pt")


def test_atomic_write_leaves_nothing_half_written(tmp_path):
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")

    def broken(tmp):
        with open(tmp, "wb") as fh:
            fh.write(b"half")
        raise RuntimeError("crash while writing")
    with pytest.raises(RuntimeError):
        atomic_write(target, broken)
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f.bin"]


def test_fit_on_groups_equals_the_old_bucket_path(tmp_path):
    """Fixed groups given to fit train exactly as the old trick did: the groups handed over as
    examples with batch_size=1 and a make_batch that unwraps them (same order, same weights),
    and with ``keep_batches`` fit makes each group's batch only once."""
    import random

    train, vocab, _, loss_fn = _setup(48)
    rng = random.Random(0)
    order = sorted(range(len(train)), key=lambda i: (len(train[i].source), rng.random()))
    groups = [[train[i] for i in order[j: j + 8]] for j in range(0, len(order), 8)]
    config = TrainConfig(epochs=2, batch_size=8, lr=1e-2, progress=False, seed=3)
    seen = {"old": [], "new": []}

    def batcher(key):
        def make(examples):
            seen[key].append([ex.source for ex in examples])
            return collate(examples, vocab)
        return make

    _, _, old_model, _ = _setup(48)
    old_make = batcher("old")
    old = fit(old_model, groups, make_batch=lambda chunk: old_make(chunk[0]), loss_fn=loss_fn,
              config=TrainConfig(**{**config.__dict__, "batch_size": 1}))
    assert len(seen["old"]) == 2 * len(groups)
    for keep in (False, True):
        seen["new"] = []
        _, _, new_model, _ = _setup(48)
        new = fit(new_model, groups=groups, make_batch=batcher("new"), loss_fn=loss_fn,
                  config=replace(config, keep_batches=keep))
        # the same batches in the same order; kept, each group's batch is made once and used every epoch
        assert seen["new"] == (seen["old"][:len(groups)] if keep else seen["old"])
        assert [r["loss"] for r in old.epochs] == [r["loss"] for r in new.epochs]
        for a, b in zip(old_model.state_dict().values(), new_model.state_dict().values()):
            assert torch.equal(a, b)
    with pytest.raises(ValueError, match="one of the two"):
        fit(new_model, train, groups=groups, make_batch=batcher("new"), loss_fn=loss_fn, config=config)
