"""Seq2seq and GRU-LM interfaces, decoding, and the command line's contract."""
import json
import subprocess
import sys

import pytest
import torch

from dca_course import device, seed_everything
from dca_course.__main__ import main
from dca_course.data import Example, Vocab
from dca_course.data.batching import collate
from dca_course.decoding import greedy, sample
from dca_course.models import GRULanguageModel, Seq2Seq
from dca_course.recipes import MODELS


def _batch():
    vocab = Vocab(list("abcdefgh"))
    exs = [Example(list("abcz"), list("cba")), Example(list("de"), list("edq"))]
    return vocab, collate(exs, vocab)


def test_seq2seq_step_by_step_equals_teacher_forced_forward():
    seed_everything(0)
    vocab, batch = _batch()
    model = Seq2Seq(len(vocab), 8, 12).eval()
    out = model(batch)
    assert out["log_probs"].shape == (2, batch.tgt_in.size(1), len(vocab))
    assert out["attn"].shape == (2, batch.tgt_in.size(1), batch.src.size(1))
    assert (out["attn"][1, :, 2:] == 0).all()          # the second source is 2 tokens long
    assert torch.allclose(out["log_probs"].exp().sum(-1), torch.ones(2, batch.tgt_in.size(1)))
    state = model.encode(batch)
    for t in range(batch.tgt_in.size(1)):
        lp, state, _ = model.step(batch.tgt_in[:, t], state)
        assert torch.allclose(lp, out["log_probs"][:, t], atol=1e-6)



def test_seq2seq_forward_is_its_former_inline_loop_bit_for_bit():
    """Seq2Seq.forward runs the one teacher forcing (dca_course.models.teacher_forcing) over
    batch.tgt_in; this is the loop it wrote inline before, which must give the same bits, forward
    and backward, on a batch with OOV words and targets of different lengths."""
    def inline_forward(model, batch):
        state = model.encode(batch)
        log_probs, attns = [], []
        for t in range(batch.tgt_in.size(1)):
            lp, state, info = model.step(batch.tgt_in[:, t], state)
            log_probs.append(lp)
            attns.append(info["attn"])
        return {"log_probs": torch.stack(log_probs, 1), "attn": torch.stack(attns, 1)}

    vocab = Vocab(list("abcdefgh"))
    batch = collate([Example(list("abcz"), list("czbz")), Example(list("de"), list("edq"))], vocab)
    assert (batch.tgt_out >= len(vocab)).any() and not batch.tgt_mask.all()     # a copied OOV word, padding
    grads = []
    for forward in (lambda m, b: m(b), inline_forward):
        seed_everything(0)
        model = Seq2Seq(len(vocab), 8, 12)
        out = forward(model, batch)
        (out["log_probs"].sum() + out["attn"].square().sum()).backward()
        grads.append((out, [p.grad for p in model.parameters()]))
    (new, new_grads), (old, old_grads) = grads
    assert new.keys() == old.keys() and all(torch.equal(new[k], old[k]) for k in new)
    assert all(torch.equal(a, b) for a, b in zip(new_grads, old_grads))

def test_greedy_and_sample_shapes():
    seed_everything(0)
    vocab, batch = _batch()
    model = Seq2Seq(len(vocab), 8, 12).eval()
    d = greedy(model, batch, max_len=5)
    assert len(d.ids) == 2 and all(len(x) <= 5 for x in d.ids)
    assert d.info["attn"].shape[0] == 2
    g = torch.Generator().manual_seed(0)
    s1 = sample(model, batch, 5, generator=g).ids
    s2 = sample(model, batch, 5, generator=torch.Generator().manual_seed(0)).ids
    assert s1 == s2


