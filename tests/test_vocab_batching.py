"""The extended vocabulary (See et al. 2017, section 2.2) and batching."""
import string

import pytest
import torch
from hypothesis import given, settings, strategies as st

from dca_course.data import Example, Vocab
from dca_course.data.batching import batch_indices, collate, lengths_to_mask, pad_sequences

WORDS = st.lists(st.sampled_from(list(string.ascii_lowercase[:12])), min_size=0, max_size=20)
VOCAB = Vocab(list("abcdef"))  # g..l are out of vocabulary


def test_specials_come_first():
    assert VOCAB.itos[:4] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert (VOCAB.pad_id, VOCAB.unk_id, VOCAB.bos_id, VOCAB.eos_id) == (0, 1, 2, 3)


def test_build_ranks_by_frequency_then_alphabet():
    v = Vocab.build([["b", "a", "b", "c"], ["a", "b"]], max_size=6)
    assert v.itos[4:] == ["b", "a"]


@settings(max_examples=200, deadline=None)
@given(WORDS)
def test_source_oovs_get_ids_from_V_in_order_of_first_appearance(tokens):
    ids, oovs = VOCAB.encode_source(tokens)
    V = len(VOCAB)
    assert len(ids) == len(tokens)
    assert oovs == list(dict.fromkeys(t for t in tokens if t not in VOCAB))
    for tok, i in zip(tokens, ids):
        if tok in VOCAB:
            assert i == VOCAB.stoi[tok]
        else:
            assert i == V + oovs.index(tok)
    assert VOCAB.decode(ids, oovs, strip=False) == tokens


@settings(max_examples=200, deadline=None)
@given(WORDS, WORDS)
def test_target_keeps_extended_ids_only_for_source_oovs(src, tgt):
    _, oovs = VOCAB.encode_source(src)
    ids = VOCAB.encode_target(tgt, oovs)
    V = len(VOCAB)
    for tok, i in zip(tgt, ids):
        if tok in VOCAB:
            assert i == VOCAB.stoi[tok]
        elif tok in oovs:
            assert i == V + oovs.index(tok)
        else:
            assert i == VOCAB.unk_id
    assert all(i < V for i in VOCAB.decoder_inputs(ids))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(WORDS.filter(len), WORDS), min_size=1, max_size=6))
def test_batch_decoder_inputs_never_hold_extended_ids(pairs):
    batch = collate([Example(s, t) for s, t in pairs], VOCAB)
    V = len(VOCAB)
    assert int(batch.tgt_in.max()) < V and int(batch.src.max()) < V
    for i, (s, t) in enumerate(pairs):
        n = len(t) + 1
        assert batch.tgt_mask[i].sum() == n and batch.src_mask[i].sum() == len(s)
        # decoder input at t+1 is the target at t, mapped back to UNK when extended
        out = batch.tgt_out[i, : n - 1]
        assert torch.equal(batch.tgt_in[i, 1:n], torch.where(out >= V, torch.tensor(VOCAB.unk_id), out))
        assert batch.tgt_out[i, n - 1] == VOCAB.eos_id
        assert VOCAB.decode(batch.src_ext[i, : len(s)].tolist(), batch.oovs[i], strip=False) == s
    assert batch.n_oov == max(len(o) for o in batch.oovs)


def test_decode_rejects_ids_beyond_the_example_oovs():
    with pytest.raises(IndexError):
        VOCAB.decode([len(VOCAB) + 2], ["x"])


def test_padding_and_masks():
    ids = pad_sequences([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert lengths_to_mask([3, 1]).tolist() == [[True, True, True], [True, False, False]]


def test_vocab_round_trips_through_a_list():
    assert Vocab.from_list(VOCAB.to_list()) == VOCAB
    with pytest.raises(ValueError):
        Vocab.from_list(["a", "b"])


def test_distributed_batches_partition_each_epoch():
    per_rank = [batch_indices(10, 2, shuffle=True, seed=3, rank=r, world_size=2) for r in range(2)]
    assert len(per_rank[0]) == len(per_rank[1])
    seen = sorted(i for batches in per_rank for b in batches for i in b)
    assert seen == list(range(10))
    assert batch_indices(10, 4, shuffle=True, seed=3) == batch_indices(10, 4, shuffle=True, seed=3)
