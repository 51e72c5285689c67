"""Deep Communicating Agents: splitting, the multi-agent encoder and decoder, cohesion and self-critical RL."""
import itertools
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from dca_course import seed_everything
from dca_course.data import Example, Vocab
from dca_course.data.agents import balanced_partition, collate_agents, split_document, split_example
from dca_course.decoding import beam_search, beam_search_one_by_one, greedy, sample
from dca_course.losses import (intermediate_rewards, rouge_reward, self_critical_loss, semantic_cohesion,
                               sentence_advantages)
from dca_course.models import DCA
from dca_course.models.dca import AgentBiLSTM, MessageFunction, agent_messages, last_states
from dca_course.models.extensions import ExtendedDCA
from dca_course.models.pointer_generator import final_distribution


# -- fixtures ----------------------------------------------------------------------------------
pytestmark = pytest.mark.usefixtures("one_thread")   # tests/conftest.py


def _doc(spec, prefix="w"):
    """paragraphs -> sentences of the given lengths, with distinct tokens."""
    n = itertools.count()
    return [[[f"{prefix}{next(n)}" for _ in range(k)] for k in para] for para in spec]


WORDS = "the a club won lost match city said on monday goals coach team . , new".split()


def _examples():
    """Three small articles; 'zorvik' and 'pello' are out of vocabulary and appear in several
    paragraphs; the third article has only two sentences (with 3 agents: one agent is empty)."""
    e1 = Example.from_document(
        [[["the", "club", "zorvik", "won", "."], ["coach", "pello", "said", "."]],
         [["the", "match", "was", "on", "monday", "."]],
         [["zorvik", "team", "goals", "."], ["city", "lost", "."]],
         [["new", "coach", "pello", "."]]],
        [["zorvik", "won", "."], ["pello", "said", "new", "goals", "."]])
    e2 = Example.from_document(
        [[["a", "city", "team", "lost", "on", "monday", "."]], [["the", "coach", "said", "goals", "."]],
         [["a", "new", "match", "."]]],
        [["city", "lost", "."]])
    e3 = Example.from_document([[["pello", "won", "the", "match", "."], ["the", "city", "said", "."]]],
                               [["pello", "won", "."]])
    return [e1, e2, e3]


def _setup(context_layers=2, seed=0):
    seed_everything(seed)
    vocab = Vocab(WORDS)
    batch = collate_agents(_examples(), vocab, n_agents=3)
    model = DCA(len(vocab), 8, 10, context_layers=context_layers).eval()
    return vocab, batch, model


# -- splitting ---------------------------------------------------------------------------------
def _brute_force_cost(lengths, parts):
    best = None
    for cuts in itertools.combinations(range(1, len(lengths)), parts - 1):
        bounds = (0,) + cuts + (len(lengths),)
        cost = sum(sum(lengths[a:b]) ** 2 for a, b in zip(bounds[:-1], bounds[1:]))
        best = cost if best is None else min(best, cost)
    return best


def test_split_keeps_paragraphs_whole_and_balances_lengths():
    doc = _doc([[9, 8], [3], [12, 4], [2, 2], [10], [7, 6]])
    para_lengths = [sum(p) for p in [[9, 8], [3], [12, 4], [2, 2], [10], [7, 6]]]
    chunks = split_document(doc, 3)
    assert len(chunks) == 3 and all(chunks)
    # in order, nothing lost, and every chunk is a run of whole paragraphs
    assert [s for c in chunks for s in c] == [s for p in doc for s in p]
    flat_paras = [[s for s in p] for p in doc]
    i = 0
    for chunk in chunks:
        j = i
        while sum(len(p) for p in flat_paras[i:j]) < len(chunk):
            j += 1
        assert [s for p in flat_paras[i:j] for s in p] == chunk     # a chunk ends at a paragraph end
        i = j
    lengths = [sum(map(len, c)) for c in chunks]
    assert sum(x * x for x in lengths) == _brute_force_cost(para_lengths, 3)   # the most even split
    cuts = balanced_partition(para_lengths, 3)
    assert cuts[0] == 0 and cuts[-1] == len(para_lengths)


def test_split_falls_back_to_sentences_then_empty_agents():
    # two paragraphs for three agents: whole sentences, balanced
    doc = _doc([[5, 5, 5, 5], [5, 5]])
    chunks = split_document(doc, 3)
    assert [sum(map(len, c)) for c in chunks] == [10, 10, 10]
    # one long paragraph and two short ones: whole paragraphs would be too uneven
    doc = _doc([[6] * 8, [1], [1]])
    assert [sum(map(len, c)) for c in split_document(doc, 3)] == [18, 18, 14]
    assert [sum(map(len, c)) for c in split_document(doc, 3, tolerance=100.0)] == [48, 1, 1]
    # two sentences for three agents: one each, the last agent empty
    doc = _doc([[3, 4]])
    assert split_document(doc, 3) == [[doc[0][0]], [doc[0][1]], []]
    # CNN/DailyMail: every sentence its own paragraph
    cnn = _doc([[4], [4], [4], [4], [4], [4]])
    assert [len(c) for c in split_document(cnn, 3)] == [2, 2, 2]


def test_split_example_truncates_before_splitting():
    ex = Example.from_document(_doc([[4, 4], [4, 4], [4, 4]]), [["x"]])
    parts = split_example(ex, 3, max_src=16)
    assert sorted(len(p) for p in parts) == [4, 4, 8]              # two paragraphs left: by sentences
    assert [t for p in parts for t in p] == ex.source[:16]


