"""The from-scratch GRU equals torch.nn.GRU; attention masks; gradcheck in float64."""
import pytest
import torch
from torch import nn

from dca_course.nn import GRU, AdditiveAttention, AttentionGRUCell, GRUCell, masked_softmax


def test_gru_equals_torch_gru():
    torch.manual_seed(0)
    ref = nn.GRU(5, 7, batch_first=True)
    ours = GRU.from_torch(ref)
    x, h0 = torch.randn(3, 6, 5), torch.randn(1, 3, 7)
    out_ref, h_ref = ref(x, h0)
    out, h = ours(x, h0)
    assert out.shape == (3, 6, 7) and h.shape == (1, 3, 7)
    assert torch.allclose(out, out_ref, atol=1e-6) and torch.allclose(h, h_ref, atol=1e-6)


def test_gru_equals_torch_gru_time_major():
    torch.manual_seed(1)
    ref = nn.GRU(4, 3)
    out_ref, _ = ref(torch.ones(5, 2, 4))
    assert torch.allclose(GRU.from_torch(ref)(torch.ones(5, 2, 4))[0], out_ref, atol=1e-6)


def test_paper_form_differs_from_cudnn_form():
    """Cho et al.'s eq. (8) resets before the matrix product; cuDNN after: not the same function."""
    torch.manual_seed(2)
    a = GRUCell(4, 6, reset_after=True)
    b = GRUCell(4, 6, reset_after=False)
    b.load_state_dict(a.state_dict())
    x, h = torch.randn(2, 4), torch.randn(2, 6)
    assert not torch.allclose(a(x, h), b(x, h), atol=1e-4)


def test_update_gate_one_keeps_the_state():
    cell = GRUCell(2, 3)
    with torch.no_grad():
        cell.bias_ih[3:6] = 100.0  # z -> 1: eq. (7) keeps h_{t-1}
    h = torch.randn(4, 3)
    assert torch.allclose(cell(torch.randn(4, 2), h), h, atol=1e-6)


def test_mask_carries_state_over_padding():
    torch.manual_seed(3)
    gru = GRU(3, 4)
    x = torch.randn(2, 5, 3)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], dtype=torch.bool)
    _, h = gru(x, mask=mask)
    _, h_short = gru(x[1:, :2])
    assert torch.allclose(h[0, 1], h_short[0, 0])


def test_gates_are_returned_with_time_axis():
    out, h, gates = GRU(3, 4)(torch.randn(2, 5, 3), return_gates=True)
    assert gates["z"].shape == gates["r"].shape == (2, 5, 4)
    assert ((gates["z"] > 0) & (gates["z"] < 1)).all()


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_cell_gradcheck(reset_after):
    torch.manual_seed(4)
    cell = GRUCell(3, 4, reset_after=reset_after).double()
    x = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
    h = torch.randn(2, 4, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, h: cell(x, h), (x, h))


def test_attention_gru_cell_zero_gate_keeps_state_and_gradchecks():
    torch.manual_seed(5)
    cell = AttentionGRUCell(3, 4).double()
    x = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
    h = torch.randn(2, 4, dtype=torch.double, requires_grad=True)
    g = torch.tensor([0.0, 0.7], dtype=torch.double, requires_grad=True)
    out = cell(x, h, g)
    assert torch.allclose(out[0], h[0])
    assert torch.autograd.gradcheck(lambda x, h, g: cell(x, h, g), (x, h, g))


def test_masked_softmax_gives_exact_zeros_and_sums_to_one():
    scores = torch.randn(3, 6) * 50
    mask = torch.tensor([[1, 1, 1, 0, 0, 0], [1, 0, 1, 0, 1, 1], [0, 0, 0, 0, 0, 0]], dtype=torch.bool)
    p = masked_softmax(scores, mask)
    assert (p[~mask] == 0).all()
    assert torch.allclose(p[:2].sum(-1), torch.ones(2))
    assert not torch.isnan(p).any() and (p[2] == 0).all()  # an all-padding row: zeros, no NaN


