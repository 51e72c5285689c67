"""Self-checks for the exercises of notebooks 05 to 08.

Each ``check_*`` takes a learner's function, calls it next to the library's own version on inputs
drawn from a private ``torch.Generator`` (the notebook's random state is left alone), prints one
``PASS ...`` or ``FAIL ...`` line, naming the likely mistake when it recognises one, and returns
``True`` or ``False``.  A learner's exception is reported, never raised.
"""
from __future__ import annotations

import math
import statistics

import torch

from .. import losses
from ..losses import coverage_loss, coverage_terms, leave_one_out_baseline, self_critical_loss
from ..fast.copying import log_final_distribution, log_mixed_distribution
from ..models.dca import agent_messages, mix_agents
from ..nn.copying import final_distribution, gen_plus_copy
from .foundations import _call, _first_match, _name, _same, _say
from .guard import NO_WRITE, Answers

# What each exercise must not call: the library's answer, and the operations its text asks to do without.
_SCATTER = {op: NO_WRITE + " (one-hot rows of the source ids, multiplied by the attention, add a word's positions)"
            for op in ("scatter_add", "scatter_add_", "index_add", "index_add_", "scatter_reduce", "scatter_reduce_")}
FINAL_DISTRIBUTION_ANSWERS = Answers(functions=(final_distribution, gen_plus_copy, log_final_distribution),
                                     ops=_SCATTER)
COVERAGE_ANSWERS = Answers(functions=(coverage_loss, coverage_terms),
                           ops={op: NO_WRITE + " (keep the running coverage c^t in a loop over the steps)"
                                for op in ("cumsum", "cumsum_", "cummax")})
AGENT_MESSAGE_ANSWERS = Answers(functions=(agent_messages,))
AGENT_DISTRIBUTION_ANSWERS = Answers(functions=(final_distribution, gen_plus_copy, mix_agents, log_mixed_distribution))
SELF_CRITICAL_ANSWERS = Answers(functions=(self_critical_loss, losses.mixed_loss, losses.reduce_tokens))
LEAVE_ONE_OUT_ANSWERS = Answers(functions=(leave_one_out_baseline,))
SEED_SPREAD_ANSWERS = Answers(modules=(statistics,), ops={op: "the library's answer: write it yourself"
                                                          for op in ("std", "var", "std_mean", "var_mean")})

__all__ = ["check_final_distribution", "check_coverage_loss", "check_agent_messages", "check_agent_distribution",
           "check_self_critical_loss", "check_leave_one_out", "check_seed_spread", "check_rouge_l"]


def _shape_problem(got, want) -> str | None:
    if not isinstance(got, torch.Tensor):
        return f"it returned a {type(got).__name__}, expected a tensor of shape {tuple(want.shape)}"
    if got.shape != want.shape:
        return f"it returned shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    return None


# -- notebook 05: the pointer-generator and coverage -------------------------------------------
def _copy_inputs(seed: int, batch: int = 3, vocab: int = 7, src_len: int = 6):
    gen = torch.Generator().manual_seed(seed)
    p_vocab = torch.softmax(torch.randn(batch, vocab, generator=gen), -1)
    mask = torch.arange(src_len)[None, :] < torch.tensor([src_len, src_len - 2, 3])[:, None]
    attn = torch.softmax(torch.randn(batch, src_len, generator=gen).masked_fill(~mask, -1e9), -1)
    p_gen = torch.rand(batch, 1, generator=gen) * 0.8 + 0.1
    # extended ids: words of the vocabulary (some repeated in an article) and OOV ids V, V + 1
    src_ext = torch.tensor([[4, vocab, 4, 2, vocab + 1, 5], [vocab, 3, 3, vocab, 0, 0], [6, 2, vocab, 0, 0, 0]])
    return p_vocab, attn, p_gen, src_ext, 2


