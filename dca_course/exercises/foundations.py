"""Self-checks for the notebooks' exercises.

Each ``check_*`` function takes what a learner wrote (usually a class), runs it next to the
library's own version on random inputs, prints one clear PASS or FAIL line (with a hint when
it can guess what went wrong) and returns ``True`` or ``False``.  The checks draw their random
numbers from a private generator, so calling one does not change the notebook's random state.
"""
from __future__ import annotations

import torch
from torch import nn

from ..fast.attention import FastAdditiveAttention, attention_over_steps
from ..nn.attention import AdditiveAttention, masked_softmax
from ..nn.gru import GRU, GRUCell
from .guard import LIBRARY, AnswerCalled, Answers, guarded

__all__ = ["check_gru_cell"]

_GRU_PARAMS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
# A GRU cell's answer: the library's cells and PyTorch's fused GRU step (torch.nn.GRUCell calls _VF.gru_cell).
GRU_ANSWERS = Answers(functions=(GRUCell, GRU, nn.GRUCell, nn.GRU),
                      ops={"gru_cell": f"PyTorch's fused GRU step, {LIBRARY}",
                           "gru": f"PyTorch's fused GRU, {LIBRARY}"})
# Attention's answer: the library's attention and masked softmax, and PyTorch's attention.
ATTENTION_ANSWERS = Answers(functions=(AdditiveAttention, FastAdditiveAttention, masked_softmax, attention_over_steps,
                                       nn.MultiheadAttention),
                            ops={"scaled_dot_product_attention": f"PyTorch's attention, {LIBRARY}"})


