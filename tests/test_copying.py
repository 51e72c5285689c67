"""Copying and coverage: CopyNet, the pointer-generator, coverage, beam search, fact metrics, `score`."""
import functools
import json
from pathlib import Path

import pytest
import torch

from dca_course import metrics, seed_everything
from dca_course.__main__ import main
from dca_course.data import Example, Vocab
from dca_course.data.batching import collate
from dca_course.decoding import (beam_search, beam_search_one_by_one, greedy, mask_impossible, sample,
                                 select_example)
from dca_course.losses import coverage_loss, sequence_nll
from dca_course.models.copynet import CopyNet, copy_mix, selective_read
from dca_course.models.pointer_generator import PointerGenerator, final_distribution
from dca_course.models.seq2seq import Seq2Seq

CNNDM = Path(__file__).resolve().parents[2] / "shared/data/cnndm"
EOS = Vocab.eos_id


def _batch():
    """Three sources of different lengths; OOV words, one of them at two positions."""
    vocab = Vocab("the a of cat dog sat on mat and".split())          # V = 13
    exs = [Example("the zork sat on the mat zork".split(), "zork sat qux".split()),
           Example("a dog and a cat".split(), "dog cat".split()),
           Example("blip blop the cat sat blip on blop mat".split(), "blop cat the blip".split())]
    return vocab, collate(exs, vocab)


def _models(V):
    seed_everything(0)
    return {"pointer-gen": PointerGenerator(V, 8, 12),
            "pointer-gen+cov": PointerGenerator(V, 8, 12, coverage=True),
            "copynet": CopyNet(V, 8, 12)}


# -- the final distributions -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pointer-gen", "pointer-gen+cov", "copynet"])
def test_distribution_over_extended_vocab_sums_to_one_and_matches_steps(name):
    vocab, batch = _batch()
    model = _models(len(vocab))[name].eval()
    out = model(batch)
    T = batch.tgt_out.size(1)
    assert batch.n_oov == 2
    assert out["log_probs"].shape == (3, T, len(vocab) + 2)
    assert torch.allclose(out["log_probs"].exp().sum(-1), torch.ones(3, T), atol=1e-5)


def lstm_cell_by_hand(cell, x, h, c):
    """One LSTM step from its four gates (PyTorch's order i, f, g, o), one example at a time."""
    gates = cell.weight_ih @ x + cell.bias_ih + cell.weight_hh @ h + cell.bias_hh
    i, f, g, o = gates.chunk(4)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def pointer_generator_step_by_hand(model, b, y, h, c, context, coverage, keys, length, src_ext):
    """See et al.'s step for example ``b`` from the equations, word by word (input feeding on):
    x_t = W_x [E y; h*_{t-1}], s_t = LSTM(x_t), e_i = v^T tanh(W_h h_i + W_s s_t + w_c c_i + b_attn)
    (1)/(11), a = softmax(e) over the source's words (2), h* = sum_i a_i h_i (3), P_vocab (4),
    p_gen (8) and P(w) = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_i (9).  Returns P and the
    next (h, c, h*, c^{t+1})."""
    V = model.vocab_size
    e_y = model.embedding.weight[y if y < V else model.unk_id]
    x = model.input_proj.weight @ torch.cat([e_y, context]) + model.input_proj.bias
    s, c = lstm_cell_by_hand(model.cell, x, h, c)
    att = model.attention
    scores = []
    for i in range(length):
        feat = att.W_h.weight @ keys[i] + att.W_s.weight @ s + att.W_s.bias
        if model.coverage:
            feat = feat + att.w_c.weight[:, 0] * coverage[i]
        scores.append(att.v.weight[0] @ torch.tanh(feat))
    a = torch.softmax(torch.stack(scores), 0)
    h_star = sum(a[i] * keys[i] for i in range(length))
    p_vocab = torch.softmax(model.out.weight @ (model.out_hidden.weight @ torch.cat([s, h_star])
                                                + model.out_hidden.bias) + model.out.bias, 0)
    p_gen = torch.sigmoid(model.p_gen_linear.weight[0] @ torch.cat([h_star, s, x]) + model.p_gen_linear.bias[0])
    P = torch.zeros(V + 2)
    P[:V] = p_gen * p_vocab
    for i in range(length):
        P[src_ext[i]] += (1 - p_gen) * a[i]
    new_coverage = coverage.clone()
    new_coverage[:length] += a
    return P, (s, c, h_star, new_coverage)


