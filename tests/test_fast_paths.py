"""The two homes of every model compute the same numbers: the paper's code as written
(:mod:`dca_course.nn`, :mod:`dca_course.models`) and its fast form (:mod:`dca_course.fast`).

A model made fast (:func:`dca_course.fast.accelerate`) runs the attention as one autograd operation
with a hand-written backward pass, the extended-vocabulary log-probabilities likewise, the keys'
gradient as one product over the steps, and the output layers once for all steps.  These tests
hold the two to the same loss and the same gradient of every parameter (float64: to rounding;
float32: within 1e-5).
"""
from __future__ import annotations

import copy

import pytest
import torch

import dca_course
from dca_course.data.examples import Example
from dca_course.data.vocab import Vocab
from dca_course.fast import FAST_FORMS, accelerate
from dca_course.fast.attention import FastAdditiveAttention, step_keys
from dca_course.fast.copying import log_final_distribution
from dca_course.fast.models import FastDCA, FastPointerGenerator
from dca_course.losses import coverage_loss, sequence_nll, teacher_forced_nll
from dca_course.models.copynet import CopyNet
from dca_course.models.dca import DCA
from dca_course.models.pointer_generator import PointerGenerator
from dca_course.models.seq2seq import Seq2Seq
from dca_course.nn.attention import AdditiveAttention
from dca_course.nn.copying import final_distribution, safe_log


def paper_log_final_distribution(logits, p_gen, attn, src_ext, n_oov):
    """The definition: See et al.'s eqs. (4) and (9) as written, then ``safe_log``."""
    return safe_log(final_distribution(torch.softmax(logits, dim=-1), attn, p_gen, src_ext, n_oov))


def fast_copy(model):
    """A fast model with ``model``'s weights (``model`` itself stays the paper's code)."""
    return accelerate(copy.deepcopy(model))


def _attention_inputs(dtype, coverage: bool, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    att = AdditiveAttention(5, 6, 7, coverage=True).to(dtype)
    with torch.no_grad():
        for p in att.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=dtype))
    q = torch.randn(3, 5, generator=g, dtype=dtype, requires_grad=True)
    k = torch.randn(3, 9, 6, generator=g, dtype=dtype, requires_grad=True)
    c = (torch.rand(3, 9, generator=g, dtype=dtype) * 2).requires_grad_() if coverage else None
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:] = False            # padding
    mask[2, :] = False             # an empty row (an empty DCA agent)
    return att, q, k, c, mask, g


def _attention_grads(att, q, k, c, mask, g_ctx, g_w):
    ctx, w = att(q, k, mask, coverage=c)
    inputs = [q, k] + ([c] if c is not None else []) + list(att.parameters())
    grads = torch.autograd.grad((ctx * g_ctx).sum() + (w * g_w).sum(), inputs, allow_unused=True)
    return [ctx, w] + [torch.zeros(()) if x is None else x for x in grads]


@pytest.mark.parametrize("coverage", [False, True])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_fused_attention_equals_the_equations(coverage, dtype, tol):
    att, q, k, c, mask, g = _attention_inputs(dtype, coverage)
    g_ctx, g_w = torch.randn(3, 6, generator=g, dtype=dtype), torch.randn(3, 9, generator=g, dtype=dtype)
    fast_att = fast_copy(att)
    assert type(fast_att) is FastAdditiveAttention and type(att) is AdditiveAttention
    fast = _attention_grads(fast_att, q, k, c, mask, g_ctx, g_w)
    ref = _attention_grads(att, q, k, c, mask, g_ctx, g_w)
    for a, b in zip(fast, ref):
        assert torch.allclose(a, b, atol=tol, rtol=0), (a - b).abs().max()
    w = fast[1]
    assert torch.all(w[~mask] == 0) and torch.allclose(w[:2].sum(-1), torch.ones(2, dtype=dtype))