def test_collate_agents_shares_the_extended_vocabulary_of_an_example():
    vocab = Vocab(WORDS)
    exs = _examples()
    batch = collate_agents(exs, vocab, n_agents=3)
    B, M, L = batch.src.shape
    assert (B, M) == (3, 3)
    assert batch.agent_mask.tolist() == [[True, True, True], [True, True, True], [True, True, False]]
    for b, ex in enumerate(exs):
        lengths = batch.src_mask[b].sum(-1).tolist()
        flat = torch.cat([batch.src_ext[b, a, :n] for a, n in enumerate(lengths)]).tolist()
        ids, oovs = vocab.encode_source(ex.source)
        assert flat == ids and batch.oovs[b] == oovs             # one OOV list for all agents
        assert (batch.src_ext[b][~batch.src_mask[b]] == vocab.pad_id).all()
    # 'zorvik' is read by agents 0 and 2 of the first article: the same extended id in both
    z = len(vocab) + batch.oovs[0].index("zorvik")
    assert (batch.src_ext[0, 0] == z).any() and (batch.src_ext[0, 2] == z).any()
    assert (batch.src[batch.src_ext >= len(vocab)] == vocab.unk_id).all()
    # targets as collate makes them, and the sentence ends of the target
    assert batch.tgt_out[0, :3].tolist() == [z, vocab.stoi["won"], vocab.stoi["."]]
    assert batch.tgt_sent_end[0].nonzero().squeeze(1).tolist() == [2, 7]
    one = batch.select(2)
    assert one.src.shape[:2] == (1, 3) and one.oovs == [batch.oovs[2]]


# -- the multi-agent encoder -------------------------------------------------------------------
def test_message_is_the_mean_of_the_other_agents_last_states():
    torch.manual_seed(0)
    last = torch.randn(2, 4, 5)
    agent_mask = torch.tensor([[True, True, True, True], [True, False, True, True]])
    z = agent_messages(last, agent_mask)
    for b in range(2):
        for a in range(4):
            others = [last[b, m] for m in range(4) if m != a and agent_mask[b, m]]
            assert torch.allclose(z[b, a], torch.stack(others).mean(0), atol=1e-6)
    # only one agent has words: nobody to hear from
    z = agent_messages(last, torch.tensor([[True, False, False, False]] * 2))
    assert torch.equal(z[:, 0], torch.zeros(2, 5))


def test_model_messages_use_the_last_word_of_each_non_empty_agent():
    vocab, batch, model = _setup()
    with torch.no_grad():
        _, _, layers, msgs = model.encode_agents(batch.src, batch.src_mask, return_layers=True)
    assert len(msgs) == 2
    lengths = batch.src_mask.sum(-1)
    for k, z in enumerate(msgs):
        h = layers[k]
        for b in range(batch.size):
            for a in range(3):
                others = [h[b, m, lengths[b, m] - 1] for m in range(3) if m != a and lengths[b, m] > 0]
                assert torch.allclose(z[b, a], torch.stack(others).mean(0), atol=1e-6)
    # the third article's empty agent: zero states, and it is left out of the others' messages
    assert torch.equal(layers[-1][2, 2], torch.zeros_like(layers[-1][2, 2]))
    assert torch.allclose(last_states(layers[0], batch.src_mask)[2, 2], torch.zeros(10))


def test_agents_as_a_batch_equal_a_loop_over_agents():
    vocab, batch, model = _setup()
    with torch.no_grad():
        h_batch, _ = model.encode_agents(batch.src, batch.src_mask)
        mask = batch.src_mask
        lengths = mask.sum(-1)
        # one agent at a time
        hs = [model.local(model.embedding(batch.src[:, a: a + 1]), mask[:, a: a + 1])[0][:, 0] for a in range(3)]
        for f, layer in zip(model.messages, model.contexts):
            last = [torch.stack([hs[a][b, max(int(lengths[b, a]) - 1, 0)] for b in range(batch.size)])
                    for a in range(3)]
            new = []
            for a in range(3):
                z = torch.zeros_like(last[a])
                for b in range(batch.size):
                    others = [last[m][b] for m in range(3) if m != a and lengths[b, m] > 0]
                    if others:
                        z[b] = torch.stack(others).mean(0)
                out, _ = layer(f(hs[a], z).unsqueeze(1), mask[:, a: a + 1])
                new.append(out[:, 0])
            hs = new
    h_loop = torch.stack(hs, dim=1)
    assert torch.allclose(h_batch, h_loop, atol=1e-5)


