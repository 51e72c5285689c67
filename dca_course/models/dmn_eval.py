"""Scoring and explaining a trained DMN (:mod:`dca_course.models.dmn`), for the notebook and the
command line: answer accuracy, how often each pass finds its supporting fact, and one example's
gates (:mod:`dca_course.recipes.dmn` and notebook 03 import them from here)."""
from __future__ import annotations

import torch
from torch import nn

from ..data.babi.batching import length_buckets, make_dmn_batch


def answer_mode_for(examples) -> str:
    """``"sequence"`` when some answer has several words (tasks 8 and 19), else ``"word"``."""
    return "sequence" if any(len(ex.answer) > 1 for ex in examples) else "word"


def _answered(predicted: list[int], answer: list[str], vocab) -> bool:
    """Whether predicted ids spell the gold answer.  A gold word outside the training vocabulary
    can never be predicted: encoding it would give ``<unk>``, and a predicted ``<unk>`` would then
    count as right."""
    return all(w in vocab.stoi for w in answer) and predicted == vocab.encode(answer)


def pass_hits(top: torch.Tensor, supporting: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Whether each pass's top gate is a fact it is trained on, and whether the pass is supervised.

    top (batch, passes): the fact of each pass's largest gate; supporting (batch, n_sup) fact
    indices, -1 for none.  Returns two (batch, k) bool tensors, k = min(passes, n_sup): pass ``i``
    hits when its top gate is the ``i``-th supporting fact; the last pass (when ``n_sup`` reaches
    it) hits when its top gate is any of the supporting facts from the last pass's on.
    """
    passes = top.size(1)
    target = supporting[:, :passes]
    k = target.size(1)
    ok = target >= 0
    hit = (top[:, :k] == target) & ok
    if k == passes:                                   # the last pass: every fact left over
        rest = supporting[:, passes - 1:]
        hit[:, -1] = ((top[:, -1:] == rest) & (rest >= 0)).any(1)
    return hit, ok


@torch.no_grad()
def evaluate_dmn(model: nn.Module, examples, vocab, *, max_facts: int | None = None, batch_size: int = 256,
                 device=None) -> dict:
    """Answer accuracy and supporting-fact accuracy on ``examples``: the top gate of pass ``i`` is
    the ``i``-th supporting fact, over the passes that have one, and the top gate of the last pass is
    any supporting fact left over (the facts it is trained on, :func:`~.dmn_gate.gate_targets`: a
    question of counting or lists can have more supporting facts than there are passes)."""
    was_training = model.training
    model.eval()
    device = device or next(model.parameters()).device
    right = 0
    hits = torch.zeros(model.passes, dtype=torch.long)
    supervised = torch.zeros(model.passes, dtype=torch.long)
    for chunk in length_buckets(examples, batch_size, max_facts=max_facts):
        batch = make_dmn_batch(chunk, vocab, max_facts=max_facts).to(device)
        answers, gates = model.predict(batch)
        right += sum(_answered(a, ex.answer, vocab) for a, ex in zip(answers, chunk))
        hit, ok = pass_hits(gates.argmax(-1), batch.supporting)
        k = hit.size(1)
        hits[:k] += hit.sum(0).cpu()
        supervised[:k] += ok.sum(0).cpu()
    model.train(was_training)
    n = max(len(examples), 1)
    per_pass = [round(h / s, 4) for h, s in zip(hits.tolist(), supervised.tolist()) if s]
    return {"accuracy": right / n,
            "supporting_fact_accuracy": int(hits.sum()) / max(int(supervised.sum()), 1),
            "supporting_fact_accuracy_per_pass": per_pass}


@torch.no_grad()
def explain_dmn(model: nn.Module, example, vocab, *, max_facts: int | None = None) -> dict:
    """What the model does on one example: its answer and the gates of every pass.

    Returns ``{"facts": [sentence strings], "question", "answer", "prediction" (strings),
    "correct", "gates": (passes, facts) tensor, "supporting": [fact indices]}`` (the facts
    are the ones the model read: the last ``max_facts``).
    """
    was_training = model.training
    model.eval()
    batch = make_dmn_batch([example], vocab, max_facts=max_facts).to(next(model.parameters()).device)
    answers, gates = model.predict(batch)
    model.train(was_training)
    story = example.story[-max_facts:] if max_facts else example.story
    offset = len(example.story) - len(story)
    prediction = [vocab.itos[i] for i in answers[0]]
    return {"facts": [" ".join(s) for s in story], "question": " ".join(example.question),
            "answer": ",".join(example.answer), "prediction": ",".join(prediction),
            "correct": prediction == list(example.answer), "gates": gates[0, :, : len(story)].cpu(),
            "supporting": [i - offset for i in example.supporting if i >= offset]}
