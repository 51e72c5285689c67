"""Early stopping in ``fit``: the best epoch's weights are kept, training stops after
``patience`` evaluations without a better one, the learning rate decays on a plateau, and the
DMN recipe holds its validation questions out of the training ones."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import torch

from dca_course.train import TrainConfig, fit, load_checkpoint


@dataclass
class _Batch:
    x: torch.Tensor

    def to(self, device):
        return self


def _fit_scripted(scores, tmp_path=None, resume=False, epochs=None, ceiling=None, ceiling_patience=None, **config):
    """Train a one-weight model; the evaluation hook returns ``scores`` in turn and records the
    weight it saw at each epoch.  ``ceiling``: the DMN recipe's stopping rule (``CeilingBest``)."""
    from dca_course.recipes.dmn import CeilingBest

    model = torch.nn.Linear(1, 1, bias=False)
    seen = []

    def evaluate(m):
        seen.append(float(m.weight))
        return {"val_accuracy": scores[len(seen) - 1]}

    def loss_fn(net, batch):
        return (net(batch.x) - 3.0).pow(2).mean(), {}

    data = [torch.ones(1) for _ in range(4)]
    history = fit(model, data, make_batch=lambda xs: _Batch(torch.stack(xs)), loss_fn=loss_fn,
                  evaluate=evaluate, out_dir=tmp_path, resume=resume,
                  best_epoch=None if ceiling is None else partial(CeilingBest, ceiling=ceiling,
                                                                  ceiling_patience=ceiling_patience),
                  config=TrainConfig(epochs=epochs or len(scores), batch_size=2, lr=0.1, progress=False, eval_every=1,
                                     monitor="val_accuracy", **config))
    return model, history, seen


def test_the_best_epochs_weights_are_kept_and_patience_stops(tmp_path):
    scores = [0.5, 0.7, 0.6, 0.65, 0.6, 0.9, 0.95]
    model, history, seen = _fit_scripted(scores, tmp_path, patience=3)
    assert len(history.epochs) == 5                 # epochs 3, 4, 5 were not better than epoch 2
    assert history.best == {"epoch": 2, "val_accuracy": 0.7}
    assert float(model.weight.detach()) == seen[1] != seen[-1]
    # the checkpoint `evaluate DIR` reads holds the kept weights too
    assert float(load_checkpoint(tmp_path / "last.pt")["model"]["weight"]) == seen[1]


def test_a_resumed_run_keeps_the_best_it_had_seen(tmp_path):
    _, _, first = _fit_scripted([0.5, 0.9, 0.6], tmp_path)
    # resumed for two more epochs that are both worse: the kept weights are still epoch 2's
    model, history, _ = _fit_scripted([0.7, 0.8], tmp_path, resume=True, epochs=5)
    assert history.best == {"epoch": 2, "val_accuracy": 0.9}
    assert float(model.weight.detach()) == first[1]


def test_a_tie_keeps_the_later_epoch_and_no_patience_trains_every_epoch():
    model, history, seen = _fit_scripted([0.5, 0.8, 0.6, 0.8, 0.7], patience=0)
    assert len(history.epochs) == 5 and history.best["epoch"] == 4
    assert float(model.weight.detach()) == seen[3]


def test_at_the_ceiling_a_tie_keeps_the_later_weights_but_no_longer_restarts_patience():
    scores = [0.5, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0, 0.9, 1.0]
    # below the ceiling ties restart the count (epochs 3-5), at it they do not: epoch 6 reaches 1.0,
    # the ties of epochs 7 and 8 count, and the run stops there with epoch 8's weights (the later tie)
    model, history, seen = _fit_scripted(scores, patience=2, ceiling=1.0)
    assert len(history.epochs) == 8 and history.best == {"epoch": 8, "val_accuracy": 1.0}
    assert float(model.weight.detach()) == seen[7] != seen[5]
    # without a ceiling the ties at 1.0 restart it: every epoch trains, the last tie is kept
    model, history, seen = _fit_scripted(scores, patience=2)
    assert len(history.epochs) == 10 and history.best["epoch"] == 10
    # the DMN's knob sets the ceiling of its held-out accuracy
    from dca_course.recipes import DMNConfig, DMNRecipe

    on = DMNRecipe(DMNConfig(val_fraction=0.1, patience=5, stop_at_ceiling=True)).best_epoch()
    off = DMNRecipe(DMNConfig(val_fraction=0.1, patience=5)).best_epoch()
    assert (on.keywords["ceiling"], off) == (1.0, None)