def test_fused_attention_gradcheck():
    att, q, k, c, mask, _ = _attention_inputs(torch.float64, coverage=True)
    pk = att.project_keys(k).detach().requires_grad_()
    qp = att.W_s(q).detach().requires_grad_()
    w_c = att.w_c.weight.view(-1).detach().requires_grad_()
    v = att.v.weight.view(-1).detach().requires_grad_()
    from dca_course.fast.attention import _FusedAdditiveAttention

    def f(pk, qp, c, w_c, v, k):
        return _FusedAdditiveAttention.apply(pk, qp, c, w_c, v, k, mask)

    assert torch.autograd.gradcheck(f, (pk, qp, c, w_c, v, k))


def test_step_keys_sums_the_context_gradient_of_all_steps():
    """Three steps attending to one memory: its gradient arrives once, after the last step."""
    att, q, k, c, mask, g = _attention_inputs(torch.float64, coverage=False)
    queries = [torch.randn(3, 5, generator=g, dtype=torch.float64) for _ in range(3)]

    def total(attention, keys):
        return sum((attention(qt, keys, mask)[0] * (i + 1)).sum() for i, qt in enumerate(queries))

    keys = step_keys(k)
    assert len(keys._attention_grad_sink) == 0
    loss = total(fast_copy(att), keys)
    assert len(keys._attention_grad_sink) == 0           # the steps' shares arrive during backward
    (fast,) = torch.autograd.grad(loss, [k])
    (ref,) = torch.autograd.grad(total(att, k), [k])
    assert torch.allclose(fast, ref, atol=1e-12)
    assert step_keys(k.detach()) is not None and not hasattr(step_keys(k.detach()), "_attention_grad_sink")


def test_accelerate_changes_the_classes_in_place_and_nothing_else():
    """No global switch: ``accelerate`` turns one model's modules into their fast forms, keeping its
    weights; a model built beside it stays the paper's code."""
    dca_course.seed_everything(0)
    model, other = PointerGenerator(20, 8, 6, coverage=True), PointerGenerator(20, 8, 6)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    params = list(model.parameters())
    rng = torch.get_rng_state()
    assert accelerate(model) is model
    assert type(model) is FastPointerGenerator and type(model.attention) is FastAdditiveAttention
    assert isinstance(model, PointerGenerator) and model.coverage and model.config["coverage"] is True
    assert all(a is b for a, b in zip(model.parameters(), params)) and torch.equal(torch.get_rng_state(), rng)
    assert model.state_dict().keys() == before.keys()
    assert all(torch.equal(model.state_dict()[k], v) for k, v in before.items())
    assert type(other) is PointerGenerator and type(other.attention) is AdditiveAttention
    assert type(accelerate(model)) is FastPointerGenerator                     # twice: the same
    seq2seq = accelerate(Seq2Seq(20, 8, 6))               # no fast form of its own: its attention has one
    assert type(seq2seq) is Seq2Seq and type(seq2seq.attention) is FastAdditiveAttention
    assert type(accelerate(DCA(20, 8, 6)).word_attention) is FastAdditiveAttention
    assert all(issubclass(fast, paper) for paper, fast in FAST_FORMS.items())
    assert type(copy.deepcopy(model)) is FastPointerGenerator                   # gpu.copy_to deep-copies


