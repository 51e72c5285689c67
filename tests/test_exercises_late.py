"""Notebooks 05-08's self-checks: a realistic wrong answer prints FAIL with a hint naming the mistake
and returns False; a stub that raises NotImplementedError fails without raising."""
from __future__ import annotations

import contextlib
import io
import statistics

import pytest
import torch

from dca_course import exercises as ex


def run(check, answer):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ok = check(answer)
    return ok, out.getvalue().strip()


# -- 05 ---------------------------------------------------------------------------------------
def swapped_p_gen(p_vocab, attn, p_gen, src_ext, n_oov):
    out = torch.cat([(1 - p_gen) * p_vocab, p_vocab.new_zeros(p_vocab.size(0), n_oov)], 1)
    return out.scatter_add(1, src_ext, p_gen * attn)


def scatter_not_add(p_vocab, attn, p_gen, src_ext, n_oov):
    out = torch.cat([p_gen * p_vocab, p_vocab.new_zeros(p_vocab.size(0), n_oov)], 1)
    return out.scatter(1, src_ext, (1 - p_gen) * attn)


def vocab_only(p_vocab, attn, p_gen, src_ext, n_oov):
    return p_gen * p_vocab


def _running(attn, include_current):
    coverage, out = torch.zeros_like(attn[:, 0]), []
    for t in range(attn.size(1)):
        out.append(coverage + attn[:, t] if include_current else coverage)
        coverage = coverage + attn[:, t]
    return torch.stack(out, 1)


def coverage_with_current_step(attn, mask):
    per_step = torch.minimum(attn, _running(attn, True)).sum(-1)
    return (per_step * mask).sum() / mask.sum()


def coverage_ignoring_mask(attn, mask):
    return torch.minimum(attn, _running(attn, False)).sum(-1).mean()


# -- 06 ---------------------------------------------------------------------------------------
def messages_with_self(last, agent_mask):
    return last.mean(1, keepdim=True).expand_as(last)


def messages_ignoring_empty(last, agent_mask):
    return (last.sum(1, keepdim=True) - last) / (last.size(1) - 1)


def agents_averaged(p_vocab, word_attn, p_gen, agent_attn, src_ext, n_oov):
    B, M, L = word_attn.shape
    gen = torch.cat([p_gen * p_vocab.unsqueeze(1), p_vocab.new_zeros(B, M, n_oov)], -1)
    return gen.scatter_add(-1, src_ext, (1 - p_gen) * word_attn).mean(1)


# -- 07 ---------------------------------------------------------------------------------------
def flipped_sign(lp, mask, r_s, r_g):
    return ((r_s - r_g).detach()[:, None] * lp * mask).sum(1).mean()


def rewards_in_graph(lp, mask, r_s, r_g):
    return -((r_s - r_g)[:, None] * lp * mask).sum(1).mean()


def per_token(lp, mask, r_s, r_g):
    return -((r_s - r_g).detach()[:, None] * lp * mask).sum() / mask.sum()


def loo_with_self(rewards, k):
    return rewards.view(k, -1).mean(0).repeat(k)


def loo_wrong_grouping(rewards, k):
    g = rewards.view(-1, k)
    return ((g.sum(1, keepdim=True) - g) / (k - 1)).reshape(-1)


# -- 08 ---------------------------------------------------------------------------------------
def population_sd(values):
    mean = sum(values) / len(values)
    return mean, (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5


def rouge_1_instead(pred, ref):
    common = sum(min(pred.count(w), ref.count(w)) for w in set(pred))
    if not common:
        return 0.0
    p, r = common / len(pred), common / len(ref)
    return 2 * p * r / (p + r)


def lcs_recall(pred, ref):
    table = [[0] * (len(ref) + 1) for _ in range(len(pred) + 1)]
    for i, a in enumerate(pred, 1):
        for j, b in enumerate(ref, 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a == b else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1] / len(ref) if ref else 0.0


def not_implemented(*args):
    raise NotImplementedError


WRONG = [
    (ex.check_final_distribution, swapped_p_gen, "swapped"),
    (ex.check_final_distribution, scatter_not_add, "every position i with w_i = w"),
    (ex.check_final_distribution, vocab_only, "extended vocabulary"),
    (ex.check_coverage_loss, coverage_with_current_step, "before t"),
    (ex.check_coverage_loss, coverage_ignoring_mask, "padding steps"),
    (ex.check_agent_messages, messages_with_self, "own state"),
    (ex.check_agent_messages, messages_ignoring_empty, "empty agents"),
    (ex.check_agent_distribution, agents_averaged, "agent attention g_a"),
    (ex.check_self_critical_loss, flipped_sign, "sign is flipped"),
    (ex.check_self_critical_loss, rewards_in_graph, "gradient flows into the rewards"),
    (ex.check_self_critical_loss, per_token, "reduction='token'"),
    (ex.check_leave_one_out, loo_with_self, "own reward"),
    (ex.check_leave_one_out, loo_wrong_grouping, "view(k, batch)"),
    (ex.check_seed_spread, population_sd, "population sd"),
    (ex.check_rouge_l, rouge_1_instead, "ROUGE-1"),
    (ex.check_rouge_l, lcs_recall, "recall"),
]


@pytest.mark.parametrize("check, answer, hint", WRONG, ids=[f"{c.__name__}-{a.__name__}" for c, a, _ in WRONG])
def test_a_wrong_answer_fails_with_a_hint(check, answer, hint):
    ok, line = run(check, answer)
    assert ok is False, line
    assert line.startswith("FAIL") and "\n" not in line, line
    assert hint in line, line


@pytest.mark.parametrize("check", sorted({c for c, _, _ in WRONG}, key=lambda c: c.__name__))
def test_a_stub_fails_without_raising(check):
    ok, line = run(check, not_implemented)
    assert ok is False and line.startswith("FAIL") and "not implemented yet" in line, line


def test_a_crashing_answer_is_reported_not_raised():
    ok, line = run(ex.check_agent_messages, lambda last, mask: last @ mask)
    assert ok is False and "raised RuntimeError" in line, line


def test_the_checks_leave_the_callers_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    for check, answer, _ in WRONG:
        run(check, answer)
    assert torch.equal(torch.rand(3), expected)