def test_agent_bilstm_equals_a_packed_bidirectional_lstm():
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    torch.manual_seed(0)
    layer = AgentBiLSTM(4, 5)
    ref = torch.nn.LSTM(4, 5, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
            getattr(ref, name).copy_(getattr(layer.fwd, name))
            getattr(ref, name + "_reverse").copy_(getattr(layer.bwd, name))
    lengths = torch.tensor([[6, 3, 0], [1, 6, 4]])
    mask = torch.arange(6)[None, None, :] < lengths[..., None]
    x = torch.randn(2, 3, 6, 4)
    h, final = layer(x, mask)
    flat_len = lengths.reshape(-1)
    packed = pack_padded_sequence(x.reshape(6, 6, 4), flat_len.clamp_min(1), batch_first=True,
                                  enforce_sorted=False)
    out, (h_n, _) = ref(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=6)
    expected = layer.proj(out) * mask.reshape(6, 6, 1)
    assert torch.allclose(h.reshape(6, 6, 5), expected, atol=1e-6)
    keep = (flat_len > 0).float().unsqueeze(-1)
    assert torch.allclose(final.reshape(6, 10), torch.cat([h_n[0], h_n[1]], -1) * keep, atol=1e-6)


def test_message_function_and_mean_gradcheck():
    torch.manual_seed(0)
    f = MessageFunction(3).double()
    h = torch.randn(2, 4, 3, dtype=torch.double, requires_grad=True)
    z = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
    assert f(h, z).shape == (2, 4, 3)                            # a vector per word, not a scalar
    assert torch.autograd.gradcheck(f, (h, z))
    last = torch.randn(2, 3, 3, dtype=torch.double, requires_grad=True)
    mask = torch.tensor([[True, True, False], [True, True, True]])
    assert torch.autograd.gradcheck(lambda x: agent_messages(x, mask), (last,))


# -- the decoder -------------------------------------------------------------------------------
@pytest.mark.parametrize("vocab_mlp", ["linear", "tanh"])
def test_multi_agent_distribution_sums_to_one_and_mixes_per_agent_pointers(vocab_mlp):
    vocab, batch, _ = _setup()
    seed_everything(0)
    model = (ExtendedDCA(len(vocab), 8, 10, context_layers=2, extensions=["vocab_tanh"]) if vocab_mlp == "tanh"
             else DCA(len(vocab), 8, 10, context_layers=2)).eval()
    mlp_hidden = torch.tanh if vocab_mlp == "tanh" else (lambda h: h)     # eqs. (11)-(12)'s "MLP", by hand
    with torch.no_grad():
        out = model(batch)
        W = len(vocab) + batch.n_oov
        assert out["log_probs"].shape == (3, batch.tgt_out.size(1), W)
        assert torch.allclose(out["log_probs"].exp().sum(-1), torch.ones(3, batch.tgt_out.size(1)), atol=1e-5)
        # eq. (15) directly: each agent's pointer-generator distribution, weighted by g
        state = model.encode(batch)
        lp, _, info = model.step(torch.full((3,), vocab.bos_id), state)
        p_voc_fn = model.out(mlp_hidden(model.out_hidden(torch.cat([info["s"], (info["agent_attn"].unsqueeze(-1) *
                                                                      _agent_contexts(model, state, info)).sum(1),
                                                          state["context"]], -1)))).softmax(-1)
        expected = torch.zeros(3, W)
        for a in range(3):
            p_a = final_distribution(p_voc_fn, info["word_attn"][:, a], info["p_gen"][:, a: a + 1],
                                     batch.src_ext[:, a], batch.n_oov)
            expected += info["agent_attn"][:, a: a + 1] * p_a
        assert torch.allclose(lp.exp(), expected, atol=1e-6)
        # an OOV word gets probability only from the agents that read it
        pello = len(vocab) + batch.oovs[2].index("pello")
        assert lp[2, pello].exp() > 0


def _agent_contexts(model, state, info):
    """c_a^t = sum_i l_{a,i} h_{a,i} (eq. 8), from the step's word attention."""
    return torch.einsum("bml,bmlh->bmh", info["word_attn"], state["keys"])


def test_agent_attention_gives_exactly_zero_to_empty_agents():
    vocab, batch, model = _setup()
    with torch.no_grad():
        out = model(batch)
    assert batch.agent_mask[2, 2].item() is False
    assert (out["agent_attn"][2, :, 2] == 0).all()
    assert (out["word_attn"][2, :, 2] == 0).all()
    assert (out["agent_attn"][:2] > 0).all()
    assert torch.allclose(out["agent_attn"].sum(-1), torch.ones(3, out["agent_attn"].size(1)))
    assert (out["word_attn"][~batch.src_mask.unsqueeze(1).expand_as(out["word_attn"])] == 0).all()


def _lstm_cell_by_hand(cell, x, h, c):
    gates = cell.weight_ih @ x + cell.bias_ih + cell.weight_hh @ h + cell.bias_hh   # i, f, g, o
    i, f, g, o = gates.chunk(4)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def _additive(att, query, key):
    """v^T tanh(W key + W' query + b): the score of eqs. (7) and (9)."""
    return att.v.weight[0] @ torch.tanh(att.W_h.weight @ key + att.W_s.weight @ query + att.W_s.bias)


def _dca_step_by_hand(model, y, h, c, prev_context, keys, mask, src_ext, width):
    """The DCA decoder's step for one example from Celikyilmaz et al.'s equations, agent by agent and
    word by word: s_t = LSTM([E y; c*_{t-1}]), l_a = softmax_i(v2^T tanh(W5 h_{a,i} + W6 s_t + b1))
    (7), c_a = sum_i l_{a,i} h_{a,i} (8), g = softmax_a(v3^T tanh(W7 c_a + W8 s_t + b2)) over the
    agents with words (9), c* = sum_a g_a c_a (10), P_voc = softmax(MLP([s_t; c*_t; c*_{t-1}])) (12),
    p_a = sigmoid(v5^T c_a + v6^T s_t + v7^T x_t + b) (13), P^a(w) = p_a P_voc(w) + (1 - p_a)
    sum_{i: w_{a,i} = w} l_{a,i} (14), P(w) = sum_a g_a P^a(w) (15).  Returns P and (s, c, c*)."""
    V = model.vocab_size
    x = torch.cat([model.embedding.weight[y if y < V else model.unk_id], prev_context])
    s, c = _lstm_cell_by_hand(model.cell, x, h, c)
    agents = [a for a in range(keys.size(0)) if mask[a].any()]
    attn, ctx = {}, {}
    for a in agents:
        words = [i for i in range(keys.size(1)) if mask[a, i]]
        attn[a] = torch.softmax(torch.stack([_additive(model.word_attention, s, keys[a, i]) for i in words]), 0)
        ctx[a] = sum(attn[a][j] * keys[a, i] for j, i in enumerate(words))
    g = torch.softmax(torch.stack([_additive(model.agent_attention, s, ctx[a]) for a in agents]), 0)
    context = sum(g[k] * ctx[a] for k, a in enumerate(agents))
    u = model.out_hidden.weight @ torch.cat([s, context, prev_context]) + model.out_hidden.bias
    p_voc = torch.softmax(model.out.weight @ u + model.out.bias, 0)
    P = torch.zeros(width)
    for k, a in enumerate(agents):
        p_a = torch.sigmoid(model.p_gen_linear.weight[0] @ torch.cat([ctx[a], s, x]) + model.p_gen_linear.bias[0])
        P_a = torch.zeros(width)
        P_a[:V] = p_a * p_voc
        for j, i in enumerate(i for i in range(keys.size(1)) if mask[a, i]):
            P_a[src_ext[a, i]] += (1 - p_a) * attn[a][j]
        P += g[k] * P_a
    return P, (s, c, context)


def test_step_is_the_papers_equations_computed_by_hand_and_decoders_run():
    """Two steps of ``model.step`` against eqs. (7)-(15) computed agent by agent above, on a batch
    whose third article leaves an agent without words (it gets no attention); the second step
    reads the reference's first word (the encoder is not what this checks)."""
    vocab, batch, model = _setup()
    assert not batch.agent_mask.all()
    with torch.no_grad():
        state = model.encode(batch)
        width = len(vocab) + batch.n_oov
        mine = [(state["h"][b], state["c"][b], state["context"][b]) for b in range(3)]
        y_prev = torch.cat([batch.tgt_in[:, :1], batch.tgt_out[:, :-1]], 1)
        for t in range(2):
            lp, state, _ = model.step(y_prev[:, t], state)
            for b in range(3):
                P, mine[b] = _dca_step_by_hand(model, int(y_prev[b, t]), *mine[b], state["keys"][b],
                                               batch.src_mask[b], batch.src_ext[b], width)
                assert torch.allclose(lp[b].exp(), P, atol=1e-6), (t, b)
    d = greedy(model, batch, max_len=6)
    assert len(d.ids) == 3 and all(len(x) <= 6 for x in d.ids)
    assert d.info["agent_attn"].shape[0] == 3 and d.info["agent_attn"].shape[2] == 3
    s = sample(model, batch, 6, generator=torch.Generator().manual_seed(0))
    assert all(max(ids, default=0) < len(vocab) + batch.n_oov for ids in s.ids)
    fast = beam_search(model, batch, 3, max_len=6)
    slow = beam_search_one_by_one(model, batch, 3, max_len=6)
    assert fast.ids == slow.ids
    assert torch.allclose(fast.scores, slow.scores, atol=1e-5)


# -- losses ------------------------------------------------------------------------------------
def test_semantic_cohesion_on_a_hand_example():
    e1, e2 = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])
    states = torch.zeros(2, 5, 2)
    # example 0: sentence ends at steps 1, 2, 4 with states e1, e1, e2 -> cos 1 + cos 0 = 1
    states[0, 1], states[0, 2], states[0, 4] = e1, e1, e2
    states[0, 0] = states[0, 3] = torch.tensor([0.3, -0.7])          # not sentence ends
    # example 1: ends at steps 0 and 3 with e1 and e1 + e2 -> cos = 1/sqrt(2); step 4 is padding
    states[1, 0], states[1, 3], states[1, 4] = e1, e1 + e2, e2
    ends = torch.tensor([[0, 1, 1, 0, 1], [1, 0, 0, 1, 1]], dtype=torch.bool)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 1, 0]], dtype=torch.bool)
    value = semantic_cohesion(states, ends, mask)
    assert torch.isclose(value, torch.tensor((1.0 + 2 ** -0.5) / 2))
    # minimising it pushes consecutive sentence states apart
    s = states.clone().requires_grad_(True)
    semantic_cohesion(s, ends, mask).backward()
    with torch.no_grad():
        after = semantic_cohesion(s - 0.1 * s.grad, ends, mask)
    assert after < value
    assert semantic_cohesion(states, torch.zeros_like(ends), mask) == 0      # no sentence: no term