def _say(ok: bool, what: str, message: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {what}: {message}")
    return ok


def _name(obj) -> str:
    return getattr(obj, "__name__", type(obj).__name__)


def _call(fn, *args, call: str | None = None, answers: Answers | None = None):
    """``(fn(*args), None)``, or ``(None, the FAIL line's message)`` when the learner's code raised or
    called one of ``answers`` (the library's own answer); ``call`` names the call in that message
    (default ``name(...)``)."""
    try:
        return guarded(answers, fn, *args), None
    except AnswerCalled as exc:
        return None, str(exc)
    except NotImplementedError:
        return None, "it is not implemented yet"
    except Exception as exc:  # a learner's bug: report it rather than raise
        return None, f"{call or _name(fn) + '(...)'} raised {type(exc).__name__}: {exc}"


def _same(got, want: torch.Tensor, atol: float = 1e-5) -> bool:
    """``got`` is a tensor of ``want``'s shape and values (within ``atol``)."""
    return (isinstance(got, torch.Tensor) and got.shape == want.shape
            and torch.allclose(got.detach().to(want.dtype), want, atol=atol))


def _first_match(got, guesses, atol: float = 1e-5) -> str:
    """" Hint: ..." for the first wrong answer in ``guesses`` [(tensor, hint)] that ``got`` equals, else ""."""
    for wrong, hint in guesses:
        if isinstance(wrong, torch.Tensor) and _same(got, wrong, atol):
            return " Hint: " + hint + "."
    return ""


def _gru_step(p: dict, x: torch.Tensor, h: torch.Tensor, *, reset_after: bool, swap_z: bool = False,
              order: str = "rzn") -> torch.Tensor:
    """A plain GRU step used only to guess a learner's mistake (other reset form, z swapped, gate order)."""
    gi = dict(zip(order, (x @ p["weight_ih"].T + p["bias_ih"]).chunk(3, -1)))
    w_hh = dict(zip(order, p["weight_hh"].chunk(3, 0)))
    b_hh = dict(zip(order, p["bias_hh"].chunk(3, 0)))
    r = torch.sigmoid(gi["r"] + h @ w_hh["r"].T + b_hh["r"])
    z = torch.sigmoid(gi["z"] + h @ w_hh["z"].T + b_hh["z"])
    if reset_after:
        n = torch.tanh(gi["n"] + r * (h @ w_hh["n"].T + b_hh["n"]))
    else:
        n = torch.tanh(gi["n"] + (r * h) @ w_hh["n"].T + b_hh["n"])
    if swap_z:
        z = 1 - z
    return z * h + (1 - z) * n


def _guess_gru_mistake(p: dict, x: torch.Tensor, h: torch.Tensor, got: torch.Tensor, reset_after: bool,
                       atol: float) -> str:
    form = {True: "PyTorch's reset-after form, n = tanh(W_n x + b_in + r * (U_n h + b_hn))",
            False: "the paper's eq. (8), n = tanh(W_n x + b_in + U_n (r * h) + b_hn)"}
    guesses = [
        (dict(reset_after=not reset_after),
         f"your cell computes {form[not reset_after]}, but this check asked for {form[reset_after]} "
         f"(pass reset_after={not reset_after} to check that form)"),
        (dict(reset_after=reset_after, swap_z=True),
         "z and 1 - z are swapped: eq. (7) is h_t = z * h_{t-1} + (1 - z) * n (z = 1 keeps the old state)"),
        (dict(reset_after=reset_after, order="zrn"),
         "the gates are read in the wrong order: the rows of weight_ih/weight_hh are [r; z; n]"),
    ]
    with torch.no_grad():
        for kwargs, hint in guesses:
            if torch.allclose(_gru_step(p, x, h, **kwargs), got, atol=atol):
                return " Hint: " + hint + "."
    return ""


def check_gru_cell(cell_cls, *, reset_after: bool = True, input_size: int = 5, hidden_size: int = 7,
                   batch: int = 4, steps: int = 6, seed: int = 0, atol: float = 1e-5) -> bool:
    """Compare a learner's GRU cell class with :class:`dca_course.nn.GRUCell` on random inputs.

    ``cell_cls(input_size, hidden_size)`` must build a module holding, in PyTorch's layout,
    ``weight_ih`` (3H, I), ``weight_hh`` (3H, H), ``bias_ih`` (3H,) and ``bias_hh`` (3H,), rows
    ordered ``[r; z; n]``, and ``forward(x, h)`` must map x (batch, I) and h (batch, H) to the
    new state (batch, H).  ``reset_after=True`` asks for PyTorch's (cuDNN's) form of eq. (8);
    ``reset_after=False`` for the paper's.  The library's weights are copied into the
    learner's cell; then one step, a run of ``steps`` steps, and the gradients of all four
    weights are compared.  Prints PASS or FAIL (with a hint when the mistake is a common
    one) and returns ``True`` or ``False``.
    """
    name = getattr(cell_cls, "__name__", repr(cell_cls))
    what = f"check_gru_cell({name}, reset_after={reset_after})"

    with torch.random.fork_rng(devices=[]):     # leave the caller's random state as it was
        torch.manual_seed(seed)
        ref = GRUCell(input_size, hidden_size, reset_after=reset_after)
        x_seq = torch.randn(batch, steps, input_size)
        h0 = torch.randn(batch, hidden_size)
        try:
            cell = guarded(GRU_ANSWERS, cell_cls, input_size, hidden_size)
        except AnswerCalled as exc:
            return _say(False, what, str(exc))
        except NotImplementedError:
            return _say(False, what, f"{name}({input_size}, {hidden_size}) is not implemented yet")
        except Exception as exc:  # a learner's bug: report it rather than raise
            return _say(False, what, f"{name}({input_size}, {hidden_size}) raised {type(exc).__name__}: {exc}")
        return _compare_gru_cell(cell, ref, x_seq, h0, what, reset_after, atol)


def _compare_gru_cell(cell, ref, x_seq, h0, what, reset_after, atol) -> bool:
    input_size, hidden_size = ref.input_size, ref.hidden_size
    H = hidden_size
    shapes = {"weight_ih": (3 * H, input_size), "weight_hh": (3 * H, H), "bias_ih": (3 * H,), "bias_hh": (3 * H,)}
    for pname, shape in shapes.items():
        p = getattr(cell, pname, None)
        if not isinstance(p, torch.Tensor):
            return _say(False, what, f"the cell has no tensor attribute {pname!r} (expected shape {shape})")
        if tuple(p.shape) != shape:
            return _say(False, what, f"{pname} has shape {tuple(p.shape)}, expected {shape} "
                                     f"(rows [r; z; n] stacked, as in torch.nn.GRUCell)")
        if not p.requires_grad:
            return _say(False, what, f"{pname} does not require grad: make it an nn.Parameter")
    with torch.no_grad():
        for pname in _GRU_PARAMS:
            getattr(cell, pname).copy_(getattr(ref, pname))
    params = {pname: getattr(ref, pname).detach() for pname in _GRU_PARAMS}

    def step(module, x, h):
        out = guarded(GRU_ANSWERS, module, x, h)
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"forward(x, h) should return the new state, a tensor (batch, hidden); "
                            f"it returned a {type(out).__name__}")
        if tuple(out.shape) != tuple(h.shape):
            raise TypeError(f"forward(x, h) returned shape {tuple(out.shape)}, expected (batch, hidden) = "
                            f"{tuple(h.shape)}")
        return out

    # 1. one step from a random state
    x = x_seq[:, 0]
    try:
        got = step(cell, x, h0)
    except AnswerCalled as exc:
        return _say(False, what, str(exc))
    except NotImplementedError:
        return _say(False, what, "forward is not implemented yet")
    except Exception as exc:
        return _say(False, what, f"forward raised {type(exc).__name__}: {exc}")
    want = ref(x, h0)
    if not torch.allclose(got, want, atol=atol):
        diff = (got - want).abs().max().item()
        hint = _guess_gru_mistake(params, x, h0, got.detach(), reset_after, atol)
        return _say(False, what, f"one step differs from dca_course.nn.GRUCell by up to {diff:.3g}.{hint}")

    # 2. several steps, feeding the state back in, then the gradients of every weight
    try:
        h_got, h_want = h0, h0
        for t in range(x_seq.size(1)):
            h_got, h_want = step(cell, x_seq[:, t], h_got), ref(x_seq[:, t], h_want)
            if not torch.allclose(h_got, h_want, atol=atol):
                diff = (h_got - h_want).abs().max().item()
                return _say(False, what, f"step {t + 1} of a {x_seq.size(1)}-step run differs by up to {diff:.3g}")
        if not h_got.requires_grad:
            return _say(False, what, "the new state does not require grad: does forward detach something, "
                                     "or use .data?")
        weights = torch.linspace(-1, 1, H)
        (h_got * weights).sum().backward()
        (h_want * weights).sum().backward()
    except AnswerCalled as exc:
        return _say(False, what, str(exc))
    except Exception as exc:
        return _say(False, what, f"a multi-step run raised {type(exc).__name__}: {exc}")
    for pname in _GRU_PARAMS:
        g_got, g_want = getattr(cell, pname).grad, getattr(ref, pname).grad
        if g_got is None:
            return _say(False, what, f"no gradient reached {pname}: does forward detach something, "
                                     f"or use .data?")
        if not torch.allclose(g_got, g_want, atol=10 * atol):
            diff = (g_got - g_want).abs().max().item()
            return _say(False, what, f"the gradient of {pname} differs by up to {diff:.3g}")
    return _say(True, what, f"matches dca_course.nn.GRUCell on one step, a {x_seq.size(1)}-step run "
                            f"and the gradients of all four weights")