def check_final_distribution(fn, *, seed: int = 0) -> bool:
    """See et al.'s eq. (9): ``fn(p_vocab, attn, p_gen, src_ext, n_oov)`` with p_vocab (batch, V),
    attn (batch, src_len) (zero at padding), p_gen (batch, 1), src_ext (batch, src_len) extended
    ids and n_oov an int must return P (batch, V + n_oov) equal to
    :func:`dca_course.nn.copying.final_distribution`.  Articles repeat words and hold OOV words."""
    what = f"check_final_distribution({_name(fn)})"
    p_vocab, attn, p_gen, src_ext, n_oov = _copy_inputs(seed)
    want = final_distribution(p_vocab, attn, p_gen, src_ext, n_oov)
    got, error = _call(fn, p_vocab.clone(), attn.clone(), p_gen.clone(), src_ext.clone(), n_oov,
                       answers=FINAL_DISTRIBUTION_ANSWERS)
    if error:
        return _say(False, what, error)
    V = p_vocab.size(1)
    if isinstance(got, torch.Tensor) and got.shape == (p_vocab.size(0), V):
        return _say(False, what, f"it returned (batch, V) = {tuple(got.shape)}: P lives on the extended vocabulary, "
                                 f"(batch, V + n_oov), so that copied OOV words (ids V, V + 1, ...) have a column")
    problem = _shape_problem(got, want)
    if problem:
        return _say(False, what, problem)
    if _same(got, want):
        return _say(True, what, "equals final_distribution: p_gen P_vocab on the vocabulary, (1 - p_gen) times the "
                                "attention added to each position's word, repeated words summed, OOV words copied")

    def mix(gen, copy, summed=True):
        out = torch.cat([gen, gen.new_zeros(gen.size(0), n_oov)], 1)
        return out.scatter_add(1, src_ext, copy) if summed else out.scatter(1, src_ext, copy)

    guesses = [
        (mix((1 - p_gen) * p_vocab, p_gen * attn), "p_gen and 1 - p_gen are swapped: p_gen weighs generating, "
                                                   "P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_i a_i"),
        (mix(p_gen * p_vocab, attn), "the attention is added without its weight (1 - p_gen): P no longer sums to 1"),
        (mix(p_gen * p_vocab, (1 - p_gen) * attn, summed=False), "a word at several positions keeps only one position's "
                                                          "attention: P(w) sums a_i over every position i with w_i = w"),
    ]
    sums = got.detach().sum(-1)
    extra = "" if torch.allclose(sums, torch.ones_like(sums), atol=1e-4) else \
        f" (its rows sum to {sums.min().item():.3f}..{sums.max().item():.3f}, not 1)"
    diff = (got.detach() - want).abs().max().item()
    return _say(False, what, f"differs from final_distribution by up to {diff:.3g}{extra}.{_first_match(got, guesses)}")


def check_coverage_loss(fn, *, seed: int = 0) -> bool:
    """See et al.'s eqs. (10) and (12): ``fn(attn, mask)`` with attn (batch, steps, src_len), the
    attention a^t of every decoder step, and mask (batch, steps) True at real target steps, must
    return the coverage loss sum_i min(a^t_i, c^t_i) with c^t = sum_{t' < t} a^{t'}, averaged over
    the real steps of the batch: a scalar, equal to :func:`dca_course.losses.coverage_loss`."""
    what = f"check_coverage_loss({_name(fn)})"
    gen = torch.Generator().manual_seed(seed)
    attn = torch.softmax(2 * torch.randn(3, 6, 8, generator=gen), -1)
    mask = torch.arange(6)[None, :] < torch.tensor([6, 4, 2])[:, None]
    coverage = torch.cumsum(attn, 1) - attn
    want = coverage_loss(attn, coverage, mask)
    got, error = _call(fn, attn.clone(), mask.clone(), answers=COVERAGE_ANSWERS)
    if error:
        return _say(False, what, error)
    if isinstance(got, (tuple, list, dict)):
        return _say(False, what, f"it returned a {type(got).__name__}; return the loss alone, a scalar tensor "
                                 f"(notebook 05's my_coverage_loss also returns the coverage: drop it here)")
    problem = _shape_problem(got, want)
    if problem:
        return _say(False, what, problem + " (a scalar: the mean over the real steps)")
    if _same(got, want):
        return _say(True, what, "equals coverage_loss: c^t sums the attention of the steps before t (c^0 = 0), "
                                "the loss is sum_i min(a^t_i, c^t_i), averaged over real steps")
    m = mask.float()
    per_step = lambda cov, op=torch.minimum: op(attn, cov).sum(-1)                   # noqa: E731
    guesses = [
        ((per_step(torch.cumsum(attn, 1)) * m).sum() / m.sum(),
         "c^t includes the current step's attention; eq. (10) sums only the steps before t (c^0 = 0): "
         "use c^t in step t's loss, then add a^t to it"),
        ((per_step(coverage, torch.maximum) * m).sum() / m.sum(), "use the minimum of a^t_i and c^t_i, not the maximum"),
        (per_step(coverage).mean(), "padding steps are counted: average over the real steps only (the mask)"),
        ((per_step(coverage) * m).sum() / mask.size(0), "the sum over each summary's steps averaged over the batch; "
                                                        "the loss is the mean over real steps"),
        ((per_step(coverage) * m).sum(), "that is the sum over all real steps; take their mean"),
    ]
    return _say(False, what, f"got {float(got.detach()):.4f}, expected {want.item():.4f}.{_first_match(got, guesses)}")