@pytest.mark.parametrize("better", [True, False])
def test_self_critical_loss_pushes_a_better_sample_up_and_a_worse_one_down(better):
    torch.manual_seed(0)
    logits = torch.randn(4, 6, requires_grad=True)       # a tiny policy: 4 steps, 6 words
    sampled = torch.tensor([2, 5, 1, 3])
    mask = torch.tensor([[True, True, True, False]])     # the last step is after </s>

    def sample_log_prob():
        return torch.log_softmax(logits, -1).gather(1, sampled[:, None]).T   # (1, 4)

    before = (sample_log_prob() * mask).sum()
    r_sample, r_greedy = (0.6, 0.4) if better else (0.3, 0.5)
    loss = self_critical_loss(sample_log_prob(), mask, torch.tensor([r_sample]), torch.tensor([r_greedy]))
    loss.backward()
    assert torch.equal(logits.grad[3], torch.zeros(6))  # masked step: no gradient
    with torch.no_grad():
        logits -= 0.5 * logits.grad
    after = (sample_log_prob() * mask).sum()
    assert (after > before) if better else (after < before)
    # equal rewards: no signal
    assert self_critical_loss(sample_log_prob(), mask, [0.5], [0.5]).item() == 0


def test_rouge_reward_equals_rouge_score():
    from rouge_score import rouge_scorer

    ref = "zorvik won the matches on monday .\ncoach pello said the team was happy ."
    preds = ["zorvik wins on monday . pello says the team won the match .".split(), "the match .".split(), []]
    for kind in ("rougeL", "rouge1", "rouge2", "rougeLsum"):
        scorer = rouge_scorer.RougeScorer([kind], use_stemmer=True)
        for p in preds:
            text = "\n".join(line.strip() for line in " ".join(p).replace(" . ", " .\n").split("\n"))
            assert rouge_reward(p, ref, kind) == pytest.approx(scorer.score(ref, text)[kind].fmeasure, abs=1e-12)
    assert 0 < rouge_reward(preds[0], ref) < 1 and rouge_reward([], ref) == 0