# -- notebook 02: attention -------------------------------------------------------------------
def _attention_inputs(batch: int, src_len: int, query_size: int, key_size: int, seed: int):
    """Random query and keys, and a mask whose rows have lengths from src_len down to 1."""
    gen = torch.Generator().manual_seed(seed)
    query = torch.randn(batch, query_size, generator=gen)
    keys = torch.randn(batch, src_len, key_size, generator=gen)
    lengths = torch.linspace(src_len, 1, batch).round().long()
    mask = torch.arange(src_len)[None, :] < lengths[:, None]
    keys = keys * mask.unsqueeze(-1)          # like an encoder's output: zeros at padding
    return query, keys, mask


def _call_attention(attention, query, keys, mask):
    out = guarded(ATTENTION_ANSWERS, attention, query, keys, mask)
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"attention(query, keys, mask) should return (context, weights); "
                        f"it returned a {type(out).__name__}")
    context, weights = out
    B, S, K = keys.shape
    if tuple(context.shape) != (B, K):
        raise TypeError(f"context has shape {tuple(context.shape)}, expected (batch, key_size) = {(B, K)}"
                        + (" (did weights @ keys broadcast (batch, src_len) against every example? "
                           "use torch.bmm(weights.unsqueeze(1), keys).squeeze(1))" if context.dim() == 3 else ""))
    if tuple(weights.shape) != (B, S):
        raise TypeError(f"weights have shape {tuple(weights.shape)}, expected (batch, src_len) = {(B, S)}")
    return context, weights


