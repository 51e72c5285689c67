"""Self-checks for the exercises of notebooks 01-04 (beyond those in :mod:`.foundations`).

Each ``check_*`` takes what a learner wrote, runs it next to the library's own version on inputs
drawn from a private ``torch.Generator``, prints one ``PASS ...`` or ``FAIL ...`` line (naming the
likely mistake when it recognises one) and returns ``True`` or ``False``.  A bug in the learner's
code is reported, never raised.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .foundations import _call, _first_match, _name, _say
from .guard import AnswerCalled, Answers, guarded

__all__ = ["check_perplexity", "check_teacher_forcing", "check_episode", "check_copy_scores",
           "check_selective_read"]


# -- notebook 01: a language model's perplexity --------------------------------------------------
def check_perplexity(perplexity, *, batch: int = 4, length: int = 7, vocab: int = 6, seed: int = 0,
                     rtol: float = 1e-4) -> bool:
    """Check ``perplexity(log_probs, targets, mask)``: e to the mean negative log-likelihood of the
    scored tokens.

    log_probs (batch, len, V) are log-softmax outputs, targets (batch, len) token ids, mask
    (batch, len) bool, True where a token is scored.  The answer is one number (a float or a
    0-d tensor): ``exp(sum of -log p(target) over scored tokens / number of scored tokens)``.
    """
    what = f"check_perplexity({_name(perplexity)})"
    gen = torch.Generator().manual_seed(seed)
    log_probs = torch.log_softmax(2 * torch.randn(batch, length, vocab, generator=gen), dim=-1)
    targets = torch.randint(vocab, (batch, length), generator=gen)
    lengths = torch.tensor([length, length - 2, 3, 1][:batch])
    mask = torch.arange(length)[None, :] < lengths[:, None]          # rows of different lengths
    from ..losses import reduce_tokens, sequence_nll

    try:
        got = guarded(Answers(functions=(sequence_nll, reduce_tokens)), perplexity, log_probs, targets, mask)
        if not isinstance(got, (int, float, torch.Tensor)) or isinstance(got, bool) or \
                (isinstance(got, torch.Tensor) and got.numel() != 1):
            return _say(False, what, f"it returned {type(got).__name__}"
                                     f"{' of shape ' + str(tuple(got.shape)) if isinstance(got, torch.Tensor) else ''}"
                                     f"; expected one number (a float or a 0-d tensor)")
        got = float(got)
    except AnswerCalled as exc:
        return _say(False, what, str(exc))
    except NotImplementedError:
        return _say(False, what, "it is not implemented yet")
    except Exception as exc:  # a learner's bug: report it rather than raise
        return _say(False, what, f"perplexity(log_probs, targets, mask) raised {type(exc).__name__}: {exc}")
    nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)   # (batch, len)
    m = mask.float()
    mean_nll = ((nll * m).sum() / m.sum()).item()
    want = math.exp(mean_nll)
    if math.isclose(got, want, rel_tol=rtol):
        return _say(True, what, f"exp(mean NLL over the {int(m.sum())} scored tokens) = {want:.4f}")
    per_row = ((nll * m).sum(1) / m.sum(1)).mean().item()
    guesses = [
        (mean_nll, "that is the mean negative log-likelihood itself: perplexity is its exponential"),
        (math.exp(nll.mean().item()), "unscored (padded) positions are counted: average over mask.sum() "
                                      "tokens, not over every position"),
        (math.exp(-mean_nll), "the sign is flipped: the loss is -log p(target), so perplexity >= 1"),
        (((nll.exp() * m).sum() / m.sum()).item(), "that is the mean of exp(NLL) per token: take the exponential "
                                                     "of the mean, not the mean of the exponentials"),
        (math.exp(per_row), "each row is averaged first, so short rows weigh as much as long ones: "
                            "average over all scored tokens at once"),
        (2 ** mean_nll, "base 2: log_softmax gives natural logarithms, so use e ** loss (math.exp)"),
    ]
    hint = next((" Hint: " + h + "." for value, h in guesses if math.isclose(got, value, rel_tol=rtol)), "")
    return _say(False, what, f"got {got:.4f}, expected {want:.4f}.{hint}")


# -- notebook 02: teacher forcing through the decoder step ---------------------------------------
def _tiny_seq2seq(seed: int):
    from ..data import Example, Vocab
    from ..data.batching import collate
    from ..models.seq2seq import Seq2Seq

    gen = torch.Generator().manual_seed(seed)
    letters = list("abcdefgh")
    vocab = Vocab(letters)

    def word(n):
        return [letters[int(i)] for i in torch.randint(len(letters), (n,), generator=gen)]

    examples = [Example(word(n), word(k)) for n, k in [(7, 5), (4, 3), (6, 1), (2, 4)]]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Seq2Seq(len(vocab), emb_size=6, hidden_size=8).eval()
    return model, collate(examples, vocab)


def _run_steps(model, batch, inputs=None, *, own: bool = False, reset: bool = False):
    state = model.encode(batch)
    start = dict(state)
    y = batch.tgt_in[:, 0]
    out = []
    for t in range(batch.tgt_in.size(1)):
        if inputs is not None:
            y = inputs[:, t]
        lp, state, _ = model.step(y, start if reset else state)
        out.append(lp)
        if own:
            y = lp.argmax(-1)
    return torch.stack(out, 1)


def check_teacher_forcing(forward, *, seed: int = 0, atol: float = 1e-5) -> bool:
    """Check ``forward(model, batch)``: teacher forcing, the model's ``step`` run along ``batch.tgt_in``.

    ``model`` is a :class:`dca_course.models.Seq2Seq` (``encode`` / ``step``), ``batch`` a
    ``Seq2SeqBatch``; the answer is the log-probabilities of every target position,
    (batch, tgt_len, V), as ``model(batch)["log_probs"]``.
    """
    from ..models.teacher_forcing import teacher_forcing
    from ..fast import teacher_forcing as fast_teacher_forcing
    from ..models.seq2seq import Seq2Seq

    what = f"check_teacher_forcing({_name(forward)})"
    model, batch = _tiny_seq2seq(seed)
    answers = Answers(functions=(Seq2Seq.forward, teacher_forcing, fast_teacher_forcing))
    with torch.no_grad():
        want = model(batch)["log_probs"]
        got, error = _call(forward, model, batch, call="forward(model, batch)", answers=answers)
        if error:
            return _say(False, what, error)
        if not isinstance(got, torch.Tensor):
            return _say(False, what, f"it returned a {type(got).__name__}; expected the tensor of log-probabilities "
                                     f"(batch, tgt_len, V), stacked from model.step's outputs")
        B, T, V = want.shape
        if tuple(got.shape) == (T, B, V):
            return _say(False, what, f"got shape {tuple(got.shape)} = (tgt_len, batch, V): stack the steps "
                                     f"along dim=1, torch.stack(steps, dim=1)")
        if tuple(got.shape) != (B, T, V):
            return _say(False, what, f"got shape {tuple(got.shape)}, expected (batch, tgt_len, V) = {(B, T, V)}")
        if torch.allclose(got, want, atol=atol):
            return _say(True, what, f"equals model(batch)['log_probs'] at all {T} steps of {B} examples")
        guesses = [
            (want.exp(), "these are probabilities: step returns log-probabilities, keep them"),
            (_run_steps(model, batch, batch.tgt_out), "the decoder was fed tgt_out, the very words it must "
                                                      "predict: feed tgt_in (<s> y_1 ... y_{T-1})"),
            (_run_steps(model, batch, own=True), "the decoder was fed its own argmax: that is greedy decoding; "
                                                 "teacher forcing feeds the reference tgt_in[:, t]"),
            (_run_steps(model, batch, batch.tgt_in, reset=True), "every step starts from the encoder's s_0: carry "
                                                                 "the state returned by step into the next step"),
        ]
        first = " (the first step is right, later ones are not)" if torch.allclose(got[:, 0], want[:, 0], atol=atol) else ""
        diff = (got - want).abs().max().item()
        return _say(False, what, f"differs from model(batch)['log_probs'] by up to {diff:.3g}{first}."
                                 f"{_first_match(got, guesses, atol)}")


# -- notebook 03: the DMN's episode --------------------------------------------------------------
def check_episode(episode, *, hidden_size: int = 5, batch: int = 3, facts: int = 6, seed: int = 0,
                  atol: float = 1e-5) -> bool:
    """Check ``episode(cell, facts, gates)``: the DMN's gated GRU over the facts (Kumar et al. 2016)::

        h_t = g_t GRU(c_t, h_{t-1}) + (1 - g_t) h_{t-1},   h_0 = 0,   e = h_{T_C}

    ``cell`` is a ``torch.nn.GRUCell(H, H)``, facts (batch, facts, H), gates (batch, facts) in
    [0, 1] (exactly 0 at padded facts); the answer is e (batch, H).
    """
    from ..models.dmn import gated_gru_step

    what = f"check_episode({_name(episode)})"
    gen = torch.Generator().manual_seed(seed)
    c = torch.randn(batch, facts, hidden_size, generator=gen)
    g = torch.rand(batch, facts, generator=gen)
    n = torch.tensor([facts, facts - 2, 2][:batch])
    real = torch.arange(facts)[None, :] < n[:, None]
    g, c = g * real, c * real.unsqueeze(-1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        cell = nn.GRUCell(hidden_size, hidden_size)

    def run(gates, order=range(facts), skip_gate=False):
        h = c.new_zeros(batch, hidden_size)
        states = []
        for t in order:
            h = cell(c[:, t], h) if skip_gate else gated_gru_step(cell, c[:, t], h, gates[:, t])
            states.append(h)
        return h, torch.stack(states, 1)

    with torch.no_grad():
        want, states = run(g)
        from ..models.dmn import DMN
        answers = Answers(functions=(gated_gru_step, DMN.episode))
        got, error = _call(episode, cell, c.clone(), g.clone(), call="episode(cell, facts, gates)", answers=answers)
        if error:
            return _say(False, what, error)
        if not isinstance(got, torch.Tensor):
            return _say(False, what, f"expected a tensor (batch, H), got {type(got).__name__}")
        if tuple(got.shape) == tuple(states.shape):
            return _say(False, what, f"got every state, shape {tuple(got.shape)}: the episode is the last one, "
                                     f"e = h_{{T_C}}, shape (batch, H)")
        if tuple(got.shape) != tuple(want.shape):
            return _say(False, what, f"got shape {tuple(got.shape)}, expected (batch, H) = {tuple(want.shape)}")
        if torch.allclose(got, want, atol=atol):
            return _say(True, what, "equals the gated GRU h_t = g_t GRU(c_t, h_{t-1}) + (1 - g_t) h_{t-1}, "
                                    "e = h_{T_C}, on every example")
        guesses = [
            (run(1 - g)[0], "g_t and 1 - g_t are swapped: gate 1 reads the fact in full (a GRU step), "
                            "gate 0 keeps h_{t-1}"),
            (run(g, skip_gate=True)[0], "the gates are not used: every fact went through a plain GRU step"),
            ((g.unsqueeze(-1) * c).sum(1), "that is a weighted sum of the facts (soft attention); the DMN runs a "
                                           "GRU over them, gated step by step"),
            (run(g, order=reversed(range(facts)))[0], "the facts are read last to first: the GRU reads them in order"),
        ]
        diff = (got - want).abs().max().item()
        return _say(False, what, f"differs from the gated GRU by up to {diff:.3g}.{_first_match(got, guesses, atol)}")


# -- notebook 04: CopyNet ------------------------------------------------------------------------
def check_copy_scores(copy_scores, *, hidden_size: int = 4, batch: int = 3, src_len: int = 5, seed: int = 0,
                      atol: float = 1e-5) -> bool:
    """Check ``copy_scores(keys, W_c, s)``: CopyNet's copy-mode scores, eq. (8) of Gu et al. (2016),
    psi_c(y_t = x_j) = tanh(h_j^T W_c) s_t.

    keys (batch, src_len, 2H) hold the annotations h_j, ``W_c`` is an ``nn.Linear(2H, H)``, s
    (batch, H) the decoder state; the answer is (batch, src_len), one score per source position.
    """
    what = f"check_copy_scores({_name(copy_scores)})"
    H = hidden_size
    gen = torch.Generator().manual_seed(seed)
    keys = 2 * torch.randn(batch, src_len, 2 * H, generator=gen)
    s = torch.randn(batch, H, generator=gen)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        W_c = nn.Linear(2 * H, H)
    with torch.no_grad():
        want = (torch.tanh(W_c(keys)) * s.unsqueeze(1)).sum(-1)
        from ..models.copynet import CopyNet
        got, error = _call(copy_scores, keys.clone(), W_c, s.clone(), call="copy_scores(keys, W_c, s)",
                           answers=Answers(functions=(CopyNet.step, CopyNet.forward)))
        if error:
            return _say(False, what, error)
        if not isinstance(got, torch.Tensor):
            return _say(False, what, f"expected a tensor (batch, src_len), got {type(got).__name__}")
        if tuple(got.shape) != tuple(want.shape):
            hint = (" (is the dot product with s_t missing a sum over the last axis?)" if got.dim() == 3 else "")
            return _say(False, what, f"got shape {tuple(got.shape)}, expected (batch, src_len) = "
                                     f"{tuple(want.shape)}{hint}")
        if torch.allclose(got, want, atol=atol):
            return _say(True, what, "equals tanh(h_j^T W_c) s_t, eq. (8), at every source position")
        guesses = [
            ((W_c(keys) * s.unsqueeze(1)).sum(-1), "the tanh is missing: eq. (8) squashes h_j^T W_c before the "
                                                   "product with s_t"),
            (torch.tanh((W_c(keys) * s.unsqueeze(1)).sum(-1)), "the tanh is applied to the score: it belongs to "
                                                               "h_j^T W_c, before the product with s_t"),
            ((torch.sigmoid(W_c(keys)) * s.unsqueeze(1)).sum(-1), "sigma here is tanh (as in Gu et al.'s code "
                                                                  "and the library), not the logistic sigmoid"),
            (torch.softmax(want, dim=-1), "these are normalised: the scores stay raw, one softmax with the "
                                          "generate scores normalises both (copy_mix)"),
        ]
        diff = (got - want).abs().max().item()
        return _say(False, what, f"differs from eq. (8) by up to {diff:.3g}.{_first_match(got, guesses, atol)}")


def check_selective_read(selective_read, *, batch: int = 4, src_len: int = 6, dim: int = 5, seed: int = 0,
                         atol: float = 1e-6) -> bool:
    """Check ``selective_read(y_prev, prev_copy, src_ext, src_mask, keys) -> (zeta, rho)``: eq. (9) of
    Gu et al. (2016), as :func:`dca_course.models.copynet.selective_read`.

    y_prev (batch,) the previous word's extended id, prev_copy (batch, src_len) the previous step's
    copy probabilities p(x_j, c), src_ext (batch, src_len) the source's extended ids, src_mask
    (batch, src_len) bool, keys (batch, src_len, d).  rho is (batch, src_len), zeta (batch, d).
    The inputs hold a word at two positions, a word at one, a word not in the source (rho = 0,
    zeta = 0) and padding that holds the same id as y_prev and some copy probability (it must not count).
    """
    from ..models.copynet import selective_read as reference

    what = f"check_selective_read({_name(selective_read)})"
    gen = torch.Generator().manual_seed(seed)
    src_ext = torch.tensor([[5, 9, 7, 9, 6, 8], [4, 5, 6, 7, 8, 9], [5, 6, 7, 8, 4, 4], [7, 7, 5, 6, 7, 7]])[:batch]
    src_mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0]],
                            dtype=torch.bool)[:batch]
    y_prev = torch.tensor([9, 6, 11, 7])[:batch]      # twice; once; not in the source; twice + twice in padding
    prev_copy = torch.rand(batch, src_len, generator=gen) / src_len    # junk at padding: the mask must decide
    keys = torch.randn(batch, src_len, dim, generator=gen) * src_mask.unsqueeze(-1)
    args = (y_prev, prev_copy, src_ext, src_mask, keys)
    want_zeta, want_rho = reference(*args)
    try:
        out = guarded(Answers(functions=(reference,)), selective_read, *(a.clone() for a in args))
        if not (isinstance(out, tuple) and len(out) == 2):
            return _say(False, what, f"it returned a {type(out).__name__}; expected a pair of tensors (zeta, rho)")
        zeta, rho = out
    except AnswerCalled as exc:
        return _say(False, what, str(exc))
    except NotImplementedError:
        return _say(False, what, "it is not implemented yet")
    except Exception as exc:  # a learner's bug: report it rather than raise
        return _say(False, what, f"selective_read(...) raised or returned something other than (zeta, rho): "
                                 f"{type(exc).__name__}: {exc}")
    if not (isinstance(zeta, torch.Tensor) and isinstance(rho, torch.Tensor)):
        return _say(False, what, "expected two tensors, (zeta, rho)")
    if tuple(rho.shape) != tuple(want_rho.shape) or tuple(zeta.shape) != tuple(want_zeta.shape):
        return _say(False, what, f"got zeta {tuple(zeta.shape)} and rho {tuple(rho.shape)}, expected "
                                 f"{tuple(want_zeta.shape)} and {tuple(want_rho.shape)}")
    if not (torch.isfinite(rho).all() and torch.isfinite(zeta).all()):
        return _say(False, what, "NaN or inf (example 3, whose previous word is not in its source, has K = 0): "
                                 "give rho = 0 there rather than dividing by zero")
    if torch.allclose(rho, want_rho, atol=atol) and torch.allclose(zeta, want_zeta, atol=atol):
        return _say(True, what, "rho and zeta equal eq. (9) for a repeated word, a single one, a word not in the "
                                "source, and with padding")
    hit = (src_ext == y_prev[:, None]) & src_mask
    raw = prev_copy * hit
    unmasked = prev_copy * (src_ext == y_prev[:, None])
    count = hit.sum(1, keepdim=True)
    guesses = [
        (raw, "rho is not normalised: divide by K, the sum of p(x_j, c) over the positions that hold y_{t-1}"),
        (prev_copy / prev_copy.sum(1, keepdim=True), "every position is weighted: only positions with "
                                                     "x_j = y_{t-1} take part (rho_tj = 0 elsewhere)"),
        (torch.where(count > 0, hit / count.clamp_min(1), torch.zeros_like(raw)),
         "each matching position gets 1/K of the read regardless of p(x_j, c): weight them by how much the "
         "last step copied from each"),
        (unmasked / unmasked.sum(1, keepdim=True).clamp_min(1e-30), "padding that holds the same id counted: "
                                                                    "keep only positions where src_mask is True"),
    ]
    hint = _first_match(rho, guesses, atol)
    if not hint and torch.allclose(rho, want_rho, atol=atol):
        hint = " Hint: rho is right but zeta is not: zeta = sum_j rho_tj h_j, torch.bmm(rho.unsqueeze(1), keys)."
    diff = (rho - want_rho).abs().max().item()
    return _say(False, what, f"rho differs from eq. (9) by up to {diff:.3g}.{hint}")
