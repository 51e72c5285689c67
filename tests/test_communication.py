"""experiments/communication.py: what the messages carry, and what a paired difference over seeds allows one to say."""
import pytest
import torch

from conftest import load_script  # noqa: E402  (tests/ is on sys.path under pytest)
from dca_course.data import Vocab
from dca_course.data.agents import collate_agents
from dca_course.data.synthnews import load_synthnews
from dca_course.models import DCA

communication = load_script("communication")


class AgentBatches:
    """The one method of a recipe that message_reach uses."""

    def make_batch(self, examples, vocab):
        return collate_agents(examples, vocab, 3, 800, 60)


@pytest.fixture(scope="module")
def articles():
    train, _, test = load_synthnews(50, 0, 6, seed=0, long=True)
    return Vocab.build([ex.source + ex.target for ex in train], max_size=500), test


@pytest.mark.parametrize("k", [0, 1, 2])
def test_message_reach_is_zero_exactly_when_agents_never_talk(articles, k):
    vocab, test = articles
    torch.manual_seed(0)
    model = DCA(len(vocab), 16, 16, context_layers=k).eval()
    reach = communication.message_reach(model, AgentBatches(), vocab, test)
    assert (reach == 0.0) if k == 0 else (reach > 1e-3)


def rows(k_minus_0):
    """Three seeds' scores: K = 0 at 0.5, K = 1 at 0.5 plus the given differences."""
    out = {}
    for s, d in zip(communication.SEEDS, k_minus_0):
        out[(0, s)], out[(1, s)] = {"m": 0.5}, {"m": 0.5 + d}
    return out


@pytest.mark.parametrize("diffs, verdict", [
    ([0.10, 0.11, 0.12], "higher"),                                  # far beyond two standard errors
    ([-0.10, -0.11, -0.12], "lower"),
    ([0.10, -0.05, 0.02], "not distinguishable at this size"),       # the sign changes with the seed
    ([0.0, 0.0, 0.0], "not distinguishable at this size"),
])
def test_paired_says_only_what_two_standard_errors_allow(diffs, verdict):
    result = communication.paired(rows(diffs), "m", 1)
    assert result["verdict"] == verdict
    assert result["mean"] == pytest.approx(sum(diffs) / 3, abs=1e-4)


def test_paired_against_another_base_subtracts_that_base():
    scores = rows([0.10, 0.11, 0.12])
    for s in communication.SEEDS:
        scores[(2, s)] = {"m": scores[(1, s)]["m"] + 0.01 * (s + 1)}     # K = 2 a little above K = 1, seed by seed
    assert communication.paired(scores, "m", 2, 1)["diffs"] == [0.01, 0.02, 0.03]
    assert communication.paired(scores, "m", 2)["diffs"] == [0.11, 0.13, 0.15]
