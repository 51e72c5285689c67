"""Exercise 02.3: the learner's attention trains notebook 02's model; a wrong one never starts training."""
import torch

from dca_course.data import Vocab
from dca_course.data.toy import load_toy
from dca_course.exercises import check_attention_trains, load_solution
from dca_course.nn import masked_softmax


def _data():
    train, valid, test = load_toy("dates", 1200, 50, 100, seed=0)
    return train, test, Vocab.build([ex.source + ex.target for ex in train])


def test_the_solution_trains_and_its_score_is_judged(capsys):
    train, test, vocab = _data()
    solution = load_solution("02.1")[0]
    assert check_attention_trains(solution, train, test, vocab, epochs=1, floor=0.0) is True
    out = capsys.readouterr().out
    assert "PASS check_attention_trains(dot_attention)" in out and "test exact match \u2248" in out
    assert check_attention_trains(solution, train, test, vocab, epochs=1, floor=1.01) is False
    assert "FAIL" in capsys.readouterr().out


def test_a_wrong_or_borrowed_attention_fails_before_training(capsys):
    train, test, vocab = _data()

    def unfinished(query, keys, mask):
        raise NotImplementedError

    def borrowed(query, keys, mask):
        weights = masked_softmax(torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1), mask)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights

    def flipped(query, keys, mask):
        return load_solution("02.1")[0](-query, keys, mask)

    for fn, words in ((unfinished, "not implemented"), (borrowed, "the library's answer"), (flipped, "sign is flipped")):
        assert check_attention_trains(fn, train, test, vocab) is False
        out = capsys.readouterr().out
        assert "exercise 02.1's check fails first" in out and words in out and "epoch" not in out, out