def test_the_recipes_turn_the_fast_path_on_from_their_config():
    from dca_course.recipes import DCAConfig, DCARecipe, PointerGeneratorConfig, PointerGeneratorRecipe

    vocab = _vocab()
    for config_class, recipe_class, fast_class in ((PointerGeneratorConfig, PointerGeneratorRecipe,
                                                    FastPointerGenerator), (DCAConfig, DCARecipe, FastDCA)):
        on, off = config_class.from_profile("fast"), config_class.from_profile("fast", {"fast_path": False})
        assert on.fast_path is True and off.fast_path is False
        recipe_on, recipe_off = recipe_class(on), recipe_class(off)
        assert type(recipe_on.accelerated(recipe_on.build_model(vocab))) is fast_class
        assert type(recipe_off.accelerated(recipe_off.build_model(vocab))) is recipe_class.model_class


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_log_final_distribution_equals_the_equations(dtype, tol):
    g = torch.Generator().manual_seed(1)
    B, T, S, V, n_oov = 2, 3, 5, 7, 2
    logits = torch.randn(B, T, V, generator=g, dtype=dtype, requires_grad=True)
    p_gen = torch.rand(B, T, 1, generator=g, dtype=dtype).requires_grad_()
    attn = torch.softmax(torch.randn(B, T, S, generator=g, dtype=dtype), -1)
    attn[1, :, 4] = 0.0                                       # a padded position
    attn = attn.requires_grad_()
    src_ext = torch.tensor([[0, 7, 3, 7, 8], [2, 2, 7, 1, 0]])   # repeats, OOV ids; row 1 has no 2nd OOV
    upstream = torch.randn(B, T, V + n_oov, generator=g, dtype=dtype)   # a dense gradient, not only NLL's
    outs = []
    for f in (log_final_distribution, paper_log_final_distribution):
        lp = f(logits, p_gen, attn, src_ext, n_oov)
        outs.append([lp] + list(torch.autograd.grad((lp * upstream).sum(), [logits, p_gen, attn])))
    for a, b in zip(*outs):
        assert torch.allclose(a, b, atol=tol, rtol=0), (a - b).abs().max()
    lp = outs[0][0]
    assert torch.allclose(lp.exp()[0].sum(-1), torch.ones(T, dtype=dtype))   # row 0 uses every column
    assert torch.all(lp[1, :, V + 1] == torch.log(torch.tensor(torch.finfo(dtype).tiny, dtype=dtype)))


def test_log_final_distribution_gradcheck():
    g = torch.Generator().manual_seed(2)
    logits = torch.randn(2, 3, 6, generator=g, dtype=torch.float64, requires_grad=True)
    p_gen = (torch.rand(2, 3, 1, generator=g, dtype=torch.float64) * 0.8 + 0.1).requires_grad_()
    attn = torch.softmax(torch.randn(2, 3, 4, generator=g, dtype=torch.float64), -1).requires_grad_()
    src_ext = torch.tensor([[0, 6, 3, 6], [2, 2, 7, 1]])
    assert torch.autograd.gradcheck(lambda a, b, c: log_final_distribution(a, b, c, src_ext, 2),
                                    (logits, p_gen, attn))


def _bits(x: torch.Tensor) -> torch.Tensor:
    """The bit patterns of a float tensor (so that -0.0 and +0.0 differ, as they can downstream)."""
    return x.view(torch.int64 if x.dtype == torch.float64 else torch.int32)


