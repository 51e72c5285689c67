"""The attention of :mod:`dca_course.nn.attention`, computed faster: the same equations, the same
numbers (``tests/test_fast_paths.py`` holds them to it), fewer operations.

A decoder calls the attention once per output word, over every source position, so its few lines
are most of a summariser's training time on a CPU (``results/step_profile.md``).  Here:

* :class:`FastAdditiveAttention`: one step as one autograd operation with its backward pass written
  by hand (:class:`_FusedAdditiveAttention`), in place where it can, with tanh as 2 sigmoid(2x) - 1,
  because PyTorch's CPU tanh (MKL's) costs about three sigmoids on the AMD CPU the course was timed
  on (on an Intel Xeon it costs half of one, but a switch would change every trained number);
* :func:`step_keys`: keys whose gradient from all T steps is one matrix product after the last step;
* :func:`attention_over_steps`: all T steps of a decoder whose queries are known in advance (no
  input feeding) as one autograd operation.

:func:`dca_course.fast.accelerate` puts :class:`FastAdditiveAttention` in place of every
:class:`~dca_course.nn.attention.AdditiveAttention` of a model.
"""
from __future__ import annotations

import torch

from ..nn.attention import AdditiveAttention, masked_softmax


class _FusedAdditiveAttention(torch.autograd.Function):
    """One attention step with its backward pass written out (the equations of the module
    docstring; ``g_x`` is the gradient of the loss with respect to x):

        forward:   f = W_h h_j + (W_s s + b) + w_c c_j;   t = tanh(f);   e = t v
                   a = masked softmax(e);   context = sum_j a_j h_j
        backward:  g_a  += h g_context                     (every position's share of the context)
                   g_e   = a (g_a - sum_j a_j g_a_j)       (softmax; 0 where a is 0)
                   g_f   = (1 - t^2) g_e v^T               (tanh)
                   g_v   = sum_{b,j} g_e t,  g_{W_h h} = g_f,  g_{W_s s + b} = sum_j g_f,
                   g_c   = g_f w_c,  g_{w_c} = sum_{b,j} g_f c,  g_h = a g_context^T

    Autograd would record a dozen operations per step, each writing a (batch, src_len, attn)
    buffer; this records one and works in place.  On an AMD CPU, tanh costs about three sigmoids
    (see the module docstring), so it keeps sigma = sigmoid(2f) instead of t = 2 sigma - 1 =
    tanh(f): then e = 2 sigma v - sum(v), and 1 - t^2 = 4 sigma (1 - sigma).
    :meth:`AdditiveAttention.forward <dca_course.nn.attention.AdditiveAttention.forward>` is the
    definition; the tests hold the two to the same values and gradients.
    """

    @staticmethod
    def forward(ctx, proj_keys, query_proj, coverage, w_c, v, keys, mask):
        # 2f in one pass: 2 W_h h_j + 2 (W_s s + b), then + 2 w_c c_j in place
        f2 = torch.add(query_proj.unsqueeze(1) * 2.0, proj_keys, alpha=2.0)      # (batch, src_len, attn)
        if coverage is not None:
            f2.addcmul_(coverage.unsqueeze(-1), w_c * 2.0)
        sig = torch.sigmoid_(f2)                                                  # sigmoid(2f)
        scores = torch.matmul(sig, v * 2.0) - v.sum()                             # e = tanh(f) v
        weights = masked_softmax(scores, mask)                                    # (batch, src_len)
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)                # (batch, key_size)
        ctx.sink = getattr(keys, "_attention_grad_sink", None)
        ctx.save_for_backward(sig, weights, keys, v, w_c, coverage)
        return context, weights

    @staticmethod
    def backward(ctx, g_context, g_weights):
        sig, weights, keys, v, w_c, coverage = ctx.saved_tensors
        B, S, A = sig.shape
        g_a = torch.bmm(g_context.unsqueeze(1), keys.transpose(1, 2)).squeeze(1)   # (batch, src_len)
        if g_weights is not None:
            g_a = g_a + g_weights
        g_e = weights * (g_a - (weights * g_a).sum(-1, keepdim=True))               # softmax
        # g_f = (1 - t^2) g_e v^T = 4 sigma (1 - sigma) g_e v^T, in place of g_e v^T (one buffer fewer)
        g_f = (g_e * 4.0).unsqueeze(-1) * v                                          # (batch, src_len, attn)
        torch.ops.aten.sigmoid_backward(g_f, sig, grad_input=g_f)
        g_v = torch.mv(sig.reshape(-1, A).t(), g_e.reshape(-1)) * 2.0 - g_e.sum()  # t = 2 sigma - 1
        g_cov = g_wc = None
        if coverage is None:
            g_query = g_f.sum(1)
        else:   # sum_j g_f and sum_j c_j g_f in one pass over g_f
            weights_j = torch.stack([torch.ones_like(coverage), coverage], dim=1)    # (batch, 2, src_len)
            sums = torch.bmm(weights_j, g_f)                                         # (batch, 2, attn)
            g_query, g_wc = sums[:, 0], sums[:, 1].sum(0)
            g_cov = torch.matmul(g_f, w_c) if ctx.needs_input_grad[2] else None
        g_keys = None
        if ctx.needs_input_grad[5]:
            if ctx.sink is not None:           # summed over all steps later: see step_keys()
                ctx.sink.append((weights, g_context))
            else:
                g_keys = weights.unsqueeze(-1) * g_context.unsqueeze(1)
        return g_f, g_query, g_cov, g_wc, g_v, g_keys, None


