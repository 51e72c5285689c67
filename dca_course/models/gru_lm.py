"""A GRU language model, the small model of notebook 01.

It reads ``source <sep> target </s>`` as one sequence and learns to predict each next token:

    h_t = GRU(E x_t, h_{t-1})                 (Cho et al. 2014, eqs. 5-8)
    p(x_{t+1} | x_<=t) = softmax(W h_t + b)

On a source -> target task it can only answer from what its one state vector remembers of
the source, which is the limit attention (notebook 02) lifts.  ``scratch=True`` runs the
from-scratch :class:`dca_course.nn.GRU`, whose gates can be recorded and plotted;
otherwise ``torch.nn.GRU`` (cuDNN on a GPU) does the same computation faster.
"""
from __future__ import annotations

import torch
from torch import nn

from ..nn.gru import GRU

SEP = "<sep>"


class GRULanguageModel(nn.Module):
    extended_vocab = False

    def __init__(self, vocab_size: int, emb_size: int = 32, hidden_size: int = 128,
                 scratch: bool = False, pad_id: int = 0):
        super().__init__()
        self.vocab_size = vocab_size
        self.config = dict(vocab_size=vocab_size, emb_size=emb_size, hidden_size=hidden_size,
                           scratch=scratch, pad_id=pad_id)
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=pad_id)
        if scratch:
            self.rnn = GRU(emb_size, hidden_size)
        else:
            self.rnn = nn.GRU(emb_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(self, inputs: torch.Tensor, h0: torch.Tensor | None = None, *, return_gates: bool = False):
        """inputs (batch, time) -> log-probs (batch, time, V), last state (1, batch, H) [, gates]."""
        emb = self.embedding(inputs)
        if return_gates:
            if not isinstance(self.rnn, GRU):
                raise ValueError("gates are recorded by the from-scratch GRU: build with scratch=True")
            out, h, gates = self.rnn(emb, h0, return_gates=True)
            return torch.log_softmax(self.out(out), -1), h, gates
        out, h = self.rnn(emb, h0)
        return torch.log_softmax(self.out(out), -1), h

    @torch.no_grad()
    def complete(self, prompts: torch.Tensor, max_len: int, eos_id: int = 3) -> list[list[int]]:
        """Greedy continuation of each prompt (batch, prompt_len), all prompts the same length."""
        log_probs, h = self(prompts)
        y = log_probs[:, -1].argmax(-1)
        outs = [y]
        for _ in range(max_len - 1):
            log_probs, h = self(y.unsqueeze(1), h)
            y = log_probs[:, -1].argmax(-1)
            outs.append(y)
        rows = torch.stack(outs, 1).tolist()
        return [r[: r.index(eos_id)] if eos_id in r else r for r in rows]