# -- notebook 06: Deep Communicating Agents ---------------------------------------------------
def check_agent_messages(fn, *, seed: int = 0) -> bool:
    """Eq. (5) of Celikyilmaz et al.: ``fn(last, agent_mask)`` with last (batch, agents, dim), each
    agent's last state, and agent_mask (batch, agents) False for an agent without words, must return
    the message of every agent (batch, agents, dim): the mean of the *other* non-empty agents' last
    states (zero if there is none), equal to :func:`dca_course.models.dca.agent_messages`."""
    what = f"check_agent_messages({_name(fn)})"
    gen = torch.Generator().manual_seed(seed)
    last = torch.randn(3, 4, 5, generator=gen)
    agent_mask = torch.tensor([[True] * 4, [True, True, True, False], [True, False, False, False]])
    last = last * agent_mask.unsqueeze(-1)                 # an empty agent's state is zero, as in the model
    want = agent_messages(last, agent_mask)
    got, error = _call(fn, last.clone(), agent_mask.clone(), answers=AGENT_MESSAGE_ANSWERS)
    if error:
        return _say(False, what, error)
    problem = _shape_problem(got, want)
    if problem:
        return _say(False, what, problem + " (one message per agent)")
    if _same(got, want):
        return _say(True, what, "equals agent_messages: each agent gets the mean of the other non-empty agents' "
                                "last states, zero when it has no partner")
    if _same(got[0], want[0]):
        return _say(False, what, "right for the batch's first article, whose agents all have words, wrong for the "
                                 "others: leave empty agents out of the mean (divide by the number of *other non-empty* "
                                 "agents; a lone agent gets a zero message)")
    M = last.size(1)
    m = agent_mask.unsqueeze(-1).float()
    guesses = [
        (last.sum(1, keepdim=True).expand_as(last) / M, "each agent's own state is in its message: eq. (5) averages "
                                                       "over m != a (subtract the agent's own state)"),
        ((last.sum(1, keepdim=True) - last) / M, "divided by M; the mean over the other agents divides by M - 1"),
        ((last * m).sum(1, keepdim=True).expand_as(last) / m.sum(1, keepdim=True).clamp_min(1),
         "each agent's own state is in its message: eq. (5) averages over m != a"),
    ]
    return _say(False, what, f"differs from agent_messages by up to {(got.detach() - want).abs().max().item():.3g}."
                             f"{_first_match(got, guesses)}")


