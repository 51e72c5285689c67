"""Teacher forcing: the forward pass of every decoder of the course, written once over the decoding
protocol of :mod:`dca_course.models` (``encode`` / ``step``).

At training time the decoder reads the reference words, not its own: step t is fed y*_{t-1}
(``<s>`` at t = 0), and the model's ``forward`` stacks what every step returns.  It lives beside
the models, which call it, because it is defined by their protocol alone; the searches that feed
a model its own words are in :mod:`dca_course.decoding`, and
:func:`dca_course.fast.teacher_forcing` computes the same values faster for the copying models.
"""
from __future__ import annotations

import torch


def teacher_inputs(batch) -> torch.Tensor:
    """What the decoder reads under teacher forcing: ``<s>`` and the reference words but the last,
    (batch, T), in extended ids (a copying model must know which OOV word it wrote; its ``step``
    maps ids >= V to UNK before its embedding)."""
    return torch.cat([batch.tgt_in[:, :1], batch.tgt_out[:, :-1]], dim=1)   # <s> y1 .. y_{T-1}


def teacher_forcing(model, batch, inputs: torch.Tensor | None = None) -> dict:
    """Run ``model.step`` once per reference word and stack what every step returns:
    ``log_probs`` (batch, T, width) and each ``info`` entry as (batch, T, ...).

    ``inputs`` (batch, T): the word each step reads, by default :func:`teacher_inputs`; a model
    whose embedding reads fixed-vocabulary ids only passes ``batch.tgt_in`` (OOV words as UNK)."""
    state = model.encode(batch)
    y_prev = teacher_inputs(batch) if inputs is None else inputs
    outs: dict[str, list] = {"log_probs": []}
    for t in range(y_prev.size(1)):
        lp, state, info = model.step(y_prev[:, t], state)
        outs["log_probs"].append(lp)
        for k, v in info.items():
            outs.setdefault(k, []).append(v)
    return {k: torch.stack(v, dim=1) for k, v in outs.items()}