def _distribution_inputs(dtype, seed=3, scale=3.0):
    """A final distribution whose columns cover every case of the target-only backward pass
    (``scale``: of the logits; large ones give probabilities far apart)."""
    g = torch.Generator().manual_seed(seed)
    B, T, S, V, n_oov = 3, 4, 6, 7, 2
    logits = scale * torch.randn(B, T, V, generator=g, dtype=dtype)
    logits[2, 0, 4] -= 1000 * scale     # a copied target word whose P_vocab underflows to 0 (t[y*] = -0.0)
    logits = logits.requires_grad_()
    p_gen = (torch.rand(B, T, 1, generator=g, dtype=dtype) * 0.8 + 0.1).requires_grad_()
    attn = torch.softmax(torch.randn(B, T, S, generator=g, dtype=dtype), -1)
    attn[2, :, 5] = 0.0                                                  # a padded position
    attn = attn.requires_grad_()
    # repeated source words, OOV ids 7 and 8; row 2 has no second OOV word, so its column 8 has P = 0
    src_ext = torch.tensor([[0, 7, 3, 7, 8, 1], [2, 2, 7, 1, 0, 5], [4, 4, 4, 7, 6, 0]])
    # targets: copied and generated words, OOV words, the impossible column 8 of row 2
    targets = torch.tensor([[7, 3, 8, 5], [2, 7, 6, 2], [4, 8, 7, 1]])
    weights = torch.randn(B, T, generator=g, dtype=dtype)
    weights[1, 3] = 0.0          # a masked token whose word is copied too: a -0.0 gradient, which the
    #                              gather's backward turns into +0.0 (0 + -0.0)
    weights[2, 0] = 1.0
    return (logits, p_gen, attn, src_ext, n_oov), targets, weights


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_target_log_probs_give_the_gathered_gradient_bit_for_bit(dtype):
    """A loss that reads only log P(y*) (``target=``) gets the values and gradients, to the bit,
    that the same loss read from all of log P through a gather gets: training is unchanged."""
    (logits, p_gen, attn, src_ext, n_oov), targets, w = _distribution_inputs(dtype)
    inputs = [logits, p_gen, attn]
    lp = log_final_distribution(logits, p_gen, attn, src_ext, n_oov)
    gathered = lp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    lp2, picked = log_final_distribution(logits, p_gen, attn, src_ext, n_oov, targets)
    assert torch.equal(_bits(lp), _bits(lp2)) and torch.equal(_bits(gathered), _bits(picked))
    none, alone = log_final_distribution(logits, p_gen, attn, src_ext, n_oov, targets, full=False)
    assert none is None and torch.equal(_bits(gathered), _bits(alone))
    dense = torch.autograd.grad(-(gathered * w).sum(), inputs, retain_graph=True)
    for loss in (-(picked * w).sum(), -(alone * w).sum()):
        sparse = torch.autograd.grad(loss, inputs, retain_graph=True)
        for a, b in zip(dense, sparse):
            assert torch.equal(_bits(a), _bits(b)), (a - b).abs().max()
        assert sparse[0].abs().sum() > 0 and sparse[2].abs().sum() > 0
    # both read: the picked terms join the dense gradient
    both = torch.autograd.grad(-(picked * w).sum() + lp2.exp().sum(), inputs)
    ref = torch.autograd.grad(-(gathered * w).sum() + lp.exp().sum(), inputs)
    for a, b in zip(both, ref):
        assert torch.equal(a, b), (a - b).abs().max()


def test_target_log_probs_gradcheck():
    # logits of scale 1: no probability so small that finite differences lose their accuracy
    (logits, p_gen, attn, src_ext, n_oov), _, _ = _distribution_inputs(torch.float64, seed=4, scale=1.0)
    targets = torch.tensor([[7, 3, 0, 5], [2, 7, 6, 1], [4, 4, 7, 1]])   # columns with probability mass
    assert torch.autograd.gradcheck(lambda a, b, c: log_final_distribution(a, b, c, src_ext, n_oov, targets)[1],
                                    (logits, p_gen, attn))
    assert torch.autograd.gradcheck(lambda a, b, c: log_final_distribution(a, b, c, src_ext, n_oov, targets),
                                    (logits, p_gen, attn))
    assert torch.autograd.gradcheck(
        lambda a, b, c: log_final_distribution(a, b, c, src_ext, n_oov, targets, full=False)[1], (logits, p_gen, attn))


# -- whole models: teacher forcing, loss and every parameter's gradient -------------------------------
WORDS = "the club signed a striker for four million on monday after talks . fans cheered".split()


def _vocab():
    return Vocab.build([WORDS])


def _examples(n=4, seed=0):
    """Articles of 2-5 sentences of 3-6 words with an OOV name, summaries of 2 sentences."""
    g = torch.Generator().manual_seed(seed)

    def words(k):
        return [WORDS[j] for j in torch.randint(len(WORDS) - 2, (k,), generator=g).tolist()]

    exs = []
    for i in range(n):
        name = f"zorbat{i}"
        paragraphs = [[[name] + words(2 + (i + s) % 4) + ["."] for s in range(2 + i % 4)]]
        summary = [[name] + words(3) + ["."], words(2 + i) + ["."]]
        exs.append(Example.from_document(paragraphs, summary))
    return exs