def test_intermediate_rewards_add_up_and_reduce_to_the_plain_advantage():
    ref = "zorvik won the match .\npello said the team was happy ."
    s = "zorvik won the match . pello was happy . the the .".split()
    deltas = intermediate_rewards(s, ref)
    assert len(deltas) == 3 and sum(deltas) == pytest.approx(rouge_reward(s, ref))
    assert deltas[0] > 0 and deltas[2] <= 0                         # a junk last sentence adds nothing
    g = "pello said .".split()
    adv = sentence_advantages(s, g, ref)
    assert len(adv) == len(s) + 1                                   # and one for </s>
    assert adv[0] == pytest.approx(rouge_reward(s, ref) - rouge_reward(g, ref))
    assert adv[-1] == pytest.approx(deltas[2])                      # greedy has no third sentence
    one_s, one_g = "zorvik won the match".split(), "the team".split()
    plain = rouge_reward(one_s, ref) - rouge_reward(one_g, ref)
    assert sentence_advantages(one_s, one_g, ref) == pytest.approx([plain] * (len(one_s) + 1))


# -- the recipe and the command line -----------------------------------------------------------
def test_command_line_options_and_rl_hparams():
    from dca_course.__main__ import build_parser
    from dca_course.recipes import CONFIGS, DCAConfig, DCARecipe
    from dca_course.recipes.config import config_overrides

    parser = build_parser()

    def config(*flags):
        args = parser.parse_args(["train", "dca", "--data", "synthnews-long:8", *flags])
        return DCAConfig.from_profile("fast", config_overrides(args, DCAConfig, CONFIGS, "dca"))

    c = config("--agents", "2", "--rl", "--cohesion", "0.5", "--gamma", "0.9", "--init", "runs/x")
    assert (c.agents, c.rl, c.cohesion, c.gamma, c.init) == (2, True, 0.5, 0.9, "runs/x")
    assert c.epochs == c.rl_epochs and c.lr == c.rl_lr and c.batch_size == c.rl_batch_size
    assert config("--rl", "--epochs", "3").epochs == 3
    assert config("--rl", "--rl-epochs", "2").epochs == 2
    c = config()
    assert c.rl is False and c.epochs == DCARecipe.profiles["fast"]["epochs"]
    c = config("--emb-size", "16", "--hidden-size", "24")
    assert (c.emb_size, c.hidden_size) == (16, 24)
    assert DCARecipe(c).build_model(Vocab(WORDS)).cell.hidden_size == 24


def test_mle_then_rl_from_init(tmp_path: Path):
    from dca_course.recipes import DCAConfig, DCARecipe, Dataset, SpecError

    exs = _examples()
    data = Dataset("hand", "summaries", exs * 2, exs, exs, meta={"max_decode": 8})
    # replace, not from_profile: from_profile ignores vocab_size=None, and with rl=True would put
    # rl_epochs/rl_lr/rl_batch_size in place of the small epochs/batch size and the fast lr used here
    small = replace(DCAConfig.from_profile("fast"), emb_size=8, hidden_size=8, epochs=1, batch_size=3, beam_size=2,
                    vocab_size=None)
    mle = DCARecipe(replace(small, cohesion=0.5)).train(data, torch.device("cpu"), tmp_path / "mle", progress=False)
    for key in ("rouge1", "rouge2", "rougeLsum", "repeated_trigrams", "novel_bigrams", "final_loss"):
        assert key in mle
    rl_config = replace(small, rl=True, init=str(tmp_path / "mle"), intermediate_rewards=True, gamma=0.5)
    recipe = DCARecipe(rl_config)
    with pytest.raises(SpecError):
        recipe.train(data, torch.device("cpu"), tmp_path / "mle", progress=False)
    logs = []
    rl = DCARecipe(rl_config).train(data, torch.device("cpu"), tmp_path / "rl", progress=False, log=logs.append)
    assert "rouge1" in rl and any("reward_sample" in line for line in logs)
    # the RL run started from the MLE weights
    from dca_course.train import load_checkpoint
    init, after = load_checkpoint(tmp_path / "mle" / "last.pt"), load_checkpoint(tmp_path / "rl" / "last.pt")
    assert init["vocab"] == after["vocab"] and init["model_config"] == after["model_config"]
    last = after["history"][-1]                      # the mixed loss: gamma L_RL + (1 - gamma) L_MLE
    assert last["loss"] == pytest.approx(0.5 * last["rl_loss"] + 0.5 * last["nll"], rel=1e-5, abs=1e-6)
    with pytest.raises(SpecError):
        DCARecipe(replace(rl_config, agents=2)).train(data, torch.device("cpu"), tmp_path / "rl2", progress=False)


