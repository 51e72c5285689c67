"""Decoding: greedy search and sampling over the extended vocabulary.

Every decoder of the course speaks one protocol (see :mod:`dca_course.models`):

* ``state = model.encode(batch)``: a dict of tensors whose first dimension is the batch;
* ``log_probs, state, info = model.step(y_prev, state)``: one step; ``y_prev`` (batch,) holds
  ids the embedding can read, ``log_probs`` is (batch, width) with width V, or V + n_oov for a
  copying model, ``info`` holds per-step tensors to look inside (attention, p_gen...).

Because the state is a dict of batch-first tensors, a search can reorder or repeat
hypotheses with one ``index_select`` per entry, whatever the model keeps in it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class Decoded:
    ids: list                     # per example: list of output ids (extended), without </s>
    info: dict = field(default_factory=dict)   # name -> (batch, steps, ...) tensor
    log_probs: torch.Tensor | None = None      # (batch, steps) log-prob of each chosen id


def to_inputs(ids: torch.Tensor, vocab_size: int, unk_id: int = 1) -> torch.Tensor:
    """Extended ids -> ids the embedding can read (a copied OOV word is fed back as UNK)."""
    return torch.where(ids >= vocab_size, torch.full_like(ids, unk_id), ids)


@torch.no_grad()
def greedy(model, batch, max_len: int = 50, *, bos_id: int = 2, eos_id: int = 3) -> Decoded:
    """Pick the most probable word at every step, until ``</s>`` or ``max_len``."""
    return _decode(model, batch, max_len, bos_id, eos_id, sample=False)


def sample(model, batch, max_len: int = 50, *, bos_id: int = 2, eos_id: int = 3,
           generator: torch.Generator | None = None, temperature: float = 1.0, grad: bool = False) -> Decoded:
    """Draw each word from the model's distribution (``grad=True`` keeps the graph, for RL)."""
    with torch.set_grad_enabled(grad):
        return _decode(model, batch, max_len, bos_id, eos_id, sample=True, generator=generator,
                       temperature=temperature)


def _decode(model, batch, max_len, bos_id, eos_id, *, sample, generator=None, temperature=1.0) -> Decoded:
    state = model.encode(batch)
    B = batch.src.size(0)
    device = batch.src.device
    y = torch.full((B,), bos_id, dtype=torch.long, device=device)
    done = torch.zeros(B, dtype=torch.bool, device=device)
    chosen, chosen_lp, infos = [], [], {}
    for _ in range(max_len):
        log_probs, state, info = model.step(to_inputs(y, model.vocab_size), state)
        if sample:
            probs = torch.softmax(log_probs / temperature, dim=-1)
            y = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
        else:
            y = log_probs.argmax(dim=-1)
        y = torch.where(done, torch.full_like(y, eos_id), y)
        chosen.append(y)
        chosen_lp.append(log_probs.gather(-1, y.unsqueeze(-1)).squeeze(-1) * (~done))
        for k, v in info.items():
            infos.setdefault(k, []).append(v)
        done = done | (y == eos_id)
        if bool(done.all()):
            break
    ids = torch.stack(chosen, dim=1)
    out = []
    for row in ids.tolist():
        out.append(row[: row.index(eos_id)] if eos_id in row else row)
    return Decoded(out, {k: torch.stack(v, dim=1) for k, v in infos.items()}, torch.stack(chosen_lp, 1))
