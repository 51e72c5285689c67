"""Every exercise's check, handed three answers: the library's own (or a function that calls it), which
must fail and say so; a realistic wrong answer, which must fail with its hint; and the stored solution,
which must pass.

``python tests/test_exercise_answers.py`` prints the same cases as a Markdown table with each result.
"""
from __future__ import annotations

import contextlib
import functools
import io
import math
import statistics
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dca_course import losses, metrics  # noqa: E402
from dca_course import exercises as ex  # noqa: E402
from dca_course.exercises import load_solution, solution_keys  # noqa: E402
from dca_course.models.copynet import selective_read  # noqa: E402
from dca_course.models.dca import agent_messages, mix_agents  # noqa: E402
from dca_course.models.dmn import dmn_features, gated_gru_step  # noqa: E402
from dca_course.models.teacher_forcing import teacher_forcing  # noqa: E402
from dca_course.nn import AdditiveAttention, GRUCell, masked_softmax  # noqa: E402
from dca_course.nn.copying import final_distribution  # noqa: E402

LIBRARY = "the library's answer: write it yourself"
WITHOUT = "which this exercise asks you to do without"


def _named(name):
    def wrap(fn):
        fn.__name__ = name
        return fn
    return wrap


# -- the library's answers: what a learner could hand in without writing anything -------------------
@_named("exp(sequence_nll)")
def lib_perplexity(lp, targets, mask):
    return math.exp(losses.sequence_nll(lp, targets, mask).item())


lib_paper_cell = functools.partial(GRUCell, reset_after=False)
lib_paper_cell.__name__ = "partial(GRUCell, reset_after=False)"


@_named("dot scores + masked_softmax")
def lib_dot_attention(query, keys, mask):
    weights = masked_softmax(torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1), mask)
    return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights


@_named("lambda m, b: m(b)")
def lib_forward(model, batch):
    return model(batch)


@_named("gated_gru_step loop")
def lib_episode(cell, facts, gates):
    h = facts.new_zeros(facts.size(0), cell.hidden_size)
    for t in range(facts.size(1)):
        h = gated_gru_step(cell, facts[:, t], h, gates[:, t])
    return h


@_named("CopyNet.step")
def lib_copy_scores(keys, W_c, s):
    from dca_course.models.copynet import CopyNet
    CopyNet.step(None, None, None)      # the scores live inside CopyNet.step: calling it is refused


@_named("scatter_add")
def scatter_add_distribution(p_vocab, attn, p_gen, src_ext, n_oov):
    out = torch.cat([p_gen * p_vocab, p_vocab.new_zeros(p_vocab.size(0), n_oov)], 1)
    return out.scatter_add(1, src_ext, (1 - p_gen) * attn)


@_named("coverage_loss(attn, coverage, mask)")
def lib_coverage(attn, mask):
    coverage = torch.stack([attn[:, :t].sum(1) for t in range(attn.size(1))], 1)     # c^t without cumsum
    return losses.coverage_loss(attn, coverage, mask)


@_named("cumsum by hand")
def cumsum_coverage(attn, mask):
    per_step = torch.minimum(attn, attn.cumsum(1) - attn).sum(-1)
    return (per_step * mask).sum() / mask.sum()


@_named("final_distribution + mix_agents")
def lib_agent_distribution(p_vocab, word_attn, p_gen, agent_attn, src_ext, n_oov):
    B, M, _ = word_attn.shape
    return mix_agents(final_distribution(p_vocab.unsqueeze(1).expand(B, M, -1), word_attn, p_gen, src_ext, n_oov),
                      agent_attn)


@_named("statistics.mean, statistics.stdev")
def lib_seed_spread(values):
    return statistics.mean(values), statistics.stdev(values)


@_named("rouge_score")
def lib_rouge_l(pred, ref):
    from rouge_score import rouge_scorer
    return rouge_scorer.RougeScorer(["rougeL"]).score(" ".join(ref), " ".join(pred))["rougeL"].fmeasure


@_named("metrics.rouge")
def lib_metrics_rouge(pred, ref):
    return metrics.rouge([" ".join(pred)], [" ".join(ref)])["rougeL"] / 100


# -- realistic wrong answers -------------------------------------------------------------------------
@_named("mean NLL without exp")
def wrong_perplexity(lp, targets, mask):
    nll = -lp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return ((nll * mask).sum() / mask.sum()).item()