@pytest.mark.parametrize("name", ["pointer-gen", "pointer-gen+cov"])
def test_pointer_generator_step_is_the_papers_equations_computed_by_hand(name):
    """Two steps of ``model.step`` against See et al.'s equations computed word by word above, with
    w_c set away from zero so that coverage (eqs. 10-11) moves the attention of the second step,
    and the second step reading a copied OOV word as UNK (the encoder is not what this checks)."""
    vocab, batch = _batch()
    model = _models(len(vocab))[name].eval()
    with torch.no_grad():
        model.attention.w_c.weight.copy_(torch.linspace(-2.0, 2.0, model.attention.w_c.weight.numel()).view(-1, 1))
        state = model.encode(batch)
        lengths = batch.src_mask.sum(1).tolist()
        mine = [(state["h"][b], state["c"][b], state["context"][b], state["coverage"][b]) for b in range(3)]
        y_prev = torch.cat([batch.tgt_in[:, :1], batch.tgt_out[:, :-1]], 1)
        assert (y_prev[:, 1] >= len(vocab)).any()                       # a copied OOV word is read
        for t in range(2):
            lp, state, _ = model.step(y_prev[:, t], state)
            for b in range(3):
                P, mine[b] = pointer_generator_step_by_hand(model, b, int(y_prev[b, t]), *mine[b], state["keys"][b],
                                                            lengths[b], batch.src_ext[b].tolist())
                assert torch.allclose(lp[b].exp(), P, atol=1e-6), (name, t, b)


def copynet_step_by_hand(model, y, s, copy_prev, keys, length, src_ext):
    """Gu et al.'s step for one example from the equations, position by position: the selective read
    zeta = sum_j rho_j h_j, rho_j = p(x_j, c) / K where x_j = y_{t-1} (9); the attentive read c_t with
    s_{t-1}; s_t = GRU([e(y); zeta; c_t], s_{t-1}); psi_g = W_o s_t (7), psi_c(x_j) = tanh(h_j^T W_c) s_t
    (8); one softmax over both modes (5), (6), a word's two modes and repeated positions added (4).
    Returns P and (s_t, p(x_j, c) of this step)."""
    V = model.vocab_size
    where = [j for j in range(length) if src_ext[j] == y]
    K = sum(copy_prev[j] for j in where)
    zeta = sum((copy_prev[j] / K * keys[j] for j in where), torch.zeros(keys.size(1))) if where and K > 0 \
        else torch.zeros(keys.size(1))
    att = model.attention
    a = torch.softmax(torch.stack([att.v.weight[0] @ torch.tanh(att.W_h.weight @ keys[j] + att.W_s.weight @ s
                                                                + att.W_s.bias) for j in range(length)]), 0)
    context = sum(a[j] * keys[j] for j in range(length))
    x = torch.cat([model.embedding.weight[y if y < V else model.unk_id], zeta, context])
    cell, H = model.cell, s.numel()
    gi, gh = cell.weight_ih @ x + cell.bias_ih, cell.weight_hh @ s + cell.bias_hh       # r, z, n
    r, z = torch.sigmoid(gi[:H] + gh[:H]), torch.sigmoid(gi[H:2 * H] + gh[H:2 * H])
    n = torch.tanh(gi[2 * H:] + r * gh[2 * H:])
    s = (1 - z) * n + z * s
    psi_g = model.W_o.weight @ s + model.W_o.bias
    psi_c = torch.stack([torch.tanh(model.W_c.weight @ keys[j] + model.W_c.bias) @ s for j in range(length)])
    Z = psi_g.exp().sum() + psi_c.exp().sum()
    P = torch.zeros(V + 2)
    P[:V] = psi_g.exp() / Z
    copy = torch.zeros(copy_prev.numel())
    for j in range(length):
        copy[j] = psi_c[j].exp() / Z
        P[src_ext[j]] += copy[j]
    return P, (s, copy)


def test_copynet_step_is_the_papers_equations_computed_by_hand():
    """Three steps of CopyNet's ``step`` against Gu et al.'s equations computed position by position
    above; the later steps read reference words found in the source (a selective read, over two
    positions for a repeated OOV word)."""
    vocab, batch = _batch()
    model = _models(len(vocab))["copynet"].eval()
    with torch.no_grad():
        state = model.encode(batch)
        lengths = batch.src_mask.sum(1).tolist()
        mine = [(state["s"][b], state["copy"][b]) for b in range(3)]
        y_prev = torch.cat([batch.tgt_in[:, :1], batch.tgt_out[:, :-1]], 1)
        reads = 0
        for t in range(3):
            lp, state, info = model.step(y_prev[:, t], state)
            for b in range(3):
                P, mine[b] = copynet_step_by_hand(model, int(y_prev[b, t]), *mine[b], state["keys"][b], lengths[b],
                                                  batch.src_ext[b].tolist())
                assert torch.allclose(lp[b].exp(), P, atol=1e-6), (t, b)
                assert torch.allclose(state["copy"][b], mine[b][1], atol=1e-7)
            reads += int((info["selective"] > 0).sum())
        assert reads >= 3