def _loss_and_grads(model, batch, coverage: bool, dense: bool = True):
    # without a dense term, the recipe's loss: log P(y*) alone where the model gives it (the fast
    # model), else gathered from log P
    out = model(batch) if dense else model(batch, log_probs=False)
    loss = teacher_forced_nll(out, batch.tgt_out, batch.tgt_mask)
    if coverage:
        loss = loss + coverage_loss(out["attn"], out["coverage"], batch.tgt_mask)
    if dense:   # a dense term too, so that every column of the extended vocabulary gets a gradient
        loss = loss + 1e-2 * (out["log_probs"].clamp_min(-30).exp() * out["log_probs"].clamp_min(-30)).sum()
    params = [p for p in model.parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    return loss.detach(), [torch.zeros(()) if g is None else g for g in grads]


def _pg_batch(vocab, examples):
    from dca_course.data.batching import collate

    return collate(examples, vocab)


PG_VARIANTS = [dict(coverage=True), dict(coverage=False), dict(coverage=True, input_feeding=False),
               dict(coverage=False, input_feeding=False), dict(pointer=False)]


@pytest.mark.parametrize("kwargs", PG_VARIANTS, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
@pytest.mark.parametrize("dense", [True, False], ids=["nll+dense", "nll"])
def test_pointer_generator_fast_form_equals_the_paper_code(kwargs, dtype, tol, dense):
    dca_course.seed_everything(0)
    vocab = _vocab()
    model = PointerGenerator(len(vocab), 8, 6, **kwargs).to(dtype)
    torch.nn.init.normal_(model.attention.w_c.weight)        # coverage's weight, not its zero start
    batch = _pg_batch(vocab, _examples())
    fast = _loss_and_grads(fast_copy(model), batch, model.coverage, dense=dense)
    ref = _loss_and_grads(model, batch, model.coverage, dense=dense)
    assert torch.allclose(fast[0], ref[0], atol=tol, rtol=0)
    for (name, _), a, b in zip(model.named_parameters(), fast[1], ref[1]):
        assert torch.allclose(a, b, atol=tol, rtol=tol), (name, (a - b).abs().max())


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
def test_copynet_fast_form_equals_the_paper_code(dtype, tol):
    dca_course.seed_everything(0)
    vocab = _vocab()
    model = CopyNet(len(vocab), 8, 6).to(dtype)
    batch = _pg_batch(vocab, _examples())
    fast = _loss_and_grads(fast_copy(model), batch, False)
    ref = _loss_and_grads(model, batch, False)
    assert torch.allclose(fast[0], ref[0], atol=tol, rtol=0)
    for (name, _), a, b in zip(model.named_parameters(), fast[1], ref[1]):
        assert torch.allclose(a, b, atol=tol, rtol=tol), (name, (a - b).abs().max())


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 1e-5)])
@pytest.mark.parametrize("extended", [False, True], ids=["DCA", "ExtendedDCA"])
def test_dca_fast_form_equals_the_paper_code(dtype, tol, extended):
    from dca_course.data.agents import collate_agents
    from dca_course.fast.models import FastExtendedDCA
    from dca_course.models.extensions import ExtendedDCA

    dca_course.seed_everything(0)
    vocab = _vocab()
    if extended:   # the course's tanh in the vocabulary MLP: its own vocab_logits, FastDCA's the rest
        model = ExtendedDCA(len(vocab), 8, 6, context_layers=1, extensions=["vocab_tanh"]).to(dtype)
    else:
        model = DCA(len(vocab), 8, 6, context_layers=1).to(dtype)
    examples = _examples()
    batch = collate_agents(examples, vocab, n_agents=3)
    assert type(fast_copy(model)) is (FastExtendedDCA if extended else FastDCA)
    fast = _loss_and_grads(fast_copy(model), batch, False)
    ref = _loss_and_grads(model, batch, False)
    assert torch.allclose(fast[0], ref[0], atol=tol, rtol=0)
    for (name, _), a, b in zip(model.named_parameters(), fast[1], ref[1]):
        assert torch.allclose(a, b, atol=tol, rtol=tol), (name, (a - b).abs().max())


def _copying_model(kind: str):
    """A pointer-generator (with coverage, its weight not zero) or a DCA, the paper's code, and a batch for it."""
    from dca_course.data.agents import collate_agents

    dca_course.seed_everything(0)
    vocab = _vocab()
    if kind == "dca":
        return DCA(len(vocab), 8, 6, context_layers=1), collate_agents(_examples(), vocab, n_agents=3)
    model = PointerGenerator(len(vocab), 8, 6, coverage=True, input_feeding=kind == "pg+feeding")
    torch.nn.init.normal_(model.attention.w_c.weight)
    return model, _pg_batch(vocab, _examples())