def test_gru_lm_scratch_and_cudnn_paths_agree():
    seed_everything(0)
    fast = GRULanguageModel(10, 4, 6, scratch=False)
    slow = GRULanguageModel(10, 4, 6, scratch=True)
    state = fast.state_dict()
    mapped = {k.replace("rnn.weight_ih_l0", "rnn.cell.weight_ih").replace("rnn.weight_hh_l0", "rnn.cell.weight_hh")
               .replace("rnn.bias_ih_l0", "rnn.cell.bias_ih").replace("rnn.bias_hh_l0", "rnn.cell.bias_hh"): v
              for k, v in state.items()}
    slow.load_state_dict(mapped)
    x = torch.randint(0, 10, (3, 7))
    assert torch.allclose(fast(x)[0], slow(x)[0], atol=1e-6)
    _, _, gates = slow(x, return_gates=True)
    assert gates["z"].shape == (3, 7, 6)


def test_device_env_override(monkeypatch):
    monkeypatch.setenv("DCA_DEVICE", "cpu")
    assert device().type == "cpu"
    assert device("cpu").type == "cpu"


def _run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dca_course", *args], capture_output=True, text=True, cwd=cwd)


def test_unknown_model_lists_choices_and_fails():
    r = _run_cli("train", "nope", "--data", "toy:dates")
    assert r.returncode != 0 and "seq2seq" in r.stderr and "gru-lm" in r.stderr


def test_unknown_data_spec_lists_choices_and_fails():
    r = _run_cli("train", "seq2seq", "--data", "nope:1")
    assert r.returncode != 0 and "toy:dates" in r.stderr