def check_agent_distribution(fn, *, seed: int = 0) -> bool:
    """Eqs. (14)-(15) of Celikyilmaz et al.: ``fn(p_vocab, word_attn, p_gen, agent_attn, src_ext, n_oov)``
    with p_vocab (batch, V), word_attn (batch, agents, len) (each agent's attention over its own
    words), p_gen (batch, agents, 1), agent_attn (batch, agents) and src_ext (batch, agents, len)
    must return P (batch, V + n_oov): every agent's pointer-generator distribution P^a, copying only
    from its own words, mixed by the agent attention, P = sum_a g_a P^a."""
    what = f"check_agent_distribution({_name(fn)})"
    gen = torch.Generator().manual_seed(seed)
    B, M, L, V, n_oov = 2, 3, 4, 6, 2
    p_vocab = torch.softmax(torch.randn(B, V, generator=gen), -1)
    word_attn = torch.softmax(torch.randn(B, M, L, generator=gen), -1)
    p_gen = torch.rand(B, M, 1, generator=gen) * 0.8 + 0.1
    agent_attn = torch.softmax(torch.randn(B, M, generator=gen), -1)
    src_ext = torch.randint(0, V + n_oov, (B, M, L), generator=gen)
    p_agents = final_distribution(p_vocab.unsqueeze(1).expand(B, M, V), word_attn, p_gen, src_ext, n_oov)
    want = mix_agents(p_agents, agent_attn)
    got, error = _call(fn, p_vocab.clone(), word_attn.clone(), p_gen.clone(), agent_attn.clone(),
                       src_ext.clone(), n_oov, answers=AGENT_DISTRIBUTION_ANSWERS)
    if error:
        return _say(False, what, error)
    if isinstance(got, torch.Tensor) and got.shape == p_agents.shape:
        return _say(False, what, f"it returned one distribution per agent {tuple(got.shape)}: mix them with the "
                                 f"agent attention, P(w) = sum_a g_a P^a(w), eq. (15)")
    problem = _shape_problem(got, want)
    if problem:
        return _say(False, what, problem)
    if _same(got, want):
        return _say(True, what, "equals mix_agents over final_distribution: each agent copies from its own words "
                                "with its own p_gen, and the agent attention mixes the agents' distributions")
    swapped = final_distribution(p_vocab.unsqueeze(1).expand(B, M, V), word_attn, 1 - p_gen, src_ext, n_oov)
    guesses = [
        (p_agents.mean(1), "the agents are averaged; eq. (15) weighs each by its agent attention g_a"),
        (mix_agents(swapped, agent_attn), "p_gen and 1 - p_gen are swapped: p_gen weighs generating from P_voc"),
        (mix_agents(final_distribution(p_vocab.unsqueeze(1).expand(B, M, V), word_attn, p_gen, src_ext[:, :1]
                                       .expand(B, M, L), n_oov), agent_attn),
         "every agent copies from the first agent's words: agent a's attention covers its own words, src_ext[:, a]"),
    ]
    return _say(False, what, f"differs by up to {(got.detach() - want).abs().max().item():.3g}."
                             f"{_first_match(got, guesses)}")


# -- notebook 07: self-critical training ------------------------------------------------------
def check_self_critical_loss(fn, *, seed: int = 0) -> bool:
    """Eq. (15) (Paulus et al.; Rennie et al.): ``fn(sample_lp, mask, r_sample, r_greedy)`` with
    sample_lp (batch, steps) the log-probabilities of the sampled words, mask (batch, steps) True up to
    and including each sample's </s>, and the rewards (batch,) tensors, must return
    -(r_sample - r_greedy) * sum_t log p, averaged over the batch, with no gradient through the
    rewards: :func:`dca_course.losses.self_critical_loss` with ``reduction="sequence"``."""
    what = f"check_self_critical_loss({_name(fn)})"
    gen = torch.Generator().manual_seed(seed)
    lp = torch.log(torch.rand(4, 6, generator=gen) * 0.9 + 0.05)
    mask = torch.arange(6)[None, :] < torch.tensor([6, 3, 5, 1])[:, None]
    r_s = torch.tensor([0.40, 0.20, 0.35, 0.10])
    r_g = torch.tensor([0.30, 0.25, 0.35, 0.30])
    want = self_critical_loss(lp, mask, r_s, r_g)
    lp_in, r_s_in = lp.clone().requires_grad_(True), r_s.clone().requires_grad_(True)
    got, error = _call(fn, lp_in, mask.clone(), r_s_in, r_g.clone(), answers=SELF_CRITICAL_ANSWERS)
    if error:
        return _say(False, what, error)
    problem = _shape_problem(got, want)
    if problem:
        return _say(False, what, problem + " (a scalar: the mean over the batch)")
    if not _same(got, want):
        adv = (r_s - r_g)[:, None]
        guesses = [
            (-want, "the sign is flipped: minimising the loss must make a sample that beats greedy more likely, "
                    "so L = -(r_sample - r_greedy) sum_t log p"),
            (-(adv * lp).sum(1).mean(), "the padding after </s> is counted: multiply by the mask"),
            (self_critical_loss(lp, mask, r_s, r_g, reduction="token"),
             "that is the mean over sampled words (reduction='token'); eq. (15) sums each sample's words and "
             "averages over the samples"),
            (-(adv * lp * mask).sum(), "that is the sum over the batch; take the mean over the samples"),
        ]
        return _say(False, what, f"got {float(got.detach()):.4f}, expected {want.item():.4f}.{_first_match(got, guesses)}")
    try:
        got.backward()
    except Exception as exc:
        return _say(False, what, f"the loss has no gradient to the log-probabilities ({type(exc).__name__}: {exc}): "
                                 f"does the function detach them?")
    if r_s_in.grad is not None and r_s_in.grad.abs().sum() > 0:
        return _say(False, what, "the right value, but a gradient flows into the rewards: the advantage "
                                 "r_sample - r_greedy is a number, not part of the graph (.detach() it)")
    if lp_in.grad is None or not torch.allclose(lp_in.grad, -(r_s - r_g)[:, None] * mask / lp.size(0), atol=1e-6):
        return _say(False, what, "the right value, but not the right gradient with respect to the log-probabilities")
    return _say(True, what, "equals self_critical_loss: the advantage times the summed log-probability of each "
                            "sample up to its </s>, negated, averaged over the batch; no gradient into the rewards")