def test_rl_profile_uses_its_own_batch_size_and_k_samples_share_one_greedy_baseline():
    from dca_course.recipes import DCAConfig, DCARecipe

    c = DCAConfig.from_profile("fast", {"rl": True})
    assert (c.batch_size, c.lr, c.epochs) == (c.rl_batch_size, c.rl_lr, c.rl_epochs)
    assert DCAConfig.from_profile("fast", {"rl": True, "batch_size": 5}).batch_size == 5
    vocab, batch, model = _setup(context_layers=1)
    stats = {}
    for k in (1, 3):
        recipe = DCARecipe(DCAConfig.from_profile("fast", dict(rl_samples=k, max_decode=6, baseline="greedy")))
        recipe._vocab = vocab
        seed_everything(0)
        loss, stats[k] = recipe.rl_loss(model, batch)
        assert torch.isfinite(loss) and loss.requires_grad
    # the greedy summaries (the baseline) do not depend on how many samples each article gets
    assert stats[1]["reward_greedy"] == pytest.approx(stats[3]["reward_greedy"])


# -- the mixed loss: consistent reductions, the leave-one-out baseline, the greedy baseline's mode --
def test_reductions_token_and_sequence_on_hand_numbers():
    from dca_course.losses import sequence_nll

    # two sequences, 3 and 1 real tokens, with -log p = 1, 2, 3 and 4 (padding: 9)
    nll = torch.tensor([[1.0, 2.0, 3.0], [4.0, 9.0, 9.0]])
    mask = torch.tensor([[True, True, True], [True, False, False]])
    log_probs = torch.stack([-nll, torch.zeros_like(nll)], -1)               # target 0 has log p = -nll
    targets = torch.zeros(2, 3, dtype=torch.long)
    assert sequence_nll(log_probs, targets, mask).item() == pytest.approx(10 / 4)                  # per token
    assert sequence_nll(log_probs, targets, mask, reduction="sequence").item() == pytest.approx(10 / 2)
    # the self-critical loss: advantages 0.5 and -1 on the same log-probabilities
    sc = lambda red: self_critical_loss(-nll, mask, [0.5, -1.0], [0.0, 0.0], reduction=red).item()  # noqa: E731
    assert sc("sequence") == pytest.approx((0.5 * 6 - 1.0 * 4) / 2)        # the default, eq. (15) of Paulus et al.
    assert sc("token") == pytest.approx((0.5 * 6 - 1.0 * 4) / 4)
    assert self_critical_loss(-nll, mask, [0.5, -1.0], [0.0, 0.0]).item() == pytest.approx(sc("sequence"))
    with pytest.raises(ValueError, match="reduction"):
        sequence_nll(log_probs, targets, mask, reduction="mean")


def _mixed_terms(recipe, repeat):
    """L_RL and L_MLE of the recipe's loss_fn on one article whose summary (and sampled words)
    are a 2-word pattern repeated ``repeat`` times, every word with log p = log 0.5."""
    T = 2 * repeat + 1                                                      # the words and </s>
    lp = torch.full((1, T), float(torch.log(torch.tensor(0.5))))
    mask = torch.ones(1, T, dtype=torch.bool)
    rl_red, mle_red = recipe.reductions()
    rl = self_critical_loss(lp, mask, [0.3], [0.1], reduction=rl_red)
    log_probs = torch.log(torch.full((1, T, 4), 0.25)).clone()
    log_probs[..., 0] = torch.log(torch.tensor(0.5))
    from dca_course.losses import sequence_nll
    mle = sequence_nll(log_probs, torch.zeros(1, T, dtype=torch.long), mask, reduction=mle_red)
    return rl.item(), mle.item()


@pytest.mark.parametrize("reduction", ["token", "sequence"])
def test_mixed_loss_terms_keep_their_balance_when_summaries_get_longer(reduction):
    """Doubling every summary's length (the same words repeated) must not change the ratio of
    L_RL to L_MLE: the weighting of the two terms is gamma : 1 - gamma whatever the length.
    Before the fix L_RL summed over the words and L_MLE averaged them: the ratio doubled."""
    from dca_course.recipes import DCAConfig, DCARecipe, SpecError

    recipe = DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, loss_reduction=reduction)))
    assert DCARecipe.profiles["fast"]["loss_reduction"] == "token"
    short, long = _mixed_terms(recipe, 5), _mixed_terms(recipe, 10)
    assert short[0] / short[1] == pytest.approx(long[0] / long[1])
    class SummedRL:       # the mix before the fix (experiments/rl_diagnostics.py's "legacy"): the check sees it
        reductions = staticmethod(lambda: ("sequence", "token"))

    short, long = _mixed_terms(SummedRL, 5), _mixed_terms(SummedRL, 10)
    assert long[0] / long[1] == pytest.approx(short[0] / short[1] * 21 / 11)
    with pytest.raises(SpecError):          # the recipe trains only with terms reduced alike
        DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, loss_reduction="legacy"))).reductions()


def test_recipe_loss_reduces_both_terms_alike(monkeypatch):
    """The recipe's mixed loss on a real batch: with the per-token reduction L_RL is the mean of
    -A log p over the sampled words (not their sum per summary)."""
    from dca_course.recipes import DCAConfig, DCARecipe

    vocab, batch, model = _setup(context_layers=1)
    seen = {}
    real = DCARecipe.rl_advantages

    def spy(self, draw, baseline="greedy"):
        adv = real(self, draw, baseline)
        seen.update(lp=draw["lp"].detach(), mask=draw["mask"], adv=adv)
        return adv

    monkeypatch.setattr(DCARecipe, "rl_advantages", spy)
    for reduction in ("token", "sequence"):
        recipe = DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, rl_samples=2, max_decode=6, gamma=0.5,
                                                            loss_reduction=reduction,
                                                            baseline=("greedy", "loo")[reduction == "token"])))
        recipe._vocab = vocab
        seed_everything(0)
        loss, stats = recipe.loss_fn(model, batch)
        terms = -(seen["adv"][:, None] * seen["lp"] * seen["mask"]).sum()
        per_token = terms / seen["mask"].sum() if reduction == "token" else terms / seen["lp"].size(0)
        assert stats["rl_loss"] == pytest.approx(per_token.item(), rel=1e-5, abs=1e-7)
        mle = stats.get("mle_loss", stats["nll"])
        if reduction == "sequence":
            assert mle == pytest.approx(stats["nll"] * batch.tgt_mask.sum().item() / batch.size, rel=1e-5)
        else:
            assert mle == pytest.approx(stats["nll"])
        assert loss.item() == pytest.approx(0.5 * stats["rl_loss"] + 0.5 * mle, rel=1e-5, abs=1e-7)