def test_final_distribution_sums_attention_of_repeated_words():
    # V = 4; source "w2 OOV0 w2 OOV0 OOV1" with attention .1 .2 .3 .15 .25
    p_vocab = torch.tensor([[0.1, 0.2, 0.3, 0.4]])
    attn = torch.tensor([[0.1, 0.2, 0.3, 0.15, 0.25]])
    src_ext = torch.tensor([[2, 4, 2, 4, 5]])
    p_gen = torch.tensor([[0.6]])
    P = final_distribution(p_vocab, attn, p_gen, src_ext, n_oov=2)[0]
    expected = torch.tensor([0.06, 0.12, 0.18 + 0.4 * 0.4, 0.24, 0.4 * 0.35, 0.4 * 0.25])
    assert torch.allclose(P, expected)
    assert torch.isclose(P.sum(), torch.tensor(1.0))


def test_pointer_generator_oov_word_gets_the_attention_of_all_its_positions():
    vocab, batch = _batch()
    model = _models(len(vocab))["pointer-gen"].eval()
    out = model(batch)
    V = len(vocab)
    zork = batch.src_ext[0] == V                                         # positions 1 and 6
    assert zork.sum() == 2
    copy_mass = (1 - out["p_gen"][0]) * (out["attn"][0] * zork).sum(-1)  # (T,)
    assert torch.allclose(out["log_probs"][0, :, V].exp(), copy_mass, atol=1e-6)
    # an in-vocabulary source word gets generation and copy mass: more than its copy mass alone
    sat = batch.src_ext[0] == vocab.stoi["sat"]
    assert (out["log_probs"][0, :, vocab.stoi["sat"]].exp()
            > (1 - out["p_gen"][0]) * (out["attn"][0] * sat).sum(-1)).all()


def test_copynet_one_softmax_and_repeated_positions():
    gen = torch.tensor([[0.5, -1.0, 2.0, 0.0]])                          # psi_g over V = 4
    cop = torch.tensor([[1.0, 0.3, -0.5, 2.0, 9.0]])                     # psi_c; last is padding
    src_ext = torch.tensor([[2, 4, 2, 4, 0]])
    mask = torch.tensor([[True, True, True, True, False]])
    probs, p_pos = copy_mix(gen, cop, src_ext, mask, n_oov=1)
    Z = gen.exp().sum() + cop[0, :4].exp().sum()                          # eq. (6): no padding
    e = torch.exp
    expected = torch.stack([e(gen[0, 0]), e(gen[0, 1]), e(gen[0, 2]) + e(cop[0, 0]) + e(cop[0, 2]),
                            e(gen[0, 3]), e(cop[0, 1]) + e(cop[0, 3])]) / Z
    assert torch.allclose(probs[0], expected)
    assert p_pos[0, 4] == 0 and torch.allclose(p_pos[0, :4], cop[0, :4].exp() / Z)
    # in the model: an OOV word's probability is the sum of the copy probabilities of its positions
    vocab, batch = _batch()
    model = _models(len(vocab))["copynet"].eval()
    out = model(batch)
    blop = batch.src_ext[2] == len(vocab) + 1                            # positions 1 and 7
    assert blop.sum() == 2
    assert torch.allclose(out["log_probs"][2, :, len(vocab) + 1].exp(), (out["copy"][2] * blop).sum(-1), atol=1e-6)
    assert torch.allclose(out["p_copy"], out["copy"].sum(-1))


def test_selective_read():
    keys = torch.arange(12, dtype=torch.float).view(1, 4, 3)
    src_ext = torch.tensor([[5, 7, 5, 9]])
    mask = torch.ones(1, 4, dtype=torch.bool)
    prev = torch.tensor([[0.2, 0.3, 0.1, 0.4]])
    zeta, rho = selective_read(torch.tensor([5]), prev, src_ext, mask, keys)
    assert torch.allclose(rho, torch.tensor([[2 / 3, 0, 1 / 3, 0]]))
    assert torch.allclose(zeta, 2 / 3 * keys[0, 0] + 1 / 3 * keys[0, 2])
    zeta, rho = selective_read(torch.tensor([6]), prev, src_ext, mask, keys)   # not in the source
    assert (zeta == 0).all() and (rho == 0).all()
    # in the model.  Source 0 is "the zork sat on the mat zork", its target "zork sat qux </s>"
    vocab, batch = _batch()
    out = _models(len(vocab))["copynet"].eval()(batch)
    sel, copy = out["selective"], out["copy"]
    assert (sel[:, 0] == 0).all()                                   # after <s>
    both = torch.tensor([1, 6])                                     # after "zork": renormalised
    assert torch.allclose(sel[0, 1, both], copy[0, 0, both] / copy[0, 0, both].sum())
    assert float(sel[0, 1].sum().detach()) == pytest.approx(1.0) and (sel[0, 1, [0, 2, 3, 4, 5]] == 0).all()
    assert torch.allclose(sel[0, 2], torch.eye(9)[2])               # after "sat": its one position
    assert batch.tgt_out[0, 2] == vocab.unk_id and (sel[0, 3] == 0).all()   # after UNK ("qux")