class _AttentionOverSteps(torch.autograd.Function):
    """The attention of all T decoder steps when their queries are known in advance (a decoder
    without input feeding): eqs. (1)-(3) with coverage (10)-(11) as one autograd operation.

    Coverage makes the steps a recurrence, c^{t+1} = c^t + a^t, so the scores are computed step
    by step; but the contexts are not needed inside the loop, so all T of them are one matrix
    product A K (A the (T, src_len) attention of each example), and so are their backward
    passes.  Backward runs the steps in reverse, carrying g_c, the gradient of the loss with
    respect to c^t, which every later step adds to:

        g_a^t = g_A^t + g_c^{t+1}           (a^t enters c^{t+1})
        g_c^t = g_c^{t+1} + g_C^t + g_f^t w_c

    and otherwise the same equations as :class:`_FusedAdditiveAttention`.
    """

    @staticmethod
    def forward(ctx, proj_keys, query_proj, w_c, v, keys, mask, coverage0):
        B, T, _ = query_proj.shape
        v2, v_sum = v * 2.0, v.sum()
        w_c2 = w_c * 2.0 if w_c is not None else None
        q2 = (query_proj * 2.0).unsqueeze(2)                      # 2 (W_s s_t + b) of all steps, (batch, T, 1, attn)
        padding = ~mask
        lowest = torch.finfo(proj_keys.dtype).min
        S, n_attn = proj_keys.shape[1:]
        C = coverage0.new_empty(B, T, S)                                         # c^t of every step
        coverage, sigs, attns = coverage0, [], []
        for t in range(T):
            f2 = torch.add(q2[:, t], proj_keys, alpha=2.0)                       # 2f, (batch, src_len, attn)
            if w_c2 is not None:
                f2.addcmul_(coverage.unsqueeze(-1), w_c2)
            sig = torch.sigmoid_(f2)
            scores = torch.mv(sig.view(-1, n_attn), v2).view(B, S).sub_(v_sum)   # e = tanh(f) v
            a = torch.softmax(scores.masked_fill_(padding, lowest), dim=-1).masked_fill_(padding, 0.0)
            sigs.append(sig)                                                     # (masked_softmax, inlined)
            attns.append(a)
            C[:, t] = coverage
            coverage = coverage + a                                                # eq. (10)
        A = torch.stack(attns, dim=1)                                              # (batch, T, src_len)
        context = torch.bmm(A, keys)                                               # (batch, T, key_size)
        ctx.sigs = sigs
        ctx.save_for_backward(A, C, keys, v, w_c)
        return context, A, C

    @staticmethod
    def backward(ctx, g_context, g_A, g_C):
        A, C, keys, v, w_c = ctx.saved_tensors
        sigs = ctx.sigs
        B, T, S = A.shape
        g_A_total = torch.bmm(g_context, keys.transpose(1, 2))                    # (batch, T, src_len)
        if g_A is not None:
            g_A_total = g_A_total + g_A
        g_keys = torch.bmm(A.transpose(1, 2), g_context)                         # (batch, src_len, key_size)
        # each step's rows, made contiguous once, and the step's (batch, src_len, attn) work done in
        # two buffers that stay in the cache (a new tensor per step would not)
        A_t, g_A_t = A.transpose(0, 1).contiguous(), g_A_total.transpose(0, 1).contiguous()
        C_t = C.transpose(0, 1).reshape(T, B * S) if w_c is not None else None
        g_C_t = g_C.transpose(0, 1).contiguous() if g_C is not None else None
        g_pk, g_f = torch.zeros_like(sigs[0]), torch.empty_like(sigs[0])
        n_attn = g_f.size(-1)
        g_f_rows = g_f.view(-1, n_attn)                                            # (batch * src_len, attn)
        g_q = A.new_empty(T, B, n_attn)
        g_v = torch.zeros_like(v)
        g_wc = torch.zeros_like(w_c) if w_c is not None else None
        g_c = A.new_zeros(B, S)                                                    # d loss / d c^{t+1}
        v4 = v * 4.0
        for t in range(T - 1, -1, -1):
            a, sig = A_t[t], sigs[t]
            g_a = g_A_t[t] + g_c
            g_e = a * (g_a - (a * g_a).sum(-1, keepdim=True))
            torch.mul(g_e.unsqueeze(-1), v4, out=g_f)
            torch.ops.aten.sigmoid_backward(g_f, sig, grad_input=g_f)          # (1 - t^2) g_e v^T
            g_pk += g_f
            torch.sum(g_f, 1, out=g_q[t])
            g_v += torch.mv(sig.view(-1, n_attn).t(), g_e.view(-1)) * 2.0 - g_e.sum()
            if g_C_t is not None:
                g_c = g_c + g_C_t[t]
            if w_c is not None:
                g_wc += torch.mv(g_f_rows.t(), C_t[t])
                g_c = g_c + torch.mv(g_f_rows, w_c).view(B, S)
        return g_pk, g_q.transpose(0, 1).contiguous(), g_wc, g_v, g_keys, None, g_c


