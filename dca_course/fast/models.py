"""The copying models of :mod:`dca_course.models`, computed faster: the same parameters, the same
values (``tests/test_fast_paths.py``), less work per training step.

Each class here is its paper's model with a few methods replaced; :func:`dca_course.fast.accelerate`
turns a model into one in place.  What changes:

* teacher forcing (:func:`teacher_forcing`) runs only the recurrence step by step (``recur``: the
  LSTM, the attention, coverage) and the output layers once for all T steps (``readout``): a few
  large matrix products instead of T small ones; with ``log_probs=False`` (all a training loss
  needs) the output layers compute log P(y*_t) of the reference words alone;
* the attention's keys get their gradient from all steps in one matrix product
  (:func:`~dca_course.fast.attention.step_keys`), and each attention step is one fused operation
  (:class:`~dca_course.fast.attention.FastAdditiveAttention`);
* the pointer-generator without input feeding runs its decoder LSTM over the whole summary in one
  call, and the attention of all steps as one operation
  (:func:`~dca_course.fast.attention.attention_over_steps`); with input feeding, the part of x_t
  that does not wait for the previous step is one matrix product before the loop;
* the extended-vocabulary distribution (See et al.'s eq. 9, DCA's eqs. 14-15) is one operation with
  a hand-written backward pass (:mod:`dca_course.fast.copying`), DCA's with the sum over agents
  taken first.
"""
from __future__ import annotations

import torch
from torch import nn

from ..data.vocab import extended_to_vocab
from ..models.copynet import CopyNet
from ..models.dca import DCA
from ..models.extensions import ExtendedDCA
from ..models.pointer_generator import PointerGenerator
from ..models.teacher_forcing import teacher_inputs
from ..nn.copying import oov_slots, safe_log
from .attention import attention_over_steps, step_keys
from .copying import log_final_distribution, log_mixed_distribution


def teacher_forcing(model, batch, log_probs: bool = True) -> dict:
    """:func:`dca_course.models.teacher_forcing.teacher_forcing` for a fast model: ``model.recur_sequence`` over
    all reference words, then ``model.readout`` once for all T steps.  With ``log_probs=False`` (all a
    training loss needs, see :func:`~dca_course.losses.teacher_forced_nll`) the readout gives
    ``target_log_probs``, log P(y*_t), instead of ``log_probs`` (None)."""
    state = model.encode(batch)
    emb = model.embed(teacher_inputs(batch))                                  # all steps at once
    state, carried = model.recur_sequence(emb, state)
    out, info = model.readout(carried, state, None if log_probs else batch.tgt_out)
    return {"log_probs": out, **info}


def recur_loop(model, emb: torch.Tensor, state: dict):
    """``model.recur`` over the steps of ``emb`` (batch, T, emb); what it carries, stacked as
    (batch, T, ...)."""
    carried: dict[str, list] = {}
    for emb_t in emb.unbind(1):        # not emb[:, t]: its backward would zero-fill all T steps, T times
        state, r = model.recur(emb_t, state)
        for k, v in r.items():
            carried.setdefault(k, []).append(v)
    return state, {k: torch.stack(v, dim=1) for k, v in carried.items()}