# -- decoder inputs ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pointer-gen", "copynet"])
def test_decoder_never_reads_extended_ids(name):
    vocab, batch = _batch()
    V = len(vocab)
    model = _models(V)[name].eval()
    with torch.no_grad():                      # make the model copy, so that OOV words come out
        if name == "copynet":
            model.W_o.bias.fill_(-30.0)
        else:
            model.p_gen_linear.bias.fill_(-30.0)
    seen = []
    model.embedding.register_forward_pre_hook(lambda mod, args: seen.append(int(args[0].max())))
    model(batch)
    g = greedy(model, batch, max_len=6)
    b = beam_search(model, batch, 3, max_len=6)
    assert any(i >= V for ids in g.ids + b.ids for i in ids)      # extended ids were chosen...
    assert seen and max(seen) < V                                  # ...and never read as such


# -- coverage ----------------------------------------------------------------------------------
def test_coverage_is_the_attention_of_past_steps():
    vocab, batch = _batch()
    out = _models(len(vocab))["pointer-gen+cov"].eval()(batch)
    attn, cov = out["attn"], out["coverage"]
    assert (cov[:, 0] == 0).all()
    for t in range(attn.size(1)):
        assert torch.allclose(cov[:, t], attn[:, :t].sum(1), atol=1e-6)


def test_coverage_loss_hand_example():
    attn = torch.tensor([[[0.5, 0.5, 0.0], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]]])
    cov = torch.tensor([[[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.7, 1.2, 0.1]]])
    mask = torch.tensor([[True, True, False]])
    # step 0: 0; step 1: .2 + .5 + 0 = .7; step 2 is padding
    assert torch.isclose(coverage_loss(attn, cov, mask), torch.tensor(0.35))
    assert torch.isclose(coverage_loss(attn, cov, torch.ones(1, 3, dtype=torch.bool)), torch.tensor((0.7 + 0.7) / 3))


def test_switching_coverage_on_keeps_the_model_then_trains_w_c():
    vocab, batch = _batch()
    model = _models(len(vocab))["pointer-gen"]
    w_c = model.attention.w_c.weight
    before = model(batch)["log_probs"]
    before.sum().backward()
    assert w_c.grad is not None and (w_c.grad == 0).all()      # in the graph, but not trained
    model.zero_grad()
    model.set_coverage(True)
    assert model.config["coverage"] is True
    after = model(batch)
    assert torch.allclose(after["log_probs"], before)            # w_c = 0: same model
    (after["log_probs"].sum() + coverage_loss(after["attn"], after["coverage"], batch.tgt_mask)).backward()
    assert w_c.grad.abs().sum() > 0


def test_bidirectional_encoder_ignores_padding():
    vocab, batch = _batch()
    for model in _models(len(vocab)).values():
        model.eval()
        keys = model.encode(batch)["keys"]
        for i in range(3):
            alone = model.encode(select_example(batch, i))["keys"][0]
            assert torch.allclose(keys[i, : alone.size(0)], alone, atol=1e-6)
            assert (keys[i, alone.size(0):] == 0).all()


# -- beam search -------------------------------------------------------------------------------
def _beam_batch():
    """Five examples of different lengths, OOV words (some repeated), targets of 2 to 7 words."""
    vocab = Vocab("the a of cat dog sat on mat and".split())
    texts = [("the zork sat on the mat zork", "zork sat on the mat"),
             ("a dog and a cat", "dog cat"),
             ("blip blop the cat sat blip on blop mat", "blop cat sat on the mat blip"),
             ("the dog of the cat sat", "the cat of the dog sat"),
             ("quux sat on a dog and quux sat", "quux sat on a dog")]
    return vocab, collate([Example(s.split(), t.split()) for s, t in texts], vocab)