def attention_over_steps(attention: AdditiveAttention, keys: torch.Tensor, mask: torch.Tensor,
                         query_proj: torch.Tensor, coverage0: torch.Tensor, *,
                         coverage: bool, projected_keys: torch.Tensor | None = None):
    """All T steps of an attention whose queries are known in advance: ``query_proj`` (batch, T,
    attn) = W_s s_t + b for every step.  Returns ``(context, attn, coverage)``: (batch, T,
    key_size), (batch, T, src_len) and c^t, the attention before step t (batch, T, src_len);
    with ``coverage=False`` the scores ignore c^t (it is still returned, for the coverage loss
    of a model trained without it).  The same numbers as T calls of ``attention``
    (``tests/test_fast_paths.py``)."""
    proj = attention.project_keys(keys) if projected_keys is None else projected_keys
    w_c = attention.w_c.weight.view(-1) if coverage else None
    if coverage and w_c is None:
        raise ValueError("coverage asked of an attention built without coverage=True")
    return _AttentionOverSteps.apply(proj, query_proj, w_c, attention.v.weight.view(-1), keys,
                                     mask.to(torch.bool), coverage0)


class _StepKeys(torch.autograd.Function):
    """The identity on the keys, whose backward adds sum_t a^t (g_context^t)^T, one matrix
    product over the steps that :class:`_FusedAdditiveAttention` collected."""

    @staticmethod
    def forward(ctx, keys, sink):
        ctx.set_materialize_grads(False)
        ctx.sink = sink
        return keys.view_as(keys)

    @staticmethod
    def backward(ctx, g):
        sink = ctx.sink
        if not sink:
            return g, None
        A = torch.stack([a for a, _ in sink], dim=2)                # (batch, src_len, steps)
        G = torch.stack([gc for _, gc in sink], dim=1)              # (batch, steps, key_size)
        sink.clear()                                                # a second backward refills it
        total = torch.bmm(A, G)                                     # sum_t a^t (g_context^t)^T
        return (total if g is None else g + total), None


def step_keys(keys: torch.Tensor) -> torch.Tensor:
    """The keys a decoder attends to at every step, prepared for training: the same values, but
    the gradient that T steps send them through the context, sum_t a^t (g_context^t)^T, is
    computed once after the last step's backward, as one matrix product, instead of T outer
    products written and added one at a time.  (Returns ``keys`` itself where no gradient is
    needed.)"""
    if not (torch.is_grad_enabled() and keys.requires_grad):
        return keys
    sink: list = []
    out = _StepKeys.apply(keys, sink)
    out._attention_grad_sink = sink
    return out


class FastAdditiveAttention(AdditiveAttention):
    """:class:`~dca_course.nn.attention.AdditiveAttention` (the same parameters) whose forward pass is
    one autograd operation with a hand-written backward (:class:`_FusedAdditiveAttention`)."""

    def forward(self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor, *,
                projected_keys: torch.Tensor | None = None, coverage: torch.Tensor | None = None):
        """As :meth:`AdditiveAttention.forward <dca_course.nn.attention.AdditiveAttention.forward>`:
        returns ``(context, weights)``, (batch, key_size) and (batch, src_len)."""
        if coverage is not None and self.w_c is None:
            raise ValueError("coverage given to an attention built without coverage=True")
        proj = self.project_keys(keys) if projected_keys is None else projected_keys
        w_c = self.w_c.weight.view(-1) if coverage is not None else None
        return _FusedAdditiveAttention.apply(proj, self.W_s(query), coverage, w_c,
                                             self.v.weight.view(-1), keys, mask.to(torch.bool))