class SwappedPaperCell(nn.Module):
    """Eq. (8) of the paper but z and 1 - z swapped in eq. (7)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        H = hidden_size
        self.weight_ih, self.weight_hh = nn.Parameter(torch.zeros(3 * H, input_size)), nn.Parameter(torch.zeros(3 * H, H))
        self.bias_ih, self.bias_hh = nn.Parameter(torch.zeros(3 * H)), nn.Parameter(torch.zeros(3 * H))

    def forward(self, x, h):
        w_r, w_z, w_n = (x @ self.weight_ih.T + self.bias_ih).chunk(3, -1)
        U_r, U_z, U_n = self.weight_hh.chunk(3, 0)
        b_r, b_z, b_n = self.bias_hh.chunk(3, 0)
        r, z = torch.sigmoid(w_r + h @ U_r.T + b_r), torch.sigmoid(w_z + h @ U_z.T + b_z)
        n = torch.tanh(w_n + (r * h) @ U_n.T + b_n)
        return (1 - z) * h + z * n


class AdditiveByHand(nn.Module):
    """A correct additive attention: the wrong *form* for the dot-product exercise."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.W, self.U, self.v = (torch.randn(6, 5, generator=g), torch.randn(6, 5, generator=g),
                                  torch.randn(5, generator=g))

    def forward(self, query, keys, mask):
        scores = torch.tanh(query.unsqueeze(1) @ self.W + keys @ self.U) @ self.v
        weights = torch.softmax(scores.masked_fill(~mask, -1e30), -1).masked_fill(~mask, 0.0)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights


@_named("fed tgt_out")
def wrong_teacher_forcing(model, batch):
    state, out = model.encode(batch), []
    for t in range(batch.tgt_out.size(1)):
        lp, state, _ = model.step(batch.tgt_out[:, t], state)
        out.append(lp)
    return torch.stack(out, 1)


@_named("bilinear terms swapped")
def wrong_features(c, m, q, W_b):
    mm, qq = m.unsqueeze(1).expand_as(c), q.unsqueeze(1).expand_as(c)
    cWq, cWm = ((c @ W_b) * qq).sum(-1, keepdim=True), ((c @ W_b) * mm).sum(-1, keepdim=True)
    return torch.cat([c, mm, qq, c * qq, c * mm, (c - qq).abs(), (c - mm).abs(), cWm, cWq], -1)


@_named("g and 1 - g swapped")
def wrong_episode(cell, facts, gates):
    h = facts.new_zeros(facts.size(0), cell.hidden_size)
    for t in range(facts.size(1)):
        g = gates[:, t:t + 1]
        h = (1 - g) * cell(facts[:, t], h) + g * h
    return h


@_named("tanh on the score")
def wrong_copy_scores(keys, W_c, s):
    return torch.tanh(torch.bmm(W_c(keys), s.unsqueeze(-1)).squeeze(-1))


@_named("rho not normalised")
def wrong_selective_read(y_prev, prev_copy, src_ext, src_mask, keys):
    rho = prev_copy * ((src_ext == y_prev[:, None]) & src_mask)
    return torch.bmm(rho.unsqueeze(1), keys).squeeze(1), rho


@_named("p_gen swapped, one-hot")
def wrong_final_distribution(p_vocab, attn, p_gen, src_ext, n_oov):
    one_hot = nn.functional.one_hot(src_ext, p_vocab.size(1) + n_oov).to(attn.dtype)
    gen = torch.cat([(1 - p_gen) * p_vocab, p_vocab.new_zeros(p_vocab.size(0), n_oov)], 1)
    return gen + torch.bmm((p_gen * attn).unsqueeze(1), one_hot).squeeze(1)


@_named("c^t includes step t, loop")
def wrong_coverage(attn, mask):
    coverage, per_step = torch.zeros_like(attn[:, 0]), []
    for t in range(attn.size(1)):
        coverage = coverage + attn[:, t]
        per_step.append(torch.minimum(attn[:, t], coverage).sum(-1))
    return (torch.stack(per_step, 1) * mask).sum() / mask.sum()


@_named("own state in the mean")
def wrong_messages(last, agent_mask):
    m = agent_mask.unsqueeze(-1).float()
    return ((last * m).sum(1, keepdim=True) / m.sum(1, keepdim=True).clamp_min(1)).expand_as(last)


@_named("agents averaged")
def wrong_agent_distribution(p_vocab, word_attn, p_gen, agent_attn, src_ext, n_oov):
    B, M, L = word_attn.shape
    one_hot = nn.functional.one_hot(src_ext, p_vocab.size(1) + n_oov).to(word_attn.dtype)   # (B, M, L, W)
    gen = torch.cat([p_gen * p_vocab.unsqueeze(1), p_vocab.new_zeros(B, M, n_oov)], -1)
    per_agent = gen + ((1 - p_gen) * word_attn).unsqueeze(-2).matmul(one_hot).squeeze(-2)
    return per_agent.mean(1)


@_named("sign flipped")
def wrong_self_critical(lp, mask, r_s, r_g):
    return ((r_s - r_g).detach() * (lp * mask).sum(1)).mean()


@_named("baseline includes the sample")
def wrong_leave_one_out(rewards, k):
    return rewards.view(k, -1).mean(0).repeat(k)


