"""The protocol's version 6 cures for the course's bAbI row (results/babi_protocol.md): the answer's
hidden layer (``--answer-hidden``), training stories renamed (``--rename-entities``), and the held-out
answer cross-entropy that judges them."""
import math

import pytest
import torch
import torch.nn.functional as F

from dca_course import seed_everything
from dca_course.data.babi import BabiExample, babi_vocab, load_generated, make_dmn_batch
from dca_course.data.dataset import Dataset
from dca_course.data.babi.rename import KINDS, EntityRenamer, _renamed
from dca_course.models.dmn import DMN
from dca_course.models.extensions import ExtendedDMN
from dca_course.recipes import DMNConfig, DMNRecipe

pytestmark = pytest.mark.usefixtures("one_thread")   # tests/conftest.py


def _examples(task=1):
    she = BabiExample(story=[["mary", "moved", "to", "the", "bathroom"], ["john", "went", "to", "the", "hallway"],
                             ["mary", "picked", "up", "the", "apple", "there"], ["sandra", "went", "to", "the", "kitchen"]],
                      question=["where", "is", "mary"], answer=["bathroom"], supporting=[0], task=task)
    he = BabiExample(story=[["daniel", "journeyed", "to", "the", "office"], ["john", "moved", "to", "the", "garden"],
                            ["daniel", "grabbed", "the", "milk", "there"]],
                     question=["where", "is", "john"], answer=["garden"], supporting=[1], task=task)
    return [she, he]


def _rename_words(ex, mapping):
    send = lambda words: [mapping.get(w, w) for w in words]          # noqa: E731
    return BabiExample(story=[send(s) for s in ex.story], question=send(ex.question), answer=send(ex.answer),
                       supporting=ex.supporting, task=ex.task)


def test_each_question_is_renamed_consistently_within_each_kind():
    """Every renamed batch is the batch of the same questions with their words renamed, one bijection per
    question that keeps each word in its kind (a woman stays a woman for task 11's "she")."""
    exs = _examples()
    vocab = babi_vocab(exs)
    renamer = EntityRenamer(vocab, [1])
    batch = make_dmn_batch(exs, vocab)
    seen = set()
    for draw in range(20):
        maps = renamer.draw(len(exs), generator=torch.Generator().manual_seed(draw))
        for b, ex in enumerate(exs):
            mapping = {vocab.itos[i]: vocab.itos[int(j)] for i, j in enumerate(maps[b])}
            assert sorted(maps[b].tolist()) == list(range(len(vocab)))          # a bijection
            for kind, words in KINDS.items():
                assert all(mapping[w] in words for w in words if w in vocab.stoi), kind
            assert all(mapping[w] == w for w in ("where", "is", "to", "the", "moved"))
            expected = make_dmn_batch([_rename_words(ex, mapping)], vocab)
            got = _renamed(batch, maps)
            n = int(batch.fact_mask[b].sum())
            for field in ("story", "question", "answer"):
                width = getattr(expected, field).size(1)
                assert torch.equal(getattr(got, field)[b, :width], getattr(expected, field)[0]), field
            assert torch.equal(got.sentences[b, :n, :expected.sentences.size(2)], expected.sentences[0])
            assert torch.equal(got.supporting, batch.supporting) and torch.equal(got.fact_mask, batch.fact_mask)
            seen.add(tuple(maps[b].tolist()))
    assert len(seen) > 10                  # the draws differ: each question reads new words


def test_renaming_leaves_out_what_a_task_ties_to_fixed_motives_and_kinds_of_one_word():
    exs = _examples(task=20)
    vocab = babi_vocab(exs)
    assert set(EntityRenamer(vocab, [20]).kinds) == {"women", "men"}          # task 20 keeps places and objects
    assert set(EntityRenamer(vocab, [1]).kinds) == {"women", "men", "places", "objects"}
    only = babi_vocab([BabiExample(story=[["mary", "moved", "to", "the", "kitchen"]], question=["where", "is", "mary"],
                                   answer=["kitchen"], supporting=[0], task=1)])
    renamer = EntityRenamer(only, [1])
    batch = make_dmn_batch(_examples()[:1], babi_vocab(_examples()[:1]))
    assert renamer.kinds == {} and renamer(batch) is batch                   # one word a kind: nothing to rename