def test_a_search_stops_at_the_epoch_that_reaches_the_ceiling_with_the_same_best_value():
    scores = [0.5, 0.9, 0.9, 1.0, 1.0, 1.0, 0.9, 1.0]
    full = _fit_scripted(scores, patience=3, ceiling=1.0)[1]
    at = _fit_scripted(scores, patience=3, ceiling=1.0, ceiling_patience=0)[1]
    assert len(full.epochs) == 7 and len(at.epochs) == 4             # 1.0 first at epoch 4: stops there
    assert at.best == {"epoch": 4, "val_accuracy": 1.0} and full.best["val_accuracy"] == at.best["val_accuracy"]
    one = _fit_scripted(scores, patience=3, ceiling=1.0, ceiling_patience=1)[1]
    assert len(one.epochs) == 5 and one.best["epoch"] == 5           # one tie more, then stops
    # below the ceiling ceiling_patience changes nothing; without a ceiling it is not read
    below = [0.5, 0.9, 0.8, 0.8, 0.8, 0.95]
    assert len(_fit_scripted(below, patience=3, ceiling=1.0, ceiling_patience=0)[1].epochs) == 5
    assert len(_fit_scripted(scores, patience=3, ceiling_patience=0)[1].epochs) == 8
    # the DMN's knob
    from dca_course.recipes import DMNConfig, DMNRecipe

    rule = DMNRecipe(DMNConfig(val_fraction=0.1, patience=5, stop_at_ceiling=True, ceiling_patience=0)).best_epoch()
    assert rule.keywords == {"ceiling": 1.0, "ceiling_patience": 0}
    # the general loop knows no ceiling: TrainConfig has no such knob
    assert not {"ceiling", "ceiling_patience"} & set(TrainConfig.__dataclass_fields__)


def test_the_learning_rate_halves_after_lr_patience_epochs_without_progress():
    _, history, _ = _fit_scripted([0.5, 0.4, 0.4, 0.4, 0.4, 0.6, 0.5], lr_patience=2)
    lrs = [row.get("lr") for row in history.epochs]
    assert lrs == [None, None, 0.05, None, 0.025, None, None]


def test_dmn_holds_out_a_seeded_share_of_the_training_stories_with_all_their_questions():
    from dca_course.data.babi import generate_examples, story_ids
    from dca_course.recipes import DMNConfig, DMNRecipe

    recipe = DMNRecipe(DMNConfig.from_profile("fast", dict(val_fraction=0.1)))
    train = generate_examples(1, 200, seed=0)             # 5 questions per story, as the release has it
    story = story_ids(train)
    assert story[-1] + 1 == 40 and story[:6] == [0, 0, 0, 0, 0, 1]
    kept, held = recipe.validation_split(train, seed=3)
    assert len(held) == 20 and len(kept) == 180
    assert sorted(map(id, kept + held)) == sorted(map(id, train))            # every question on one side
    of = {id(ex): s for ex, s in zip(train, story)}
    assert not {of[id(ex)] for ex in kept} & {of[id(ex)] for ex in held}      # no story on both sides
    assert recipe.validation_split(train, seed=3) == (kept, held)
    assert recipe.validation_split(train, seed=4)[1] != held
    # examples without line ids are each a story of their own
    loose = [replace(ex, line_ids=[], question_id=0) for ex in train]
    assert story_ids(loose) == list(range(200)) and len(recipe.validation_split(loose, 3)[1]) == 20
    assert DMNRecipe(DMNConfig.from_profile("fast")).validation_split(train, 0) == (train, [])


def test_the_ceiling_replay_tool_replays_fits_rule():
    """tools/ceiling_replay.py counts epochs by the rule fit applies (results/babi_protocol.md quotes it)."""
    from conftest import load_script

    replay = load_script("ceiling_replay").replay
    scores = [0.5, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0, 0.9, 1.0]
    for ceiling in (1.0, None):
        for ceiling_patience in (None, 0, 1):
            _, history, _ = _fit_scripted(scores, patience=2, ceiling=ceiling, ceiling_patience=ceiling_patience)
            assert replay(scores, patience=2, ceiling=ceiling, ceiling_patience=ceiling_patience) \
                == len(history.epochs)
    assert [replay(scores, patience=2, ceiling_patience=cp) for cp in (None, 0, 1)] == [8, 6, 7]
    assert replay([0.4] * 80, patience=50) == 80 and replay([0.4] + [0.3] * 79, patience=50) == 51


def test_fixed_groups_batches_are_kept_across_epochs_only_when_asked():
    """``keep_batches`` (the DMN's: small padded bAbI batches) makes each group's batch once; without
    it (a summariser's buckets over a news corpus) every epoch makes them afresh and keeps none."""
    from dca_course.recipes import DMNConfig, DMNRecipe, PointerGeneratorConfig, PointerGeneratorRecipe

    model = torch.nn.Linear(1, 1, bias=False)
    groups = [[torch.ones(1)] * 2 for _ in range(3)]
    for keep, made in ((False, 9), (True, 3)):
        calls = []

        def make_batch(xs):
            calls.append(1)
            return _Batch(torch.stack(xs))

        fit(model, groups=groups, make_batch=make_batch, loss_fn=lambda net, b: (((net(b.x) - 3) ** 2).mean(), {}),
            config=TrainConfig(epochs=3, progress=False, eval_every=0, keep_batches=keep))
        assert len(calls) == made
    assert DMNRecipe(DMNConfig()).train_config(3, 0, False).keep_batches
    assert not PointerGeneratorRecipe(PointerGeneratorConfig()).train_config(3, 0, False).keep_batches