@_named("population sd")
def wrong_seed_spread(values):
    mean = sum(values) / len(values)
    return mean, (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5


@_named("LCS / len(reference)")
def wrong_rouge_l(pred, ref):
    table = [[0] * (len(ref) + 1) for _ in range(len(pred) + 1)]
    for i, a in enumerate(pred, 1):
        for j, b in enumerate(ref, 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a == b else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1] / len(ref) if ref else 0.0


def _check(key):
    return load_solution(key)[1]


# key: ([(library answer, words its FAIL line must hold)], (wrong answer, words of its hint))
CASES = {
    "01.1": ([(lib_perplexity, LIBRARY)], (wrong_perplexity, "its exponential")),
    "01.2": ([(lib_paper_cell, LIBRARY), (nn.GRUCell, LIBRARY)], (SwappedPaperCell, "swapped")),
    "02.1": ([(lib_dot_attention, LIBRARY), (AdditiveAttention(6, 6, 5), LIBRARY)],
             (AdditiveByHand(), "not the dot product")),
    "02.2": ([(lib_forward, LIBRARY), (teacher_forcing, LIBRARY)],
             (wrong_teacher_forcing, "fed tgt_out")),
    "03.1": ([(dmn_features, LIBRARY)], (wrong_features, "bilinear terms are swapped")),
    "03.2": ([(lib_episode, LIBRARY)], (wrong_episode, "swapped")),
    "04.1": ([(lib_copy_scores, LIBRARY)], (wrong_copy_scores, "tanh is applied to the score")),
    "04.2": ([(selective_read, LIBRARY)], (wrong_selective_read, "not normalised")),
    "05.1": ([(final_distribution, LIBRARY), (scatter_add_distribution, WITHOUT)],
             (wrong_final_distribution, "swapped")),
    "05.2": ([(lib_coverage, LIBRARY), (cumsum_coverage, WITHOUT)], (wrong_coverage, "before t")),
    "06.1": ([(agent_messages, LIBRARY)], (wrong_messages, "own state")),
    "06.2": ([(lib_agent_distribution, LIBRARY)], (wrong_agent_distribution, "agent attention g_a")),
    "07.1": ([(losses.self_critical_loss, LIBRARY)], (wrong_self_critical, "sign is flipped")),
    "07.2": ([(losses.leave_one_out_baseline, LIBRARY)], (wrong_leave_one_out, "own reward")),
    "08.1": ([(lib_seed_spread, LIBRARY)], (wrong_seed_spread, "population sd")),
    "08.2": ([(lib_rouge_l, LIBRARY), (lib_metrics_rouge, LIBRARY)], (wrong_rouge_l, "recall")),
}


def run(key, answer):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ok = _check(key)(answer)
    return ok, out.getvalue().strip()


def test_every_solution_key_has_its_cases():
    assert sorted(CASES) == solution_keys()


LIBRARY_CASES = [(key, answer, words) for key, (libs, _) in CASES.items() for answer, words in libs]


@pytest.mark.parametrize("key, answer, words", LIBRARY_CASES,
                         ids=[f"{k}-{getattr(a, '__name__', type(a).__name__)}" for k, a, _ in LIBRARY_CASES])
def test_the_library_answer_fails_and_says_so(key, answer, words):
    ok, line = run(key, answer)
    assert ok is False and line.startswith("FAIL") and "\n" not in line, line
    assert words in line, line


@pytest.mark.parametrize("key", sorted(CASES))
def test_a_wrong_answer_fails_with_its_hint(key):
    wrong, words = CASES[key][1]
    ok, line = run(key, wrong)
    assert ok is False and line.startswith("FAIL"), line
    assert words in line, line


@pytest.mark.parametrize("key", sorted(CASES))
def test_the_stored_solution_passes(key):
    ok, line = run(key, load_solution(key)[0])
    assert ok is True and line.startswith("PASS"), line


def table() -> str:
    """The Markdown table of every check and its three kinds of answer."""
    rows = ["| exercise | check | library's answer | result | wrong variant | result | solution | result |",
            "|---|---|---|---|---|---|---|---|"]

    def cell(key, answer):
        ok, line = run(key, answer)
        msg = line.split("): ", 1)[1] if "): " in line else line
        return ("PASS" if ok else "FAIL") + ": " + msg.replace("|", "\\|")[:140]

    for key, (libs, (wrong, _)) in CASES.items():
        solution = load_solution(key)[0]
        name = lambda a: getattr(a, "__name__", type(a).__name__)      # noqa: E731
        lib = "<br>".join(f"`{name(a)}`" for a, _ in libs)
        lib_result = "<br>".join(cell(key, a) for a, _ in libs)
        rows.append(f"| {key} | `{_check(key).__name__}` | {lib} | {lib_result} | `{name(wrong)}` | "
                    f"{cell(key, wrong)} | `{name(solution)}` | {cell(key, solution)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