@pytest.mark.parametrize("kind", ["pg", "pg+feeding", "dca"])
@pytest.mark.parametrize("reduction", ["token", "sequence"])
def test_loss_from_target_log_probs_is_the_gathered_loss_bit_for_bit(kind, reduction):
    """The recipes' loss reads ``target_log_probs`` of ``model(batch, log_probs=False)``, which
    computes nothing else of the distribution; the loss and every gradient are those of
    ``sequence_nll`` over ``log_probs``, to the bit (float32, as training runs)."""
    paper, batch = _copying_model(kind)
    model = fast_copy(paper)
    out, lean = model(batch), model(batch, log_probs=False)
    assert "target_log_probs" not in out                      # model(batch) gives what it always gave
    assert lean["target_log_probs"].shape == batch.tgt_out.shape and lean["log_probs"] is None
    results = []
    for o, nll in ((out, sequence_nll(out["log_probs"], batch.tgt_out, batch.tgt_mask, reduction=reduction)),
                   (out, teacher_forced_nll(out, batch.tgt_out, batch.tgt_mask, reduction=reduction)),
                   (lean, teacher_forced_nll(lean, batch.tgt_out, batch.tgt_mask, reduction=reduction))):
        loss = nll + (coverage_loss(o["attn"], o["coverage"], batch.tgt_mask) if kind != "dca" else 0.0)
        results.append([loss] + list(torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)))
    names = ["loss"] + [name for name, _ in model.named_parameters()]
    for other in results[1:]:
        for name, a, b in zip(names, results[0], other):
            assert torch.equal(_bits(a), _bits(b)), name
    assert "target_log_probs" not in paper(batch, log_probs=False)   # the paper's code, step by step


def test_without_input_feeding_the_decoder_is_one_fused_lstm():
    vocab = _vocab()
    model = PointerGenerator(len(vocab), 8, 6, input_feeding=False)
    assert isinstance(model.cell, torch.nn.LSTM) and model.input_proj is None
    assert model.config["input_feeding"] is False
    assert isinstance(PointerGenerator(len(vocab), 8, 6).cell, torch.nn.LSTMCell)


def test_freed_memory_is_kept_on_linux(monkeypatch):
    import platform

    from dca_course import _keep_freed_memory

    monkeypatch.setenv("DCA_KEEP_MEMORY", "0")
    assert _keep_freed_memory() is False
    monkeypatch.delenv("DCA_KEEP_MEMORY")
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert _keep_freed_memory() is True


@pytest.mark.parametrize("coverage", [False, True])
def test_attention_over_steps_gradcheck(coverage):
    """All steps at once, coverage carried from step to step, against numerical gradients."""
    from dca_course.fast.attention import attention_over_steps

    att, _, k, _, mask, g = _attention_inputs(torch.float64, coverage=True)
    q = torch.randn(3, 4, 7, generator=g, dtype=torch.float64, requires_grad=True)   # 4 steps
    c0 = torch.zeros(3, 9, dtype=torch.float64, requires_grad=True)
    params = list(att.parameters())

    def f(q, k, c0, *params):
        context, attn, cov = attention_over_steps(att, k, mask, q, c0, coverage=coverage)
        return context, attn, cov

    assert torch.autograd.gradcheck(f, (q, k, c0, *params))


def test_step_keys_survive_a_second_backward_of_the_same_graph():
    att, q, k, _, mask, g = _attention_inputs(torch.float64, coverage=False)
    keys, att = step_keys(k), fast_copy(att)
    loss = sum(att(torch.randn(3, 5, generator=g, dtype=torch.float64), keys, mask)[0].sum() for _ in range(2))
    (first,) = torch.autograd.grad(loss, [k], retain_graph=True)
    (second,) = torch.autograd.grad(loss, [k])
    assert torch.equal(first, second) and first.abs().sum() > 0