def test_additive_attention_masks_padding_and_averages_keys():
    torch.manual_seed(6)
    attn = AdditiveAttention(4, 6, 5)
    keys = torch.randn(2, 7, 6)
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 4:] = False
    context, w = attn(torch.randn(2, 4), keys, mask)
    assert w.shape == (2, 7) and context.shape == (2, 6)
    assert (w[1, 4:] == 0).all()
    assert torch.allclose(w.sum(-1), torch.ones(2))
    assert torch.allclose(context, (w.unsqueeze(-1) * keys).sum(1), atol=1e-6)
    # padding content cannot leak into the context
    keys2 = keys.clone()
    keys2[1, 4:] = 1e3
    assert torch.allclose(attn(torch.zeros(2, 4), keys2, mask)[0][1], attn(torch.zeros(2, 4), keys, mask)[0][1])


def test_additive_attention_gradcheck_with_coverage():
    torch.manual_seed(7)
    attn = AdditiveAttention(3, 4, 5, coverage=True).double()
    q = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
    k = torch.randn(2, 5, 4, dtype=torch.double, requires_grad=True)
    cov = torch.rand(2, 5, dtype=torch.double, requires_grad=True)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    assert torch.autograd.gradcheck(lambda q, k, c: attn(q, k, mask, coverage=c), (q, k, cov))


def test_coverage_requires_a_coverage_attention():
    attn = AdditiveAttention(3, 4, 5)
    with pytest.raises(ValueError):
        attn(torch.randn(1, 3), torch.randn(1, 2, 4), torch.ones(1, 2, dtype=torch.bool), coverage=torch.zeros(1, 2))


# -- the shared bidirectional encoder (dca_course.nn.encoders) -------------------------------------
def test_reverse_padded_reverses_each_row_within_its_length_and_leaves_padding():
    from dca_course.nn.encoders import reverse_padded

    x = torch.arange(3 * 5 * 2).view(3, 5, 2)
    lengths = torch.tensor([5, 3, 0])
    out = reverse_padded(x, lengths)
    for n, k in enumerate(lengths.tolist()):
        assert torch.equal(out[n, :k], x[n, :k].flip(0))          # the real words, backwards
        assert torch.equal(out[n, k:], x[n, k:])                  # the padding, where it was
    assert torch.equal(reverse_padded(out, lengths), x)           # its own inverse
    assert torch.equal(reverse_padded(x[..., 0], lengths), out[..., 0])   # any trailing dimensions


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_birnn_equals_a_packed_bidirectional_rnn(cell):
    """The two one-directional RNNs over a padded batch give a packed bi-RNN's outputs at every real
    position, and its final states."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    from dca_course.nn.encoders import BiRNN

    torch.manual_seed(0)
    ours = BiRNN(4, 3, cell).double()
    ref = {"lstm": nn.LSTM, "gru": nn.GRU}[cell](4, 3, batch_first=True, bidirectional=True).double()
    with torch.no_grad():
        for name, p in ours.fwd.named_parameters():
            getattr(ref, name).copy_(p)
        for name, p in ours.bwd.named_parameters():
            getattr(ref, name + "_reverse").copy_(p)
    lengths = torch.tensor([6, 2, 4])
    x = torch.randn(3, 6, 4, dtype=torch.float64)
    out, last = ours(x, lengths)
    packed, h_n = ref(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    h_n = h_n[0] if cell == "lstm" else h_n
    ref_out, _ = pad_packed_sequence(packed, batch_first=True)
    for n, k in enumerate(lengths.tolist()):
        assert torch.allclose(out[n, :k], ref_out[n, :k], atol=1e-12)
    assert torch.allclose(last, torch.cat([h_n[0], h_n[1]], dim=-1), atol=1e-12)   # [->h_n; <-h_1]


def test_the_copying_models_share_one_encoder():
    from dca_course.models import DCA
    from dca_course.models.copynet import CopyNet
    from dca_course.models.pointer_generator import PointerGenerator
    from dca_course.nn.encoders import BiRNN, BiRNNEncoder

    assert isinstance(PointerGenerator(20, 4, 3).encoder, BiRNNEncoder)
    assert isinstance(CopyNet(20, 4, 3).encoder, BiRNNEncoder)
    dca = DCA(20, 4, 3, context_layers=1)
    assert all(isinstance(layer, BiRNN) for layer in [dca.local, *dca.contexts])
