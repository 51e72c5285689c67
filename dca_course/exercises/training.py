"""Exercises whose answer drives training: the learner's attention trains notebook 02's model.

``check_attention_trains(dot_attention, train, test, vocab)`` first runs exercise 02.1's check (a
wrong or borrowed attention fails there, with its hint, before any training), then puts the learner's
function in the place of :class:`dca_course.models.Seq2Seq`'s additive attention and trains the model
on the date task for a few epochs, printing the test exact match (a trained value) and PASS when it
reaches the stated floor.
"""
from __future__ import annotations

import contextlib
import io

import torch
from torch import nn

from ..outputs import trained, tqdm
from .foundations import _name, _say, check_attention

__all__ = ["LearnerAttention", "check_attention_trains"]


class LearnerAttention(nn.Module):
    """A learner's ``attention(query, keys, mask) -> (context, weights)`` where the model wants an
    attention module.  The decoder state (query_size) is mapped to the keys' size by a learned
    ``W`` first, so that a dot product can score it against every annotation: ``e_j = (W s)^T h_j``,
    Luong et al.'s "general" score, computed by the learner's dot product."""

    def __init__(self, attention, query_size: int, key_size: int):
        super().__init__()
        self.attention = attention
        self.W = nn.Linear(query_size, key_size, bias=False)

    def project_keys(self, keys: torch.Tensor):
        return None                      # nothing to precompute: the learner's function sees the keys

    def forward(self, query, keys, mask, *, projected_keys=None, **_):
        return self.attention(self.W(query), keys, mask)


def _exact_match(model, examples, vocab, device, batch_size: int = 250) -> float:
    from ..data.batching import collate
    from ..decoding import greedy

    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(examples), batch_size):
            part = examples[i:i + batch_size]
            decoded = greedy(model, collate(part, vocab).to(device), max_len=len(part[0].target) + 2)
            right += sum(vocab.decode(ids) == list(ex.target) for ids, ex in zip(decoded.ids, part))
    return right / len(examples)


def check_attention_trains(attention, train, test, vocab, *, epochs: int = 4, floor: float = 0.9, seed: int = 0,
                           device="cpu", batch_size: int = 64, lr: float = 3e-3, emb_size: int = 32,
                           hidden_size: int = 64) -> bool:
    """Train notebook 02's ``Seq2Seq`` with the learner's attention in its place; PASS when the test
    exact match reaches ``floor``.  The check of exercise 02.1 runs first, and training starts only
    when it passes.  Returns ``True`` or ``False``."""
    from ..data.batching import collate, iterate_batches
    from ..losses import sequence_nll
    from ..models.seq2seq import Seq2Seq

    what = f"check_attention_trains({_name(attention)})"
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        ok = check_attention(attention)
    if not ok:
        reason = said.getvalue().strip().split(": ", 1)[-1]
        return _say(False, what, f"exercise 02.1's check fails first ({reason}); no training until it passes")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Seq2Seq(len(vocab), emb_size=emb_size, hidden_size=hidden_size)
        model.attention = LearnerAttention(attention, hidden_size, 2 * hidden_size)
        model = model.to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        for epoch in range(epochs):
            model.train()
            batches = list(iterate_batches(train, batch_size, lambda exs: collate(exs, vocab), shuffle=True,
                                           seed=seed + epoch))
            for batch in tqdm(batches, desc=f"your attention, epoch {epoch + 1}/{epochs}", leave=False,
                              mininterval=1.0):
                batch = batch.to(device)
                loss = sequence_nll(model(batch)["log_probs"], batch.tgt_out, batch.tgt_mask)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                optimizer.step()
        score = _exact_match(model, test, vocab, device)
    ok = score >= floor
    return _say(ok, what, f"Seq2Seq with your attention, {epochs} epochs: test exact match {trained(score)} "
                          f"({'at least' if ok else 'below'} {floor})")
