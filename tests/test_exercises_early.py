"""The checks of notebooks 01-04's exercises (dca_course.exercises.early) reject realistic wrong
answers with a hint that names the mistake, and never raise on a learner's bug."""
import math

import pytest
import torch

from dca_course.exercises import (check_copy_scores, check_episode, check_perplexity, check_selective_read,
                                  check_teacher_forcing, load_solution)


def _fails(capsys, check, answer, *words):
    assert check(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("FAIL ") and out.count("\n") == 1, out
    for word in words:
        assert word in out, out
    return out


def _nll(log_probs, targets):
    return -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


# -- 01: perplexity --------------------------------------------------------------------------------
def test_perplexity_over_every_position_counts_the_padding(capsys):
    _fails(capsys, check_perplexity, lambda lp, t, m: math.exp(_nll(lp, t).mean().item()), "mask.sum()")


def test_perplexity_as_mean_of_exponentials(capsys):
    def mean_of_exp(lp, t, m):
        return ((_nll(lp, t).exp() * m).sum() / m.sum()).item()
    _fails(capsys, check_perplexity, mean_of_exp, "exponential of the mean")


def test_perplexity_returning_the_loss_or_base_2(capsys):
    def loss(lp, t, m):
        return ((_nll(lp, t) * m).sum() / m.sum()).item()
    _fails(capsys, check_perplexity, loss, "its exponential")
    _fails(capsys, check_perplexity, lambda lp, t, m: 2 ** loss(lp, t, m), "base 2")


def test_perplexity_averaged_per_row(capsys):
    def per_row(lp, t, m):
        return math.exp(((_nll(lp, t) * m).sum(1) / m.sum(1)).mean().item())
    _fails(capsys, check_perplexity, per_row, "short rows")


# -- 02: teacher forcing ---------------------------------------------------------------------------
def _steps(model, batch, pick):
    state, out = model.encode(batch), []
    y = batch.tgt_in[:, 0]
    for t in range(batch.tgt_in.size(1)):
        lp, state, _ = model.step(pick(batch, t, y), state)
        out.append(lp)
        y = lp.argmax(-1)
    return out


def test_teacher_forcing_fed_the_targets(capsys):
    _fails(capsys, check_teacher_forcing,
           lambda model, batch: torch.stack(_steps(model, batch, lambda b, t, y: b.tgt_out[:, t]), 1), "tgt_out")


def test_teacher_forcing_fed_its_own_words_is_greedy(capsys):
    _fails(capsys, check_teacher_forcing,
           lambda model, batch: torch.stack(_steps(model, batch, lambda b, t, y: y), 1), "greedy")


def test_teacher_forcing_stacked_along_time_first(capsys):
    _fails(capsys, check_teacher_forcing,
           lambda model, batch: torch.stack(_steps(model, batch, lambda b, t, y: b.tgt_in[:, t]), 0), "dim=1")


def test_teacher_forcing_that_drops_the_state(capsys):
    def reset(model, batch):
        s0, out = model.encode(batch), []
        for t in range(batch.tgt_in.size(1)):
            out.append(model.step(batch.tgt_in[:, t], s0)[0])
        return torch.stack(out, 1)
    _fails(capsys, check_teacher_forcing, reset, "carry the state")


# -- 03: the episode -------------------------------------------------------------------------------
def _gated(cell, facts, gates, swap=False, order=None):
    h = facts.new_zeros(facts.size(0), cell.hidden_size)
    for t in order or range(facts.size(1)):
        g = gates[:, t:t + 1]
        g = 1 - g if swap else g
        h = g * cell(facts[:, t], h) + (1 - g) * h
    return h


def test_episode_with_the_gate_swapped(capsys):
    _fails(capsys, check_episode, lambda cell, c, g: _gated(cell, c, g, swap=True), "swapped")


def test_episode_as_a_weighted_sum(capsys):
    _fails(capsys, check_episode, lambda cell, c, g: (g.unsqueeze(-1) * c).sum(1), "weighted sum")


def test_episode_read_backwards_or_returning_every_state(capsys):
    _fails(capsys, check_episode,
           lambda cell, c, g: _gated(cell, c, g, order=list(reversed(range(c.size(1))))), "last to first")

    def every_state(cell, c, g):
        return torch.stack([_gated(cell, c[:, :t + 1], g) for t in range(c.size(1))], 1)
    _fails(capsys, check_episode, every_state, "h_{T_C}")


def test_episode_that_raises_is_reported(capsys):
    _fails(capsys, check_episode, lambda cell, c, g: cell(c, g), "raised")


# -- 04: copy scores and the selective read --------------------------------------------------------
def test_copy_scores_without_tanh(capsys):
    _fails(capsys, check_copy_scores, lambda keys, W_c, s: (W_c(keys) * s.unsqueeze(1)).sum(-1), "tanh is missing")


def test_copy_scores_with_a_sigmoid_or_normalised(capsys):
    _fails(capsys, check_copy_scores,
           lambda keys, W_c, s: (torch.sigmoid(W_c(keys)) * s.unsqueeze(1)).sum(-1), "sigmoid")
    right, _ = load_solution("04.1")
    _fails(capsys, check_copy_scores, lambda keys, W_c, s: torch.softmax(right(keys, W_c, s), -1), "raw")


def test_copy_scores_without_the_sum(capsys):
    _fails(capsys, check_copy_scores, lambda keys, W_c, s: torch.tanh(W_c(keys)) * s.unsqueeze(1), "sum")


def _read(y_prev, prev_copy, src_ext, src_mask, keys, *, normalise=True, use_mask=True, weights=True):
    hit = src_ext == y_prev[:, None]
    if use_mask:
        hit = hit & src_mask
    w = prev_copy * hit if weights else hit.float()
    rho = w / w.sum(1, keepdim=True).clamp_min(1e-30) if normalise else w
    return torch.bmm(rho.unsqueeze(1), keys).squeeze(1), rho


def test_selective_read_not_normalised(capsys):
    _fails(capsys, check_selective_read, lambda *a: _read(*a, normalise=False), "divide by K")


def test_selective_read_counting_padding(capsys):
    _fails(capsys, check_selective_read, lambda *a: _read(*a, use_mask=False), "padding")


def test_selective_read_uniform_over_matches(capsys):
    _fails(capsys, check_selective_read, lambda *a: _read(*a, weights=False), "regardless of p(x_j, c)")


def test_selective_read_dividing_by_zero(capsys):
    def nan_read(y_prev, prev_copy, src_ext, src_mask, keys):
        w = prev_copy * ((src_ext == y_prev[:, None]) & src_mask)
        rho = w / w.sum(1, keepdim=True)
        return torch.bmm(rho.unsqueeze(1), keys).squeeze(1), rho
    _fails(capsys, check_selective_read, nan_read, "K = 0")


@pytest.mark.parametrize("check", [check_perplexity, check_teacher_forcing, check_episode, check_copy_scores,
                                   check_selective_read])
def test_a_stub_fails_without_raising(capsys, check):
    def stub(*args):
        raise NotImplementedError
    _fails(capsys, check, stub, "not implemented yet")