def test_gamma_zero_is_the_mle_control_and_samples_nothing(monkeypatch):
    """--rl --gamma 0: the same steps with L_MLE alone (RL's control); nothing is sampled."""
    from dca_course.recipes import DCAConfig, DCARecipe

    vocab, batch, model = _setup(context_layers=1)

    def no_sampling(*args, **kwargs):
        raise AssertionError("the control must not sample")

    monkeypatch.setattr(DCARecipe, "rl_loss", no_sampling)
    control = DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, gamma=0.0)))
    mle = DCARecipe(DCAConfig.from_profile("fast", dict(rl=False)))
    for recipe in (control, mle):
        recipe._vocab = vocab
    loss, stats = control.loss_fn(model, batch)
    expected, _ = mle.loss_fn(model, batch)
    assert torch.equal(loss, expected) and "rl_loss" not in stats
    with pytest.raises(AssertionError, match="must not sample"):     # any other gamma does sample
        DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, gamma=0.5))).loss_fn(model, batch)


def test_leave_one_out_baseline_on_hand_numbers():
    from dca_course.losses import leave_one_out_baseline

    # two articles (a, b), k = 3 samples each, in the order of list(examples) * k: a b a b a b
    rewards = [0.3, 0.0, 0.6, 0.4, 0.0, 0.2]
    base = leave_one_out_baseline(rewards, 3)
    assert base.tolist() == pytest.approx([0.3, 0.3, 0.15, 0.1, 0.45, 0.2])
    # r - b = k / (k - 1) (r - mean): the advantages of an article sum to 0
    adv = torch.tensor(rewards, dtype=base.dtype) - base
    assert adv[0::2].sum().item() == pytest.approx(0, abs=1e-6) and adv[1::2].sum().item() == pytest.approx(0, abs=1e-6)
    # per-sentence returns (rows: samples, columns: sentences), averaged column by column
    table = torch.tensor([[0.2, 0.1], [0.4, 0.0], [0.0, 0.0], [0.6, 0.3]])
    expected = torch.tensor([[0.0, 0.0], [0.6, 0.3], [0.2, 0.1], [0.4, 0.0]])
    assert torch.allclose(leave_one_out_baseline(table, 2), expected)
    with pytest.raises(ValueError, match="k >= 2"):
        leave_one_out_baseline([0.3, 0.4], 1)
    with pytest.raises(ValueError, match="k=2"):
        leave_one_out_baseline([0.3, 0.4, 0.5], 2)


@pytest.mark.parametrize("intermediate", [False, True])
def test_recipe_leave_one_out_baseline_needs_no_greedy_summary(intermediate):
    from dca_course.losses import leave_one_out_baseline
    from dca_course.recipes import DCAConfig, DCARecipe, SpecError

    with pytest.raises(SpecError, match="rl-samples"):
        DCAConfig.from_profile("fast", {"rl": True, "rl_samples": 1})             # loo is the default
    assert DCAConfig.from_profile("fast", {"rl": True, "rl_samples": 1, "baseline": "greedy"}).baseline == "greedy"
    assert DCAConfig.from_profile("fast", {"rl_samples": 1}).rl_samples == 1      # without --rl nothing is sampled
    assert (DCARecipe.profiles["fast"]["baseline"], DCARecipe.profiles["fast"]["gamma"]) == ("loo", 0.9984)
    vocab, batch, model = _setup(context_layers=1)
    recipe = DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, rl_samples=3, max_decode=6, baseline="loo",
                                                        intermediate_rewards=intermediate)))
    recipe._vocab = vocab
    seed_everything(0)
    draw = recipe.rl_draw(model, batch, greedy_baseline=False)
    assert "r_greedy" not in draw and draw["lp"].size(0) == 3 * batch.size
    adv = recipe.rl_advantages(draw, "loo")
    r = torch.tensor(draw["r_sample"], dtype=torch.float64)
    plain = (r - leave_one_out_baseline(r, 3)).float()
    assert torch.allclose(adv if not intermediate else adv[:, 0], plain, atol=1e-6)   # the first word's return
    loss, stats = recipe.rl_loss(model, batch)
    assert torch.isfinite(loss) and loss.requires_grad and "reward_greedy" not in stats
    assert 0 <= stats["adv_positive"] <= 1 and stats["entropy"] > 0