_SCORES = {"dot": "the dot product e_j = s . h_j", "scaled_dot": "the scaled dot product e_j = s . h_j / sqrt(d)",
           "any": "any scoring function"}


def _dot_form_hint(weights, query, keys, mask, scores: str, atol: float) -> str | None:
    """None when ``weights`` are the masked softmax of the (scaled) dot products, else the FAIL message."""
    dots = torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)                  # (batch, src_len)
    scale = keys.size(-1) ** 0.5

    def soft(e):
        return torch.softmax(e.masked_fill(~mask, torch.finfo(e.dtype).min), -1).masked_fill(~mask, 0.0)

    want = soft(dots / scale if scores == "scaled_dot" else dots)
    if torch.allclose(weights, want, atol=atol):
        return None
    guesses = [(soft(-dots), "the sign is flipped: the scores are -s . h_j, so the least similar key gets the most "
                             "weight"),
               (soft(dots / scale), "the scores are divided by sqrt(d): that is exercise 3's scaled form "
                                    "(check it with scores='scaled_dot')"),
               (soft(dots), "these are the plain dot products: divide them by sqrt(d), the key size")]
    hint = next((h for w, h in guesses if torch.allclose(weights, w, atol=atol)),
                "the weights are not a softmax of the dot products: additive scores v^T tanh(W s + U h_j) or a "
                "bilinear s^T W h_j are other forms; this exercise asks for e_j = s^T h_j")
    return f"masking, normalising and eq. (5) are right, but the scores are not {_SCORES[scores]}. Hint: {hint}."


