"""check_attention accepts any correct attention (additive, dot-product) and rejects the usual mistakes."""
import torch
from torch import nn

from dca_course.exercises import check_attention
from dca_course.nn import AdditiveAttention


def masked_softmax(scores, mask):
    """The test's own masked softmax (the library's is the answer, which the check refuses)."""
    weights = torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), -1)
    return weights.masked_fill(~mask, 0.0)


class HandAdditive(nn.Module):
    """Additive attention written by hand: passes with scores='any', fails the dot-product form."""

    def __init__(self, query_size, key_size, attn_size):
        super().__init__()
        self.W_h, self.W_s = nn.Linear(key_size, attn_size, bias=False), nn.Linear(query_size, attn_size)
        self.v = nn.Linear(attn_size, 1, bias=False)

    def forward(self, query, keys, mask):
        scores = self.v(torch.tanh(self.W_h(keys) + self.W_s(query).unsqueeze(1))).squeeze(-1)
        weights = masked_softmax(scores, mask)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights


def dot_attention(query, keys, mask):
    """Luong et al. 2015's dot score, masked: a correct answer to the exercise."""
    scores = torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)          # (batch, src_len)
    weights = masked_softmax(scores, mask)
    return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights


def no_mask(query, keys, mask):
    weights = torch.softmax(torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1), -1)
    return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights


def zeroed_not_renormalised(query, keys, mask):
    weights = torch.softmax(torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1), -1) * mask
    return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights


def minus_inf(query, keys, mask):
    scores = torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, -1)
    return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights


def broadcast_matmul(query, keys, mask):
    weights = masked_softmax(torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1), mask)
    return weights @ keys, weights       # (batch, batch, key_size): every example mixed with every other


def softmax_over_batch(query, keys, mask):
    scores = torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1).masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, 0).masked_fill(~mask, 0.0)
    return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights


def wrong_context(query, keys, mask):
    context, weights = dot_attention(query, keys, mask)
    return keys.mean(1), weights


def detached(query, keys, mask):
    context, weights = dot_attention(query.detach(), keys.detach(), mask)
    return context, weights


def unfinished(query, keys, mask):
    raise NotImplementedError


def test_accepts_correct_attentions(capsys):
    torch.manual_seed(0)
    assert check_attention(dot_attention)
    assert check_attention(HandAdditive(6, 6, 5), scores="any")
    assert check_attention(HandAdditive(4, 9, 3), scores="any", query_size=4, key_size=9, batch=3, src_len=11)
    out = capsys.readouterr().out
    assert out.count("PASS") == 3 and "FAIL" not in out


def test_the_library_attention_fails_as_the_answer(capsys):
    from dca_course.nn import masked_softmax as library_softmax

    def uses_library_softmax(query, keys, mask):
        weights = library_softmax(torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1), mask)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights

    for fn, scores in ((AdditiveAttention(6, 6, 5), "any"), (AdditiveAttention(6, 6, 5), "dot"),
                       (uses_library_softmax, "dot")):
        _fails(fn, capsys, "the library's answer", scores=scores)


def test_the_dot_product_exercise_refuses_other_scores(capsys):
    _fails(HandAdditive(6, 6, 5), capsys, "not the dot product", "additive")
    _fails(lambda q, k, m: dot_attention(-q, k, m), capsys, "sign is flipped")
    _fails(lambda q, k, m: dot_attention(q / 6 ** 0.5, k, m), capsys, "scaled_dot")
    assert check_attention(lambda q, k, m: dot_attention(q / 6 ** 0.5, k, m), scores="scaled_dot")


def test_leaves_the_random_state_alone():
    torch.manual_seed(1)
    expected = torch.rand(3)
    torch.manual_seed(1)
    check_attention(dot_attention)
    assert torch.equal(torch.rand(3), expected)


def _fails(fn, capsys, *words, **kwargs):
    assert check_attention(fn, **kwargs) is False
    out = capsys.readouterr().out
    assert out.startswith("FAIL"), out
    for word in words:
        assert word in out, out
    return out


def test_rejects_the_usual_mistakes(capsys):
    _fails(no_mask, capsys, "padding gets attention")
    _fails(zeroed_not_renormalised, capsys, "sum to", "renormalising")
    _fails(minus_inf, capsys, "all padding", "finfo")
    _fails(broadcast_matmul, capsys, "context has shape", "bmm")
    _fails(softmax_over_batch, capsys, "sum to")
    _fails(wrong_context, capsys, "eq. (5)")
    _fails(detached, capsys, "gradient")
    _fails(unfinished, capsys, "not implemented")


def test_minus_inf_passes_without_empty_rows(capsys):
    assert check_attention(minus_inf, check_empty=False)


def test_a_module_that_ignores_padding_values_but_not_padding_length(capsys):
    class LengthSensitive(nn.Module):
        """Masks correctly but scales the scores by the padded width: results depend on padding."""

        def forward(self, query, keys, mask):
            scores = torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1) / keys.size(1)
            weights = masked_softmax(scores, mask)
            return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights

    _fails(LengthSensitive(), capsys, "more padding", scores="any")