def test_train_then_evaluate_ends_with_json(tmp_path, capsys):
    rc = main(["train", "seq2seq", "--data", "toy:reverse", "--epochs", "1", "--limit-train", "500", "--device", "cpu",
               "--out", str(tmp_path / "run"), "--quiet"])
    assert rc == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert 0 <= result["exact_match"] <= 1 and result["epochs"] == 1
    assert json.loads((tmp_path / "run" / "metrics.json").read_text()) == result
    assert main(["evaluate", str(tmp_path / "run"), "--split", "valid"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["split"] == "valid" and 0 <= again["exact_match"] <= 1


def test_evaluate_on_truncated_checkpoint_names_the_file(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "last.pt").write_bytes(b"PK\x03\x04 truncated")
    assert main(["evaluate", str(run)]) == 2
    assert str(run / "last.pt") in capsys.readouterr().err


def _config_for(argv):
    """The configuration `train` would build from ``argv`` (flags as the command line parses them)."""
    from dca_course.__main__ import build_parser
    from dca_course.recipes import CONFIGS
    from dca_course.recipes.config import config_overrides

    args = build_parser().parse_args(["train", *argv])
    config_cls = CONFIGS[args.model]
    return config_cls.from_profile(args.profile, config_overrides(args, config_cls, CONFIGS, args.model))


def test_max_src_and_input_feeding_reach_the_recipes():
    """--max-src sets how much of an article a summariser reads (PG 400, DCA 800 by default);
    --no-input-feeding switches the pointer-generator's decoder input (on by default, as See et al.'s code)."""
    from dca_course.recipes import DCAConfig, PointerGeneratorConfig, PointerGeneratorRecipe

    assert PointerGeneratorConfig.from_profile("fast").max_src == 400
    assert DCAConfig.from_profile("fast").max_src == 800
    assert PointerGeneratorConfig.from_profile("fast").input_feeding is True
    config = _config_for(["pointer-generator", "--data", "synthnews", "--max-src", "800", "--no-input-feeding"])
    assert config.max_src == 800 and config.input_feeding is False
    model = PointerGeneratorRecipe(config).build_model(Vocab.build([["a", "b"]]))
    assert model.input_feeding is False
    # the recipe's default is the constructor's: one choice, See et al.'s
    default = PointerGeneratorRecipe(_config_for(["pointer-generator", "--data", "synthnews"]))
    assert default.build_model(Vocab.build([["a", "b"]])).input_feeding is True
    assert _config_for(["pointer-generator", "--data", "x", "--no-pointer"]).pointer is False
    assert _config_for(["dmn", "--data", "babi:1", "--variant", "dmn+", "--passes", "2"]).dmn_variant == "dmn+"


def test_a_flag_of_another_model_is_a_clear_error():
    from dca_course.registry import SpecError

    with pytest.raises(SpecError, match=r"model 'seq2seq' has no option --coverage"):
        _config_for(["seq2seq", "--data", "toy:dates", "--coverage"])
    r = _run_cli("train", "dca", "--data", "synthnews-long:8", "--coverage-weight", "2")
    assert r.returncode == 2 and "model 'dca' has no option --coverage-weight" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_every_knob_has_a_flag_and_help():
    from dataclasses import fields

    from dca_course.__main__ import build_parser
    from dca_course.recipes import CONFIGS

    train = build_parser()._subparsers._group_actions[0].choices["train"]
    dests = {a.dest for a in train._actions}
    for config_cls in CONFIGS.values():
        for f in fields(config_cls):
            assert f.metadata.get("help"), (config_cls.__name__, f.name)
            assert f.name in dests or not f.metadata["flag"], (config_cls.__name__, f.name)


def test_models_table_names_match_the_recipes():
    from dca_course.recipes import MODELS

    assert all(recipe.name == name for name, recipe in MODELS.items())
    assert len(set(MODELS.values())) == len(MODELS)


def test_recipes_read_no_knob_outside_their_configuration():
    """No untyped dict of knobs is left: every knob is a field of a configuration dataclass."""
    import ast
    import re
    from pathlib import Path

    import dca_course.recipes as recipes

    for path in Path(recipes.__file__).parent.glob("*.py"):
        text = path.read_text()
        assert not re.search(r"\bhp\.get\(|\bhp\[|self\.hp\b|_option_string_actions", text), path.name
    # nor the untyped shims of the old API, Recipe.hparams(profile, overrides) -> dict and the
    # property Recipe.hp -> dict: build with XConfig.from_profile(...) and read the fields
    tree = ast.parse((Path(recipes.__file__).parent / "base.py").read_text())
    defined = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    defined |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    assert not {"hparams", "hp"} & defined, "dca_course/recipes/base.py defines hparams or hp again"
    assert not hasattr(recipes.Recipe, "hparams") and not hasattr(recipes.Recipe, "hp")


def test_load_data_needs_nothing_else_imported():
    code = ("import sys; from dca_course.registry import load_data; d = load_data('toy:dates'); "
            "print(d.spec, len(d.train)); assert 'dca_course.__main__' not in sys.modules")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["toy:dates", "6000"]


def test_decode_lengths_are_resolved_from_the_data_and_saved(tmp_path):
    """The summarisers' open decode lengths come from the data set when training starts (a new
    configuration, the recipe's default left as it was) and go into the checkpoint."""
    from dca_course.recipes import PointerGeneratorConfig
    from dca_course.registry import Dataset

    config = PointerGeneratorConfig.from_profile("fast")
    data = Dataset("d", "summaries", [], [], [], meta={"min_decode": 20, "max_decode": 80})
    resolved = config.for_data(data)
    assert (config.min_decode, config.max_decode) == (None, None)
    assert (resolved.min_decode, resolved.max_decode) == (20, 80)
    assert resolved.for_data(Dataset("e", "summaries", [], [], [])) == resolved
    assert (config.for_data(Dataset("e", "summaries", [], [], [])).max_decode) == 100


# -- one source for a model's defaults -----------------------------------------------------------
#: Whose values a model's constructor defaults are: the papers' sizes (the ``full`` profile), but the
#: ``fast`` profile for the two small models of notebooks 01 and 03 (a new model needs no entry).
FAST_DEFAULTS = {"gru-lm", "dmn"}
#: Where they differ on purpose, and why.
DIFFERENT = {
    ("dmn", "passes"): "the recipe's dmn_passes 0 means one pass per supporting fact, resolved from the data",
    ("dmn", "answer"): "the recipe's answer 'auto' is resolved from the training answers",
}


def _constructor_defaults_against_the_recipes():
    import inspect

    from dca_course.recipes import MODELS

    for name, recipe in MODELS.items():
        config = recipe.config_class.from_profile("fast" if name in FAST_DEFAULTS else "full")
        for p in inspect.signature(recipe.model_class.__init__).parameters.values():
            knob = next((k for k in (p.name, f"dmn_{p.name}") if hasattr(config, k)), None)
            if knob is not None and p.default is not inspect.Parameter.empty:
                yield name, p.name, p.default, getattr(config, knob)


def test_a_models_constructor_defaults_are_its_recipes_values():
    differ = {(name, param) for name, param, default, value in _constructor_defaults_against_the_recipes()
              if default != value}
    assert differ - set(DIFFERENT) == set(), "constructor defaults that are not the recipe's: " + str(
        sorted(differ - set(DIFFERENT)))
    assert set(DIFFERENT) <= differ, f"no longer different (remove from DIFFERENT): {set(DIFFERENT) - differ}"
    checked = list(_constructor_defaults_against_the_recipes())
    assert len(checked) >= 25 and {name for name, *_ in checked} == set(MODELS) and FAST_DEFAULTS <= set(MODELS)


def test_no_configuration_is_more_than_one_level_below_recipe_config():
    from dca_course.recipes import CONFIGS, RecipeConfig

    for name, config in CONFIGS.items():
        assert [c for c in config.__mro__ if c is not object] == [config, RecipeConfig], name


def test_train_model_help_lists_that_models_knobs_with_help_written_for_it():
    from dataclasses import fields

    from dca_course.__main__ import build_parser
    from dca_course.recipes import CONFIGS, RecipeConfig

    # a model's own knobs name no other model; the knobs every model shares (RecipeConfig's) may
    base = {f.name for f in fields(RecipeConfig)}
    # and words of other models' worlds, where a model has some to avoid (a new model needs no entry)
    also = {"seq2seq": ["summaris"], "gru-lm": ["encoder", "summar", "pointer"], "copynet": ["lstm"],
            "pointer-generator": ["agents"], "dmn": ["summar", "pointer"]}
    for name, config in CONFIGS.items():
        others = [m for m in CONFIGS if m != name]
        train = build_parser(name)._subparsers._group_actions[0].choices["train"]
        knob_dests = {f.name for c in CONFIGS.values() for f in fields(c)}
        dests = {a.dest for a in train._actions} & knob_dests - {"profile"}
        assert dests == {f.name for f in fields(config) if f.metadata["flag"]}, name
        for f in fields(config):
            words = also.get(name, []) + ([] if f.name in base else others)
            assert not any(word in f.metadata["help"].lower() for word in words), (name, f.name)


def test_the_dmns_full_profile_help_says_what_it_trains():
    """``train dmn --help`` says that ``full`` is Kumar et al.'s DMN for a short schedule, which is
    what it trains; the other models keep "the paper's sizes"."""
    from dca_course.__main__ import build_parser
    from dca_course.recipes import CONFIGS, DMNConfig

    def profile_help(model):
        train = build_parser(model)._subparsers._group_actions[0].choices["train"]
        return next(a.help for a in train._actions if a.dest == "profile")

    full = DMNConfig.from_profile("full")
    assert (full.dmn_variant, full.input_module, full.gate_features, full.memory_update) == ("dmn", "gru", "dmn", "gru")
    assert full.gate_supervision and not full.time_features and not full.word_match
    said = profile_help("dmn")
    assert "Kumar et al." in said and f"size {full.hidden_size} for {full.epochs} epochs" in said
    assert "the paper's sizes" not in said
    for model in set(CONFIGS) - {"dmn"}:
        assert "full: the paper's sizes;" in profile_help(model), model


@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_models_help_prints(model, capsys):
    """``train MODEL --help`` exits 0 and prints every knob's help as written: argparse formats help
    strings with %, so the DMN's "held-out accuracy is 100%" once stopped `train dmn --help` with a ValueError."""
    with pytest.raises(SystemExit) as exit_:
        main(["train", model, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--profile" in out and ("accuracy is 100%, stop" in " ".join(out.split())) == (model == "dmn")