def test_greedy_baseline_is_decoded_in_eval_mode_and_the_mode_is_restored(monkeypatch):
    """The greedy summary is the model's test-time output: dropout off.  The samples are drawn
    from the policy being trained (train mode), and the model is left in the mode it was in."""
    from dca_course.recipes import DCAConfig, DCARecipe

    vocab, batch, model = _setup(context_layers=1)
    recipe = DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, rl_samples=2, max_decode=4, baseline="greedy")))
    recipe._vocab = vocab
    modes = []
    real_step = model.step

    def step(*args, **kwargs):
        modes.append((torch.is_grad_enabled(), model.training))    # greedy: no grad; sampling: grad
        return real_step(*args, **kwargs)

    monkeypatch.setattr(model, "step", step)
    for start in (True, False):
        model.train(start)
        modes.clear()
        recipe.rl_loss(model, batch)
        greedy_modes = {training for grad, training in modes if not grad}
        sample_modes = {training for grad, training in modes if grad}
        assert greedy_modes == {False}, "the greedy baseline must be decoded in eval mode"
        assert sample_modes == {start}
        assert model.training is start


def test_rl_diagnostics_script_runs_on_a_tiny_model(load_benchmark):
    """experiments/rl_diagnostics.py's core function, two steps on the hand-made articles."""
    from dca_course.recipes import DCAConfig, DCARecipe

    bench = load_benchmark("rl_diagnostics")
    vocab, _, model = _setup(context_layers=1)
    recipe = DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, rl_samples=2, rl_batch_size=3, max_decode=5)))
    recipe._vocab = vocab
    before = [p.detach().clone() for p in model.parameters()]
    res = bench.diagnose(recipe, model, _examples(), steps=2, gamma=0.9984, reduction="token", baseline="loo",
                         variance_draws=2, variance_at=("first",), valid=_examples()[:2])
    assert len(res["steps"]) == 2 and set(res["variance"]) == {"first"}
    row = res["steps"][0]
    for key in ("reward_sample", "reward_greedy", "pos_greedy", "pos_loo", "g_rl", "g_mle", "entropy"):
        assert row[key] == row[key]                                    # measured (not NaN)
    assert set(res["variance"]["first"]) == {"draws", "none", "greedy", "loo"}
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))   # it took steps
    res["summary"] = bench.summarise(res)
    assert "leave-one-out" in bench.table([res]) and 0 <= res["valid"]["after"] <= 1
    assert len(res["valid"]["scores_after"]) == 2 and "se" in res["valid"]["change"]


def test_rl_diagnostics_converts_a_sequence_reduced_gradient_to_the_per_token_one(load_benchmark):
    """``g_rl_tok``/``g_mle_tok`` under ``reduction="sequence"`` are the norms the per-token
    reduction gives on the same first step (same weights, same seed, so the same samples),
    measured directly by a run with ``reduction="token"``; and they differ from the sums'."""
    import copy

    from dca_course.recipes import DCAConfig, DCARecipe

    bench = load_benchmark("rl_diagnostics")
    vocab, _, model = _setup(context_layers=1)
    rows = {}
    for reduction in ("token", "sequence"):
        recipe = DCARecipe(DCAConfig.from_profile("fast", dict(rl=True, rl_samples=2, rl_batch_size=3,
                                                               max_decode=5)))
        recipe._vocab = vocab
        res = bench.diagnose(recipe, copy.deepcopy(model), _examples(), steps=1, gamma=0.9984,
                             reduction=reduction, baseline="loo")
        rows[reduction] = res["steps"][0]
    tok, seq = rows["token"], rows["sequence"]
    assert seq["g_rl_tok"] == pytest.approx(tok["g_rl"], rel=1e-5)
    assert seq["g_mle_tok"] == pytest.approx(tok["g_mle"], rel=1e-5)
    assert seq["g_rl"] != pytest.approx(tok["g_rl"], rel=1e-3)          # the sums' norms are another scale
    assert seq["g_mle"] != pytest.approx(tok["g_mle"], rel=1e-3)


def test_rl_samples_one_is_accepted_without_rl_on_the_command_line(tmp_path, capsys):
    from dca_course.__main__ import build_parser
    from dca_course.recipes import CONFIGS, DCAConfig
    from dca_course.recipes.config import config_overrides

    args = build_parser().parse_args(["train", "dca", "--data", "synthnews-long:8", "--rl-samples", "1"])
    assert DCAConfig.from_profile("fast", config_overrides(args, DCAConfig, CONFIGS, "dca")).rl_samples == 1


@pytest.mark.parametrize("discount", [1.0, 0.5, 0.0])
def test_the_intermediate_reward_discount_is_a_knob(discount):
    """``--reward-discount`` reaches every sentence's return: with the greedy baseline a word of
    sentence q is credited with G_q = sum_{q' >= q} discount^(q' - q) r(y_q') less the greedy
    summary's G_q; the default 1 keeps the undiscounted reward to go."""
    from dca_course.recipes import DCAConfig, DCARecipe

    assert DCAConfig().reward_discount == 1.0
    ref = "zorvik won the match .\npello said the team was happy ."
    sample = "zorvik won the match . pello was happy .".split()
    greedy_words = "pello said .".split()
    recipe = DCARecipe(DCAConfig.from_profile("fast", dict(intermediate_rewards=True, reward_discount=discount)))
    draw = {"lp": torch.zeros(1, len(sample) + 1), "k": 1, "samples": [sample], "greedy": [greedy_words],
            "refs": [ref]}
    adv = recipe.rl_advantages(draw, "greedy")[0].tolist()
    d_s, d_g = intermediate_rewards(sample, ref), intermediate_rewards(greedy_words, ref)
    first = d_s[0] + discount * d_s[1] - d_g[0]                    # sentence 1: G_1(sample) - G_1(greedy)
    second = d_s[1] - 0.0                                          # greedy has no sentence 2
    assert adv[:5] == pytest.approx([first] * 5) and adv[5:] == pytest.approx([second] * 5)   # its 4 words and </s>