@functools.lru_cache(maxsize=None)
def _beam_model(name):
    """A model trained for a few steps on :func:`_beam_batch` (unsure enough that beams differ), float64."""
    vocab, batch = _beam_batch()
    V = len(vocab)
    seed_everything(0)
    model = {"pointer-gen+cov": lambda: PointerGenerator(V, 8, 12, coverage=True),
             "copynet": lambda: CopyNet(V, 8, 12), "seq2seq": lambda: Seq2Seq(V, 8, 12)}[name]()
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    for _ in range(10):
        loss = sequence_nll(model(batch)["log_probs"], batch.tgt_out, batch.tgt_mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.double().eval()


@pytest.mark.parametrize("name", ["pointer-gen+cov", "copynet", "seq2seq"])
def test_batched_beam_search_equals_one_example_at_a_time(name):
    vocab, batch = _beam_batch()
    model = _beam_model(name)
    differs, lengths = False, set()
    for K, kw in [(3, {}), (4, dict(min_len=3)), (4, dict(length_penalty=0.0, max_len=7)), (3, dict(count_bos=True))]:
        kw = {"max_len": 10, **kw}
        fast = beam_search(model, batch, K, return_info=True, **kw)
        slow = beam_search_one_by_one(model, batch, K, return_info=True, **kw)
        assert fast.ids == slow.ids
        assert torch.allclose(fast.scores, slow.scores)
        assert torch.allclose(fast.info["attn"], slow.info["attn"])
        assert all(kw.get("min_len", 0) <= len(ids) <= kw["max_len"] for ids in fast.ids)
        differs |= fast.ids != greedy(model, batch, kw["max_len"]).ids
        lengths |= {len(ids) for ids in fast.ids}
    assert len(lengths) > 2                         # hypotheses ended at different steps
    assert differs                                  # the beam found something greedy did not


def test_beam_search_can_block_repeated_trigrams():
    vocab, batch = _beam_batch()
    model = _beam_model("seq2seq")
    kw = dict(max_len=10, min_len=3)
    plain = beam_search(model, batch, 4, **kw)
    assert any(metrics.repeated_ngram_rate(ids, 3) > 0 for ids in plain.ids)
    fast = beam_search(model, batch, 4, block_ngram_repeat=3, **kw)
    assert fast.ids == beam_search_one_by_one(model, batch, 4, block_ngram_repeat=3, **kw).ids
    assert all(metrics.repeated_ngram_rate(ids, 3) == 0 for ids in fast.ids)


@pytest.mark.parametrize("name", ["pointer-gen+cov", "copynet", "seq2seq"])
def test_beam_of_one_is_greedy(name):
    vocab, batch = _beam_batch()
    model = _beam_model(name)
    assert beam_search(model, batch, 1, max_len=9).ids == greedy(model, batch, 9).ids


def test_beam_search_scores_are_length_normalised_log_probs():
    vocab, batch = _beam_batch()
    model = _beam_model("pointer-gen+cov")
    for count_bos in (False, True):                 # See et al.'s code counts <s> in the length too
        d = beam_search(model, batch, 3, max_len=10, count_bos=count_bos)
        for i, ids in enumerate(d.ids):             # re-score the best hypothesis step by step
            one = select_example(batch, i)
            state, y, total = model.encode(one), torch.tensor([vocab.bos_id]), 0.0
            ended = len(ids) < 10
            for w in ids + ([EOS] if ended else []):
                lp, state, _ = model.step(y, state)
                total += float(lp[0, w].detach())
                y = torch.tensor([w])
            assert abs(total / (count_bos + len(ids) + ended) - float(d.scores[i])) < 1e-9


# -- impossible columns of the extended vocabulary ---------------------------------------------
class _ForcesLastColumn(torch.nn.Module):
    """A copying model whose every step gives the *last* column of the batch's extended
    vocabulary log-probability 0 (probability 1, far above every real word).  For an article
    with fewer OOV words than the batch's widest, that column is no word at all."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.vocab_size = inner.vocab_size
        self.extended_vocab = True

    def encode(self, batch):
        return self.inner.encode(batch)

    def step(self, y_prev, state):
        log_probs, state, info = self.inner.step(y_prev, state)
        log_probs = log_probs.clone()
        log_probs[:, -1] = 0.0
        return log_probs, state, info


def _impossible_setting(name):
    vocab, batch = _beam_batch()
    counts = [len(o) for o in batch.oovs]
    assert batch.n_oov == 2 and counts == [1, 0, 2, 0, 1]   # only example 2 fills column V + 1
    return vocab, batch, counts, _ForcesLastColumn(_beam_model(name))


def _check_no_impossible_ids(all_ids, V, counts):
    for ids, n in zip(all_ids, counts):
        assert all(w < V + n for w in ids), (ids, V, n)
    assert V + 1 in all_ids[2]                      # the forced column is chosen where it is a word


def test_mask_impossible_sets_only_columns_beyond_each_rows_oovs():
    lp = torch.zeros(3, 6)                                       # V = 3, n_oov = 3
    state = {"oov_mask": torch.tensor([[True, False, False], [True, True, True], [False, False, False]])}
    masked = mask_impossible(lp, state)
    inf = float("-inf")
    assert masked.tolist() == [[0, 0, 0, 0, inf, inf], [0] * 6, [0, 0, 0, inf, inf, inf]]
    assert mask_impossible(lp, {"h": lp}) is lp                  # a model that cannot copy: untouched


@pytest.mark.parametrize("name", ["pointer-gen+cov", "copynet"])
def test_impossible_extended_ids_never_chosen_greedy_or_beam(name):
    vocab, batch, counts, model = _impossible_setting(name)
    V = len(vocab)
    _check_no_impossible_ids(greedy(model, batch, 6).ids, V, counts)
    for K, kw in [(1, {}), (3, {}), (4, dict(min_len=3, length_penalty=0.0))]:
        _check_no_impossible_ids(beam_search(model, batch, K, max_len=6, **kw).ids, V, counts)


@pytest.mark.parametrize("name", ["pointer-gen+cov", "copynet"])
def test_impossible_extended_ids_never_sampled(name):
    vocab, batch, counts, model = _impossible_setting(name)
    V = len(vocab)
    for seed in range(5):
        for temperature in (1.0, 20.0):
            gen = torch.Generator().manual_seed(seed)
            d = sample(model, batch, 6, generator=gen, temperature=temperature)
            for ids, n in zip(d.ids, counts):
                assert all(w < V + n for w in ids), (seed, temperature, ids, n)
            assert torch.isfinite(d.log_probs).all()
    d = sample(model, batch, 6, generator=torch.Generator().manual_seed(0))
    assert V + 1 in d.ids[2]                        # the forced column is sampled where it is a word


# -- gradcheck ---------------------------------------------------------------------------------
def test_gradcheck_mixing_functions():
    torch.manual_seed(0)
    d = dict(dtype=torch.float64, requires_grad=True)
    src_ext = torch.tensor([[2, 4, 2, 5], [1, 1, 3, 0]])
    mask = torch.tensor([[True] * 4, [True, True, True, False]])
    p_vocab = torch.softmax(torch.randn(2, 4, dtype=torch.float64), -1).requires_grad_()
    attn = torch.softmax(torch.randn(2, 4, dtype=torch.float64), -1).requires_grad_()
    p_gen = torch.rand(2, 1, **d)
    assert torch.autograd.gradcheck(lambda a, b, c: final_distribution(a, b, c, src_ext, 2), (p_vocab, attn, p_gen))
    gen, cop = torch.randn(2, 4, **d), torch.randn(2, 4, **d)
    assert torch.autograd.gradcheck(lambda g, c: copy_mix(g, c, src_ext, mask, 2), (gen, cop))
    prev, keys = torch.rand(2, 4, **d), torch.randn(2, 4, 3, **d)
    assert torch.autograd.gradcheck(
        lambda p, k: selective_read(torch.tensor([2, 1]), p, src_ext, mask, k), (prev, keys))
    a, c = torch.rand(2, 3, 4, **d), torch.rand(2, 3, 4, **d)
    tmask = torch.tensor([[True, True, False], [True, True, True]])
    assert torch.autograd.gradcheck(lambda a, c: coverage_loss(a, c, tmask), (a, c))


# -- metrics -----------------------------------------------------------------------------------
def test_fact_recall_and_hallucinated_entities():
    facts = {"key_facts": ["orvena labs", "tamsa", "42"], "all_entity_tokens": ["orvena", "tamsa", "brix"]}
    source = "orvena labs bought tamsa for 42 million".split()
    assert metrics.fact_recall("tamsa was bought by orvena labs".split(), facts) == pytest.approx(2 / 3)
    assert metrics.fact_recall("orvena bought labs".split(), facts) == 0.0        # not contiguous
    pred = "brix bought tamsa and velok".split()
    assert metrics.hallucinated_entities(pred, source, facts) == ["brix"]
    assert metrics.hallucinated_entities(pred, source, facts, {"velok"}) == ["brix", "velok"]
    exs = [Example(source, [], facts=facts), Example(source, [], facts=dict(facts, key_facts=["42"]))]
    out = metrics.fact_metrics([pred, "42 velok".split()], exs)
    assert out == {"fact_recall": pytest.approx((1 / 3 + 1) / 2), "hallucinated_entities": 0.5}
    assert metrics.fact_metrics([pred], [Example(source, [])]) == {}
    assert metrics.oov_entity_recall(["tamsa"], {"entity_tokens": ["orvena", "tamsa"]}, {"orvena"}) == 1.0


# -- the score command -------------------------------------------------------------------------
def test_score_command(tmp_path, capsys):
    (tmp_path / "p").write_text("the cat sat .\tit ran home .\na dog\n")
    (tmp_path / "r").write_text("the cat sat .\tit ran away .\na dog\n")
    assert main(["score", "--pred", str(tmp_path / "p"), "--ref", str(tmp_path / "r"), "--sents"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # rouge-score drops punctuation: 5 of 6 words shared on the first line
    assert out["n"] == 2 and out["rouge1"] == pytest.approx(100 * (1 + 5 / 6) / 2, abs=1e-3)
    assert out["rougeLsum"] == pytest.approx(100 * (1 + 5 / 6) / 2, abs=1e-3)
    (tmp_path / "short").write_text("the cat\n")
    assert main(["score", "--pred", str(tmp_path / "p"), "--ref", str(tmp_path / "short")]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "p") in err and str(tmp_path / "short") in err


SEE_FILES = ("see2017_outputs/pointer-gen-cov.test.pred.sents.tsv", "test.target.sents.tsv")


def _score_see(tmp_path, capsys, lines=None):
    paths = []
    for name in SEE_FILES:
        path = CNNDM / name
        if lines is not None:
            path = tmp_path / Path(name).name
            with open(CNNDM / name, encoding="utf-8") as fh:
                path.write_text("".join(next(fh) for _ in range(lines)), encoding="utf-8")
        paths.append(str(path))
    assert main(["score", "--pred", paths[0], "--ref", paths[1], "--sents"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.mark.skipif(not CNNDM.is_dir(), reason=f"{CNNDM} is absent")
def test_score_see2017_first_300(tmp_path, capsys):
    """The first 300 test articles (CNN's, which score lower than the set as a whole)."""
    out = _score_see(tmp_path, capsys, lines=300)
    assert out["n"] == 300
    assert out["rouge1"] == pytest.approx(29.69, abs=0.05)
    assert out["rouge2"] == pytest.approx(10.84, abs=0.05)
    assert out["rougeLsum"] == pytest.approx(26.90, abs=0.05)


@pytest.mark.skipif(not CNNDM.is_dir(), reason=f"{CNNDM} is absent")
@pytest.mark.skipif(not CNNDM.is_dir(), reason=f"{CNNDM} is absent")
def test_score_see2017_full(tmp_path, capsys):
    """All 11,490 articles (about 25 s): the figures See et al.'s outputs get with rouge-score."""
    out = _score_see(tmp_path, capsys)
    assert out["n"] == 11490
    assert out["rouge1"] == pytest.approx(39.26, abs=0.05)
    assert out["rouge2"] == pytest.approx(17.23, abs=0.05)
    assert out["rougeLsum"] == pytest.approx(36.17, abs=0.05)


# -- the recipes -------------------------------------------------------------------------------
def _tiny_summaries():
    import random

    rng = random.Random(0)
    names = ["orv", "tam", "brix", "velo", "kast", "mirn", "dova", "selk"]
    out = []
    for i in range(24):
        a, b = rng.sample(names, 2)
        n = str(rng.randint(2, 99))
        src = f"{a} bought {b} for {n} million . the deal closed on monday .".split()
        tgt = f"{a} buys {b} for {n} million .".split()
        out.append(Example(src, tgt, target_sents=[tgt], id=str(i),
                           facts={"key_facts": [a, b, n], "entity_tokens": [a, b], "all_entity_tokens": [a, b]}))
    return out


@pytest.mark.parametrize("model,extra", [("pointer-generator", dict(coverage=True, coverage_epochs=1)),
                                         ("copynet", {})])
def test_copying_recipe_trains_evaluates_and_restores(tmp_path, model, extra):
    from dca_course.recipes import load_run
    from dca_course.registry import Dataset, get_model

    exs = _tiny_summaries()
    data = Dataset("tiny", "summaries", exs[:16], exs[16:20], exs[20:], meta={"max_decode": 12})
    recipe_cls = get_model(model)
    config = recipe_cls.config_class.from_profile("fast", dict(emb_size=8, hidden_size=12, epochs=1, batch_size=8,
                                                               vocab_size=12, beam_size=2, **extra))
    result = recipe_cls(config).train(data, torch.device("cpu"), tmp_path, progress=False)
    for key in ("rouge1", "rouge2", "rougeLsum", "repeated_trigrams", "novel_bigrams", "fact_recall",
                "hallucinated_entities", "oov_entity_recall"):
        assert key in result, key
    assert result["epochs"] == 1 + extra.get("coverage_epochs", 0)
    recipe, restored, vocab, state = load_run(tmp_path, torch.device("cpu"))
    if model == "pointer-generator":
        assert restored.coverage and "cov_loss" in state["history"][-1]
        # With v = 0 the attention is uniform over the real source words, so the coverage before step
        # t is t/L on each of them and eq. (12)'s term is sum_i min(1/L, t/L) = 1 for t >= 1, 0 at t = 0:
        # the recipe's cov_loss is (sum_b (T_b - 1)) / (sum_b T_b) over the batch's real target tokens.
        with torch.no_grad():
            restored.attention.v.weight.zero_()
        batch = recipe.make_batch(data.test, vocab)
        _, stats = recipe.loss_fn(restored, batch)
        lengths = batch.tgt_mask.sum(1).tolist()
        assert stats["cov_loss"] == pytest.approx((sum(lengths) - len(lengths)) / sum(lengths), abs=1e-6)
    recipe.check_data(data)
    again = recipe.evaluate(restored, vocab, data, "test", torch.device("cpu"))
    assert again["rouge1"] == pytest.approx(result["rouge1"])


# -- one home for the copying machinery (dca_course.nn.copying, dca_course.nn.encoders) ------------
def test_extended_to_vocab_maps_exactly_the_ids_at_or_beyond_v():
    from dca_course.data.vocab import extended_to_vocab

    V, unk = 10, 7
    ids = torch.arange(2 * V + 3).view(1, -1).repeat(2, 1)              # any shape
    out = extended_to_vocab(ids, V, unk)
    assert out.shape == ids.shape and out.dtype == ids.dtype
    expected = [list(range(V)) + [unk] * (V + 3)] * 2                 # below V: kept; V and beyond: UNK
    assert out.tolist() == expected
    # every caller maps the same ids: the vocabulary, the batches, the decoders and the loss
    vocab, batch = _batch()
    V = len(vocab)
    ext = batch.tgt_out.flatten().tolist()
    assert vocab.decoder_inputs(ext) == extended_to_vocab(batch.tgt_out.flatten(), V, vocab.unk_id).tolist()
    assert torch.equal(batch.src, extended_to_vocab(batch.src_ext, V, vocab.unk_id))
    assert (batch.src_ext >= V).any()
    from dca_course.decoding import decoder_input

    assert torch.equal(decoder_input(Seq2Seq(V, 4, 4), batch.src_ext), batch.src)
    assert torch.equal(decoder_input(PointerGenerator(V, 4, 4), batch.src_ext), batch.src_ext)


def _code_nodes(root=Path(__file__).resolve().parents[1] / "dca_course"):
    """(path, ast node) for every node of the sources under ``root`` (dca_course's)."""
    import ast

    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            yield path.relative_to(root).as_posix(), node


def test_no_second_extended_id_to_unk_mapping_or_reverse_helper():
    """The extended-id -> UNK map lives in data/vocab.py and the reverse-within-length helper in
    nn/encoders.py; a copy of either anywhere else in dca_course fails here."""
    import ast

    def names(node):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
               {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}

    def compares(node):
        return any(isinstance(n, ast.Compare) and any(isinstance(op, (ast.GtE, ast.Gt, ast.Lt, ast.LtE))
                                                      for op in n.ops) for n in ast.walk(node))

    def is_index_reversal(node):     # n - 1 - pos
        return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(node.left, ast.BinOp)
                and isinstance(node.left.op, ast.Sub) and isinstance(node.left.right, ast.Constant)
                and node.left.right.value == 1)

    unk_maps, reversals = [], []
    for path, node in _code_nodes():
        where = isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and \
            getattr(node.func, "attr", getattr(node.func, "id", "")) in ("where", "masked_fill", "clamp", "clamp_max")
        if (where or isinstance(node, ast.IfExp)) and compares(node) and any("unk" in n.lower() for n in names(node)):
            unk_maps.append(f"{path}:{node.lineno}")
        if isinstance(node, ast.FunctionDef):
            body = list(ast.walk(node))
            gathers = any(isinstance(n, ast.Attribute) and n.attr in ("gather", "index_select") for n in body)
            by_length = {a.arg for a in node.args.args} & {"lengths", "length", "lens"}
            if ("reverse" in node.name and by_length) or "flip" in names(node) or \
                    (gathers and any(map(is_index_reversal, body))):
                reversals.append(f"{path}:{node.lineno} {node.name}")
    assert [m for m in unk_maps if not m.startswith("data/vocab.py:")] == []
    assert len(unk_maps) == 1                                            # extended_to_vocab itself
    assert reversals == [r for r in reversals if r.startswith("nn/encoders.py:")]
    assert [r.split()[-1] for r in reversals] == ["reverse_padded"]


def test_coverage_lives_in_the_config_and_its_terms_in_one_function():
    from dca_course import losses
    from dca_course.exercises.late import COVERAGE_ANSWERS
    from dca_course.fast import models as fast_models
    from dca_course.models import pointer_generator
    from dca_course.nn import copying
    from dca_course.recipes.copying import PointerGeneratorConfig, PointerGeneratorRecipe

    model = PointerGenerator(13, 4, 4)
    assert "coverage" not in vars(model)                                 # no second copy of the switch
    assert model.set_coverage(True).coverage is True and model.config["coverage"] is True
    model.coverage = False
    assert model.config["coverage"] is False and PointerGenerator(**model.config).coverage is False
    # eqs. (12)-(13) live in losses.py alone: the model reports a^t and c^t, the recipe's loss and the
    # exercises' check read them through losses.coverage_loss
    for module in (pointer_generator, copying, fast_models):
        assert not hasattr(module, "coverage_terms") and not hasattr(module, "coverage_loss"), module.__name__
    assert COVERAGE_ANSWERS.functions == (losses.coverage_loss, losses.coverage_terms)
    vocab, batch = _batch()
    model = _models(len(vocab))["pointer-gen+cov"]
    out = model(batch)
    assert "cov_loss" not in out
    mask = batch.tgt_mask
    expected = (torch.minimum(out["attn"], out["coverage"]).sum(-1) * mask).sum() / mask.sum()
    assert torch.equal(coverage_loss(out["attn"], out["coverage"], mask), expected)
    recipe = PointerGeneratorRecipe(PointerGeneratorConfig.from_profile("fast", dict(coverage_weight=0.5,
                                                                                     fast_path=False)))
    loss, nll, cov = recipe.loss(model, batch)
    assert torch.equal(cov, expected) and torch.equal(loss, losses.nll_with_coverage(nll, expected, 0.5))
    assert torch.equal(loss, nll + 0.5 * expected)                      # eq. (13)