def check_leave_one_out(fn, *, seed: int = 0) -> bool:
    """Kool et al.'s baseline: ``fn(rewards, k)`` with rewards (k * batch,) in the order of
    ``list(articles) * k`` (row j * batch + b is sample j of article b) must return each sample's
    baseline (k * batch,): the mean reward of the *other* k - 1 samples of the same article, equal to
    :func:`dca_course.losses.leave_one_out_baseline`."""
    what = f"check_leave_one_out({_name(fn)})"
    gen = torch.Generator().manual_seed(seed)
    k, batch = 4, 3
    rewards = torch.rand(k * batch, generator=gen, dtype=torch.float64)
    want = leave_one_out_baseline(rewards, k)
    got, error = _call(fn, rewards.clone(), k, answers=LEAVE_ONE_OUT_ANSWERS)
    if error:
        return _say(False, what, error)
    problem = _shape_problem(got, want)
    if problem:
        return _say(False, what, problem + " (one baseline per sample)")
    if _same(got, want, atol=1e-9):
        return _say(True, what, "equals leave_one_out_baseline: each sample is judged against the mean of its "
                                "article's other samples")
    by_article = rewards.view(k, batch)
    wrong_group = rewards.view(batch, k)
    guesses = [
        (by_article.mean(0).repeat(k), "the sample's own reward is in its baseline: average over the k - 1 *others* "
                                       "((sum - own) / (k - 1)); otherwise the baseline depends on the sample"),
        (((wrong_group.sum(1, keepdim=True) - wrong_group) / (k - 1)).reshape(-1),
         "the samples are grouped by consecutive rows (view(batch, k)); in list(articles) * k order the samples of "
         "one article are batch rows apart: view(k, batch) and reduce over dim 0"),
        (((by_article.sum(0, keepdim=True) - by_article) / k).reshape(-1), "divided by k; the mean of the others "
                                                                          "divides by k - 1"),
    ]
    return _say(False, what, f"differs by up to {(got.double() - want).abs().max().item():.3g}."
                             f"{_first_match(got, guesses)}")


# -- notebook 08: reading results ------------------------------------------------------------
def check_seed_spread(fn) -> bool:
    """``fn(values)`` with a list of a metric's values over seeds must return ``(mean, sd)`` with sd the
    sample standard deviation (divided by n - 1), as ``experiments/`` reports "mean ± sd" over seeds
    (``statistics.mean``, ``statistics.stdev``)."""
    what = f"check_seed_spread({_name(fn)})"
    cases = [[0.554, 0.531, 0.577], [46.2, 44.9, 47.3, 45.0], [0.1, 0.1]]
    for values in cases:
        want = (statistics.mean(values), statistics.stdev(values))
        got, error = _call(fn, list(values), answers=SEED_SPREAD_ANSWERS)
        if error:
            return _say(False, what, error)
        try:
            mean, sd = (float(x) for x in got)
        except Exception:
            return _say(False, what, f"it returned {got!r}; expected a pair (mean, sd)")
        if math.isclose(mean, want[0], abs_tol=1e-9) and math.isclose(sd, want[1], abs_tol=1e-9):
            continue
        if not math.isclose(mean, want[0], abs_tol=1e-9):
            return _say(False, what, f"mean of {values}: got {mean:.4g}, expected {want[0]:.4g}")
        hint = ""
        if math.isclose(sd, statistics.pstdev(values), abs_tol=1e-9):
            hint = (" Hint: that is the population sd (divided by n); over a few seeds the tables use the sample sd, "
                    "divided by n - 1 (statistics.stdev)")
        elif math.isclose(sd, statistics.variance(values), abs_tol=1e-9):
            hint = " Hint: that is the variance; take its square root"
        elif math.isclose(sd, statistics.stdev(values) / len(values) ** 0.5, abs_tol=1e-9):
            hint = " Hint: that is the standard error of the mean (sd / sqrt(n)), not the spread of the seeds"
        return _say(False, what, f"sd of {values}: got {sd:.4g}, expected {want[1]:.4g}.{hint}")
    return _say(True, what, "mean and sample standard deviation (n - 1) as the results tables report them")