def check_attention(attention, *, scores: str = "dot", query_size: int = 6, key_size: int = 6, batch: int = 5,
                    src_len: int = 7, check_empty: bool = True, seed: int = 0, atol: float = 1e-5) -> bool:
    """Check that an attention mechanism masks and normalises its weights as eqs. (5)-(6) ask, and
    scores as the exercise asks: ``scores="dot"`` (exercise 02.1, Luong's e_j = s . h_j, the default),
    ``"scaled_dot"`` (e_j = s . h_j / sqrt(d)) or ``"any"`` (the notebook's own additive attention).
    The library's attention modules, masked softmax and PyTorch's attention are refused: they are the
    answer, not a way to it.

    ``attention(query, keys, mask)`` - a module or a function - takes query (batch, query_size),
    keys (batch, src_len, key_size) and a bool mask (batch, src_len) that is True at real
    tokens, and returns ``(context, weights)``: (batch, key_size) and (batch, src_len).  Any
    scoring function passes (additive, dot-product, general...); what is checked is what
    every attention must do:

    * the weights are >= 0, sum to 1 over the real positions, and are exactly 0 on padding;
    * the context is the weighted average of the keys, eq. (5);
    * the result for an example depends neither on how much padding follows it (whatever the
      padded keys hold) nor on the other examples of its batch;
    * gradients reach the query and the keys;
    * with ``check_empty``, a row that is all padding gives zero weights and no NaN.

    Prints PASS or FAIL (with a hint) and returns ``True`` or ``False``.
    """
    name = getattr(attention, "__name__", type(attention).__name__)
    what = f"check_attention({name}, scores={scores!r})"
    if scores not in _SCORES:
        raise ValueError(f"scores must be one of {', '.join(map(repr, _SCORES))}, not {scores!r}")
    query, keys, mask = _attention_inputs(batch, src_len, query_size, key_size, seed)
    try:
        context, weights = _call_attention(attention, query, keys, mask)
    except AnswerCalled as exc:
        return _say(False, what, str(exc))
    except NotImplementedError:
        return _say(False, what, "it is not implemented yet")
    except Exception as exc:  # a learner's bug: report it rather than raise
        return _say(False, what, f"attention(query, keys, mask) raised {type(exc).__name__}: {exc}")
    context, weights = context.detach(), weights.detach()
    if not (torch.isfinite(weights).all() and torch.isfinite(context).all()):
        return _say(False, what, "the weights or the context hold NaN or inf")
    if (weights < 0).any():
        return _say(False, what, f"a weight is negative ({weights.min().item():.3g}): normalise the scores "
                                 f"with a softmax, eq. (6)")
    on_padding = weights.masked_fill(mask, 0.0).abs().max().item()
    if on_padding != 0.0:
        return _say(False, what, f"padding gets attention (up to {on_padding:.3g}): fill the masked scores "
                                 f"with a very negative number before the softmax, and set their weights to 0")
    sums = weights.sum(-1)
    if not torch.allclose(sums, torch.ones_like(sums), atol=atol):
        hint = (" Is the softmax taken over the batch (dim=0) instead of the source positions (dim=-1)?"
                if torch.allclose(weights.sum(0), torch.ones_like(weights.sum(0)), atol=atol) else
                " Were the masked weights zeroed after the softmax without renormalising?")
        return _say(False, what, f"the weights of a row sum to {sums.min().item():.4f}..{sums.max().item():.4f}, "
                                 f"not 1.{hint}")
    want = (weights.unsqueeze(-1) * keys).sum(1)
    if not torch.allclose(context, want, atol=atol):
        return _say(False, what, "the context is not the weighted sum of the keys, eq. (5): "
                                 "c = sum_j a_j h_j, e.g. torch.bmm(weights.unsqueeze(1), keys).squeeze(1)")
    if scores != "any":
        problem = _dot_form_hint(weights, query, keys, mask, scores, atol)
        if problem:
            return _say(False, what, problem)

    # The same examples with 3 more padded positions whose keys hold garbage.
    gen = torch.Generator().manual_seed(seed + 1)
    junk = 100 * torch.randn(batch, src_len + 3, key_size, generator=gen)
    wide_mask = torch.cat([mask, torch.zeros(batch, 3, dtype=torch.bool)], dim=1)
    wide_keys = torch.where(wide_mask.unsqueeze(-1), torch.cat([keys, junk[:, src_len:]], dim=1), junk)
    try:
        with torch.no_grad():
            c_wide, w_wide = _call_attention(attention, query, wide_keys, wide_mask)
            alone = [_call_attention(attention, query[b:b + 1], keys[b:b + 1, :n], mask[b:b + 1, :n])
                     for b, n in enumerate(mask.sum(1).tolist())]
    except AnswerCalled as exc:
        return _say(False, what, str(exc))
    except Exception as exc:
        return _say(False, what, f"more padding, or a batch of one example, raised {type(exc).__name__}: {exc}")
    if not (torch.allclose(c_wide, context, atol=atol) and torch.allclose(w_wide[:, :src_len], weights, atol=atol)):
        return _say(False, what, "the result changes when more padding (holding other values) follows an example: "
                                 "the scores of padded positions must not reach the softmax")
    for b, (c_one, w_one) in enumerate(alone):
        n = w_one.size(1)
        if not (torch.allclose(c_one[0], context[b], atol=atol) and torch.allclose(w_one[0], weights[b, :n], atol=atol)):
            return _say(False, what, f"example {b} alone gives another result than in its batch: "
                                     f"do the examples of a batch mix (a matmul that broadcasts, a softmax over dim=0)?")

    # Gradients must reach the query and the keys.
    q, k = query.clone().requires_grad_(True), keys.clone().requires_grad_(True)
    try:
        c, _ = _call_attention(attention, q, k, mask)
        if not c.requires_grad:
            return _say(False, what, "the context does not require grad, so no gradient reaches the query or "
                                     "the keys: does forward detach something, or use .data?")
        (c * torch.linspace(-1, 1, key_size)).sum().backward()
    except AnswerCalled as exc:
        return _say(False, what, str(exc))
    except Exception as exc:
        return _say(False, what, f"backward raised {type(exc).__name__}: {exc}")
    for label, t in (("query", q), ("keys", k)):
        if t.grad is None or not torch.isfinite(t.grad).all() or t.grad.abs().sum() == 0:
            return _say(False, what, f"no useful gradient reaches the {label}: does forward detach something, "
                                     f"or use .data?")
    done = ("scores are " + _SCORES[scores] + "; " if scores != "any" else "") + \
        "weights >= 0, summing to 1, exactly 0 on padding; context is eq. (5); results do not depend on padding " \
        "or batch-mates; gradients flow"

    if check_empty:
        empty = mask.clone()
        empty[-1] = False
        q, k = query.clone().requires_grad_(True), keys.clone().requires_grad_(True)
        try:
            c, w = _call_attention(attention, q, k, empty)
            c.sum().backward()
        except AnswerCalled as exc:
            return _say(False, what, str(exc))
        except Exception as exc:
            return _say(False, what, f"a row that is all padding raised {type(exc).__name__}: {exc}")
        bad = not (torch.isfinite(c).all() and torch.isfinite(w).all() and torch.isfinite(q.grad).all()
                   and torch.isfinite(k.grad).all())
        if bad or w[-1].abs().max().item() != 0.0:
            return _say(False, what, "a row that is all padding gives NaN or nonzero weights: fill masked scores with "
                                     "torch.finfo(scores.dtype).min rather than -inf, and zero the masked weights after "
                                     "the softmax (or pass check_empty=False)")
        done += "; an all-padding row gives zeros"
    return _say(True, what, done)