def test_only_training_batches_are_renamed():
    """The recipe renames in loss_fn alone: held-out scoring and the test read the stories as written."""
    data = load_generated(1, 60, 20, seed=0)
    recipe = DMNRecipe(DMNConfig(rename_entities=True, emb_size=8, hidden_size=8))
    vocab = babi_vocab(data[0])
    ds = Dataset(spec="babi:generated:1", kind="babi", train=data[0], valid=[], test=data[1])
    seed_everything(0)
    model = recipe.model_for(ds, vocab)
    assert recipe.renamer is not None and recipe.renamer.kinds
    plain = DMNRecipe(DMNConfig(emb_size=8, hidden_size=8))
    model.eval()
    with torch.no_grad():
        assert recipe.score(model, data[1], vocab, "cpu") == plain.score(model, data[1], vocab, "cpu")
        assert recipe.answer_loss(model, data[1], vocab, "cpu") == plain.answer_loss(model, data[1], vocab, "cpu")
        batch = make_dmn_batch(data[0][:16], vocab)
        seed_everything(1)
        renamed, _ = recipe.loss_fn(model, batch)
        seed_everything(1)
        written, _ = plain.loss_fn(model, batch)
    assert renamed != written


def test_answer_hidden_puts_a_relu_layer_before_w_a():
    """y_t = softmax(W^(a) ReLU(W^(h) a_t + b^(h))), a_t the paper's answer GRU state."""
    exs = _examples()
    vocab = babi_vocab(exs)
    seed_everything(0)
    model = ExtendedDMN(len(vocab), 8, 10, passes=2, variant="dmn+", extensions=["answer_hidden"])
    batch = make_dmn_batch(exs, vocab)
    layer = model.extensions["answer_hidden"].hidden
    y0 = torch.full((2,), model.bos_id)
    q, m = torch.randn(2, 10), torch.randn(2, 10)
    a, logits = model.answer_step(y0, q, m)
    a_paper, logits_paper = DMN.answer_step(model, y0, q, m)
    torch.testing.assert_close(a, a_paper)                                      # the GRU is the paper's
    torch.testing.assert_close(logits, model.answer_out(torch.relu(layer(a))))
    assert not torch.allclose(logits, logits_paper)
    assert model.config["extensions"] == ["answer_hidden"] and model(batch)["logits"].shape == (2, len(vocab))
    out = model(batch)["logits"].sum()
    out.backward()
    assert layer.weight.grad.abs().sum() > 0


def test_answer_hidden_is_a_knob_and_a_checkpoint_name():
    data = load_generated(1, 40, 10, seed=0)
    vocab = babi_vocab(data[0])
    model = DMNRecipe(DMNConfig(answer_hidden=True)).model_for(
        Dataset(spec="babi:generated:1", kind="babi", train=data[0], valid=[], test=data[1]), vocab)
    assert list(model.extensions) == ["answer_hidden"]


def test_held_out_answer_loss_is_the_answers_mean_cross_entropy_and_can_tell_models_apart():
    data = load_generated(1, 60, 30, seed=0)
    vocab = babi_vocab(data[0])
    recipe = DMNRecipe(DMNConfig(emb_size=8, hidden_size=8))
    seed_everything(0)
    model = recipe.build_model(vocab)
    model.eval()
    with torch.no_grad():
        loss = recipe.answer_loss(model, data[1], vocab, "cpu", batch_size=7)     # batches of unequal size
        batch = make_dmn_batch(data[1], vocab)
        logits = model(batch)["logits"]
        by_hand = F.cross_entropy(logits, batch.answer[:, 0]).item()
        assert math.isclose(loss, by_hand, rel_tol=1e-5)
        # a cheater that puts all its weight on the right answer scores 0; a uniform guess log V
        model.answer_out.weight.zero_()
        model.answer_out.bias.zero_()
        assert math.isclose(recipe.answer_loss(model, data[1], vocab, "cpu"), math.log(len(vocab)), rel_tol=1e-5)
    assert recipe.validate(model, data[1], vocab, "cpu").keys() == {"val_accuracy", "val_answer_loss"}