def _lcs(a, b) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], (prev + 1 if x == y else max(row[j], row[j - 1]))
    return row[-1]


def check_rouge_l(fn, *, seed: int = 0) -> bool:
    """``fn(prediction, reference)`` with two lists of words must return ROUGE-L F1 in [0, 1]: the
    longest common subsequence (LCS) of the two, its precision LCS / len(prediction) and recall
    LCS / len(reference), and their harmonic mean.  Compared with ``rouge-score`` (no stemming) on
    lower-case sentences, including an empty prediction."""
    import rouge_score
    from rouge_score import rouge_scorer

    from .. import metrics

    what = f"check_rouge_l({_name(fn)})"
    scorer = rouge_scorer.RougeScorer(["rougeL", "rouge1"], use_stemmer=False)
    gen = torch.Generator().manual_seed(seed)
    words = "the council approved a new budget for schools on monday after a long vote".split()
    pairs = [("the council approved the budget on monday".split(), "on monday the council approved a new budget".split()),
             ("a vote on monday".split(), "the council held a long vote on the budget on monday".split()),
             ([], "the budget".split())]
    for _ in range(4):
        n, m = (int(x) for x in torch.randint(3, 12, (2,), generator=gen))
        pairs.append(([words[i] for i in torch.randint(0, len(words), (n,), generator=gen)],
                      [words[i] for i in torch.randint(0, len(words), (m,), generator=gen)]))
    for pred, ref in pairs:
        scores = scorer.score(" ".join(ref), " ".join(pred))
        want = scores["rougeL"].fmeasure
        got, error = _call(fn, list(pred), list(ref), answers=Answers(
            functions=(metrics.rouge, losses.rouge_reward, losses.prefix_rewards), modules=(rouge_score,)))
        if error:
            return _say(False, what, error if error.endswith("not implemented yet") or "answer" in error
                        else error + f" (prediction {pred}, reference {ref})")
        try:
            got = float(got)
        except Exception:
            return _say(False, what, f"it returned {got!r}; expected a number")
        if math.isclose(got, want, abs_tol=1e-6):
            continue
        hint = ""
        lcs = _lcs(pred, ref)
        if math.isclose(got, 100 * want, abs_tol=1e-4):
            hint = " Hint: rouge-score gives F1 in [0, 1]; the tables multiply by 100, this check does not"
        elif math.isclose(got, scores["rouge1"].fmeasure, abs_tol=1e-6) and lcs < sum(min(pred.count(w), ref.count(w))
                                                                                   for w in set(pred)):
            hint = " Hint: that is ROUGE-1 (words in common, in any order); ROUGE-L counts a common subsequence, in order"
        elif ref and math.isclose(got, lcs / len(ref), abs_tol=1e-6):
            hint = " Hint: that is the recall LCS / len(reference); F1 is 2 P R / (P + R)"
        elif pred and math.isclose(got, lcs / len(pred), abs_tol=1e-6):
            hint = " Hint: that is the precision LCS / len(prediction); F1 is 2 P R / (P + R)"
        elif lcs and not math.isclose(got, 0.0):
            hint = (" Hint: is your common part contiguous (a substring)? A subsequence may skip words: "
                    "dynamic programming, L[i][j] = L[i-1][j-1] + 1 if a_i = b_j else max(L[i-1][j], L[i][j-1])")
        return _say(False, what, f"prediction {' '.join(pred) or '(empty)'!r}, reference {' '.join(ref)!r}: got "
                                 f"{got:.4f}, rouge-score says {want:.4f}.{hint}")
    return _say(True, what, f"equals rouge-score's ROUGE-L F1 on {len(pairs)} pairs, an empty prediction included")