__all__.append("check_attention")


# -- notebook 03: Dynamic Memory Networks ------------------------------------------------------
def check_dmn_features(features, *, hidden_size: int = 5, batch: int = 3, facts: int = 4, seed: int = 0,
                       atol: float = 1e-5) -> bool:
    """Compare a learner's feature vector ``features(c, m, q, W_b)`` with the DMN's
    (:func:`dca_course.models.dmn_gate.dmn_features`, Kumar et al. section 2.3)::

        z(c, m, q) = [c, m, q, c*q, c*m, |c-q|, |c-m|, c^T W_b q, c^T W_b m]

    c is (batch, facts, H), m and q (batch, H), W_b (H, H); the answer must be
    (batch, facts, 7H + 2).  Prints PASS or FAIL, naming the first of the nine parts that
    differs, and returns ``True`` or ``False``.
    """
    from ..models.dmn_gate import dmn_features

    name = getattr(features, "__name__", type(features).__name__)
    what = f"check_dmn_features({name})"
    H = hidden_size
    gen = torch.Generator().manual_seed(seed)
    c = torch.randn(batch, facts, H, generator=gen)
    m, q = torch.randn(batch, H, generator=gen), torch.randn(batch, H, generator=gen)
    W = torch.randn(H, H, generator=gen)
    try:
        got = guarded(Answers(functions=(dmn_features,)), features, c, m, q, W)
    except AnswerCalled as exc:
        return _say(False, what, str(exc))
    except NotImplementedError:
        return _say(False, what, "it is not implemented yet")
    except Exception as exc:  # a learner's bug: report it rather than raise
        return _say(False, what, f"features(c, m, q, W_b) raised {type(exc).__name__}: {exc}")
    want = dmn_features(c, m, q, W)
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(want.shape):
        shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        return _say(False, what, f"got {shape}, expected shape (batch, facts, 7H + 2) = {tuple(want.shape)}")
    names = ["c", "m", "q", "c*q", "c*m", "|c-q|", "|c-m|", "c^T W_b q", "c^T W_b m"]
    widths = [H] * 7 + [1, 1]
    start = 0
    for part, width in zip(names, widths):
        a, b = got[..., start: start + width], want[..., start: start + width]
        if not torch.allclose(a, b, atol=atol):
            hint = ""
            if part.startswith("c^T") and torch.allclose(a, (want[..., -1:] if part.endswith("q") else want[..., -2:-1]), atol=atol):
                hint = " (the two bilinear terms are swapped)"
            elif part.startswith("c^T"):
                hint = " (check the bilinear form: c^T W_b q is ((c @ W_b) * q).sum(-1), one number per fact)"
            return _say(False, what, f"part {names.index(part) + 1} ({part}, columns {start}..{start + width - 1}) "
                                     f"differs from the DMN's{hint}")
        start += width
    return _say(True, what, "all nine parts match, in order, for every fact of every example")


__all__.append("check_dmn_features")
