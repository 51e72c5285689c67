"""The control of notebook 02: Seq2Seq with its attention taken out (dca_course.models.extensions.fixed_context)."""
from __future__ import annotations

import torch

from dca_course.data import Example, Vocab
from dca_course.data.batching import collate
from dca_course.decoding import greedy
from dca_course.models import Seq2Seq
from dca_course.models.extensions import FixedContextSeq2Seq

PAIRS = [("2021/9/15", "2021-09-15"), ("15 sep 2021", "2021-09-15"), ("1970/2/2", "1970-02-02")]


def _batch():
    examples = [Example(list(s), list(t)) for s, t in PAIRS]
    vocab = Vocab.build([ex.source + ex.target for ex in examples])
    return vocab, collate(examples, vocab)


def test_the_control_shares_every_weight_but_the_attention_and_starts_from_the_same_values():
    vocab, _ = _batch()
    torch.manual_seed(0)
    full = Seq2Seq(len(vocab), emb_size=8, hidden_size=6).state_dict()
    torch.manual_seed(0)
    control = FixedContextSeq2Seq(len(vocab), emb_size=8, hidden_size=6).state_dict()
    assert set(full) - set(control) == {k for k in full if k.startswith("attention.")} != set()
    assert set(control) <= set(full)
    assert all(torch.equal(control[k], full[k]) for k in control)


def test_the_context_is_the_encoders_final_states_read_one_example_at_a_time():
    vocab, batch = _batch()
    torch.manual_seed(0)
    model = FixedContextSeq2Seq(len(vocab), emb_size=8, hidden_size=6).eval()
    with torch.no_grad():
        context = model.encode(batch)["context"]                     # (3, 12)
        for k, (src, _) in enumerate(PAIRS):
            ids = torch.tensor([[vocab.stoi[ch] for ch in src]])    # one example, no padding
            _, h_n = model.encoder.rnn(model.embedding(ids))        # (2, 1, 6): ->h_{T_x}, <-h_1
            assert torch.allclose(context[k], torch.cat([h_n[0, 0], h_n[1, 0]]), atol=1e-6)


def test_the_decoder_reads_the_same_context_at_every_step_and_teacher_forcing_equals_its_steps():
    vocab, batch = _batch()
    torch.manual_seed(1)
    model = FixedContextSeq2Seq(len(vocab), emb_size=8, hidden_size=6).eval()
    with torch.no_grad():
        out = model(batch)["log_probs"]                              # (3, 11, V)
        state = model.encode(batch)
        first = state["context"].clone()
        steps = []
        for t in range(batch.tgt_in.size(1)):
            lp, state, info = model.step(batch.tgt_in[:, t], state)
            steps.append(lp)
            assert info == {} and torch.equal(state["context"], first)
    assert torch.allclose(out, torch.stack(steps, 1), atol=1e-6)
    assert torch.allclose(out.exp().sum(-1), torch.ones(out.shape[:2]), atol=1e-5)


def test_greedy_decoding_runs_on_the_control():
    vocab, batch = _batch()
    torch.manual_seed(2)
    model = FixedContextSeq2Seq(len(vocab), emb_size=8, hidden_size=6).eval()
    decoded = greedy(model, batch, max_len=12)
    assert len(decoded.ids) == len(PAIRS) and all(len(ids) <= 12 for ids in decoded.ids)