class FastCopyNet(CopyNet):
    """:class:`~dca_course.models.copynet.CopyNet` whose keys collect the attention's gradient of all steps."""

    def encode(self, batch) -> dict:
        """:meth:`CopyNet.encode <dca_course.models.copynet.CopyNet.encode>` with the keys prepared by
        :func:`~dca_course.fast.attention.step_keys` first: the memory's gradient then adds its three
        parts (attention and selective reads, W_h, W_c) in the order training has always added them."""
        keys, last = self.encoder(batch.src, batch.src_mask)                 # (batch, src_len, 2H)
        back_first = last[:, keys.size(-1) // 2:]                              # <-h_1
        B, S = batch.src.shape
        return {
            "keys": step_keys(keys),
            "proj_keys": self.attention.project_keys(keys),
            "copy_keys": torch.tanh(self.W_c(keys)),                           # sigma(h_j^T W_c), once
            "mask": batch.src_mask,
            "src_ext": batch.src_ext,
            "oov_mask": oov_slots(batch),
            "s": torch.tanh(self.init_state(back_first)),                      # s_0
            "copy": keys.new_zeros(B, S),                                      # p(x_j, c) of step t-1
        }


class FastPointerGenerator(PointerGenerator):
    """:class:`~dca_course.models.pointer_generator.PointerGenerator`, faster (see the module docstring)."""

    def encode(self, batch) -> dict:
        state = super().encode(batch)
        state["keys"] = step_keys(state["keys"])
        return state

    def recur_sequence(self, emb: torch.Tensor, state: dict):
        """All T steps of the recurrence for teacher forcing; ``emb`` (batch, T, emb).  With
        input feeding each step's LSTM input needs the previous step's context, so the steps
        run one by one (:meth:`_recur_fed`).  Without it the decoder LSTM runs over the whole
        target in one fused call and W_s s_t is one matrix product for all steps; only the
        attention scores (whose coverage needs the attention before them) stay step by step
        (:func:`~dca_course.fast.attention.attention_over_steps`)."""
        if self.input_feeding:
            return self._recur_fed(emb, state)
        states, (h_n, c_n) = self.cell(emb, (state["h"].unsqueeze(0), state["c"].unsqueeze(0)))
        query_proj = self.attention.W_s(states)                                      # (batch, T, attn)
        context, attn, coverage = attention_over_steps(
            self.attention, state["keys"], state["mask"], query_proj, state["coverage"],
            coverage=self.coverage, projected_keys=state["proj_keys"])              # eqs. (1)-(3), (10)-(11)
        if not self.coverage:
            context = context + 0.0 * self.attention.w_c.weight.sum()              # as in _attend
        state = {**state, "h": h_n.squeeze(0), "c": c_n.squeeze(0), "context": context[:, -1],
                 "coverage": coverage[:, -1] + attn[:, -1]}
        return state, {"h": states, "context": context, "x": emb, "attn": attn, "coverage": coverage}

    def _recur_fed(self, emb: torch.Tensor, state: dict):
        """Teacher forcing with input feeding: x_t = W_x [E y_{t-1}; h*_{t-1}] + b splits into
        W_x^E E y_{t-1} + b, one matrix product for all steps before the loop, and
        W_x^h h*_{t-1}, the only part a step must wait for."""
        E = emb.size(-1)
        W = self.input_proj.weight
        x_emb = nn.functional.linear(emb, W[:, :E], self.input_proj.bias)          # (batch, T, emb)
        W_ctx_t = W[:, E:].t()
        carried: dict[str, list] = {}
        for x_emb_t in x_emb.unbind(1):
            x = torch.addmm(x_emb_t, state["context"], W_ctx_t)                      # x_t
            h, c = self.cell(x, (state["h"], state["c"]))                            # s_t = h
            new_state, r = self._attend(h, x, state)
            state = {**new_state, "h": h, "c": c}
            for k, v in r.items():
                carried.setdefault(k, []).append(v)
        return state, {k: torch.stack(v, dim=1) for k, v in carried.items()}

    def readout(self, r: dict, state: dict, targets: torch.Tensor | None = None):
        """:meth:`PointerGenerator.readout <dca_course.models.pointer_generator.PointerGenerator.readout>`
        with eqs. (4) and (9) as one operation (:func:`~dca_course.fast.copying.log_final_distribution`).
        With the reference words ``targets`` (batch, T) (extended ids): log P(y*_t) alone, as
        ``info["target_log_probs"]``, and log P None; the same numbers, bit for bit, for far less work
        forward and backward.  The baseline (``pointer=False``) has no extended vocabulary to skip."""
        h, context, attn, coverage = r["h"], r["context"], r["attn"], r["coverage"]
        logits = self.out(self.out_hidden(torch.cat([h, context], dim=-1)))         # eq. (4), before softmax
        info = {"attn": attn, "coverage": coverage}
        if not self.pointer:
            return safe_log(torch.softmax(logits, dim=-1)), info
        p_gen = torch.sigmoid(self.p_gen_linear(torch.cat([context, h, r["x"]], dim=-1)))   # eq. (8)
        info["p_gen"] = p_gen.squeeze(-1)
        n_oov = state["oov_mask"].size(1)
        if targets is None:
            return log_final_distribution(logits, p_gen, attn, state["src_ext"], n_oov), info   # eqs. (4), (9)
        targets = extended_to_vocab(targets, self.vocab_size + n_oov, self.unk_id)
        _, info["target_log_probs"] = log_final_distribution(logits, p_gen, attn, state["src_ext"], n_oov,
                                                             targets, full=False)  # eqs. (4), (9), (6)
        return None, info

    def forward(self, batch, log_probs: bool = True) -> dict:
        """Teacher forcing (:func:`teacher_forcing`); ``log_probs=False``: ``target_log_probs``
        (batch, T), log P(y*_t) (eq. 6), instead of ``log_probs`` (None)."""
        return teacher_forcing(self, batch, log_probs)


def _with_sink(view: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """``view`` (a reshaped view of ``source``) marked, like ``source``, as keys prepared by
    :func:`~dca_course.fast.attention.step_keys`, so that the attention finds the shared sink."""
    sink = getattr(source, "_attention_grad_sink", None)
    if sink is not None:
        view._attention_grad_sink = sink
    return view


class FastDCA(DCA):
    """:class:`~dca_course.models.dca.DCA`, faster (see the module docstring)."""

    def encode(self, batch) -> dict:
        state = super().encode(batch)
        B, M, L, H = state["keys"].shape
        # the gradient that every step's word attention sends the keys, in one product after the
        # last step (see fast.attention.step_keys); the same values
        flat = step_keys(state["keys"].reshape(B * M, L, H))
        state["keys"] = _with_sink(flat.view(B, M, L, H), flat)
        return state

    def flat_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """:meth:`DCA.flat_keys <dca_course.models.dca.DCA.flat_keys>` with the gradient sink of
        :meth:`encode` kept, so that :meth:`DCA.recur <dca_course.models.dca.DCA.recur>` (eqs. 7-10)
        runs unchanged."""
        return _with_sink(super().flat_keys(keys), keys)

    def recur_sequence(self, emb: torch.Tensor, state: dict):
        """All T steps of :meth:`recur` (each step's LSTM input needs the previous context)."""
        return recur_loop(self, emb, state)

    def readout(self, r: dict, state: dict, targets: torch.Tensor | None = None):
        """:meth:`DCA.readout <dca_course.models.dca.DCA.readout>` with eqs. (14) and (15) as one
        distribution, the sum over agents taken first (:func:`~dca_course.fast.copying.log_mixed_distribution`);
        with the reference words ``targets`` (batch, T): log P(y*_t) alone, as
        ``info["target_log_probs"]``, and log P None."""
        logits, p_gen, info = self.readout_inputs(r)                                   # eqs. (11)-(13)
        word_attn, agent_attn = r["word_attn"], r["agent_attn"]
        n_oov = state["oov_mask"].size(1)
        g = agent_attn.unsqueeze(-1)                                                      # (..., M, 1)
        gen = (g * p_gen).sum(-2)                                                        # sum_a g_a p_a
        copy = (g * (1.0 - p_gen)) * word_attn                                           # g_a (1 - p_a) l_{a,i}
        if targets is None:
            return log_mixed_distribution(logits, gen, copy, state["src_ext"], n_oov), info
        targets = extended_to_vocab(targets, self.vocab_size + n_oov, self.unk_id)
        _, info["target_log_probs"] = log_mixed_distribution(logits, gen, copy, state["src_ext"], n_oov,
                                                             targets, full=False)
        return None, info

    def forward(self, batch, log_probs: bool = True) -> dict:
        """Teacher forcing (:func:`teacher_forcing`); ``log_probs=False``: ``target_log_probs``
        (batch, T), log P(y*_t), instead of ``log_probs`` (None)."""
        return teacher_forcing(self, batch, log_probs)


class FastExtendedDCA(ExtendedDCA, FastDCA):
    """:class:`~dca_course.models.extensions.ExtendedDCA` (its own vocabulary MLP), otherwise :class:`FastDCA`."""
