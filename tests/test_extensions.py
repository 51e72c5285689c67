"""The course's additions as subclasses of the paper models (dca_course.models.extensions): the same
numbers as the constructor switches they replaced, the paper classes hold their papers' choices only,
the recipes build the paper class unless a knob asks for an addition, and a checkpoint's config names
its class."""
import ast
import inspect
from pathlib import Path

import pytest
import torch

from dca_course import seed_everything
from dca_course.data.babi import babi_vocab, make_dmn_batch
from dca_course.models.dca import DCA
from dca_course.models.dmn import DMN
from dca_course.models.extensions import (DMNExtension, ExtendedDCA, ExtendedDMN, SentenceEpisodes, TimeFeatures,
                                          VocabTanh, WordMatch, make_extensions)
from test_dmn import _examples

ALL_THREE = ["time_features", "sentence_episodes", "word_match"]


pytestmark = pytest.mark.usefixtures("one_thread")   # tests/conftest.py


def _dmn(**kw):
    seed_everything(0)
    exs = _examples()
    vocab = babi_vocab(exs)
    return vocab, (ExtendedDMN if "extensions" in kw else DMN)(len(vocab), 8, 10, passes=2, **kw), make_dmn_batch(exs, vocab)


# Recorded at 34558d7 (before the extensions) with the switches time_features=True,
# episode_reads="sentences", word_match=True: seed 0, the two stories of test_dmn, torch.manual_seed(1)
# before the forward pass (dropout), one thread.  (first 6 logits of story 0, the sum of the memories,
# story 0's gates in the last pass, the sum of all parameters)
SWITCHES = {
    "dmn+": (dict(variant="dmn+", input_module="fusion", memory_update="relu", gate_features="dmn+", dropout=0.1),
             [0.398989, 0.125337, 0.220397, 0.303081, 0.232, -0.304592], 3.59714,
             [0.245547, 0.268802, 0.244874, 0.240778], 9.97627),
    "dmn": (dict(variant="dmn", input_module="fusion", memory_update="gru"),
            [0.058669, -0.057311, -0.157385, -0.079147, -0.096895, 0.096352], 6.72514,
            [0.466317, 0.481722, 0.477619, 0.47429], 19.67168),
}


@pytest.mark.parametrize("name", list(SWITCHES))
def test_a_dmn_with_the_extensions_gives_the_numbers_of_the_old_switches(name):
    kw, logits, memories, gates, params = SWITCHES[name]
    _, model, batch = _dmn(extensions=ALL_THREE, **kw)
    torch.manual_seed(1)
    out = model(batch)
    assert torch.allclose(out["logits"][0, :6], torch.tensor(logits), atol=2e-6)
    assert float(out["memories"].detach().sum()) == pytest.approx(memories, abs=2e-5)
    assert torch.allclose(out["gates"][0, -1], torch.tensor(gates), atol=2e-6)
    assert float(sum(p.detach().sum() for p in model.parameters())) == pytest.approx(params, abs=2e-5)
    # the layers in the order the switches made them (a seed gives each the same initial weights)
    names = [n for n, _ in model.named_parameters()]
    assert names.index("extensions.sentence_episodes.proj.weight") == names.index("gate_hidden.weight") - 1
    assert names[0] == "W_b" and names[1] == "embedding.weight"


def test_a_dca_with_vocab_tanh_gives_the_numbers_of_vocab_mlp_tanh():
    u = torch.randn(2, 30, generator=torch.Generator().manual_seed(3))
    for make, want in ((lambda: DCA(30, 8, 10, context_layers=1), [0.29733, -0.075524, 0.555918, -0.073222]),
                       (lambda: ExtendedDCA(30, 8, 10, context_layers=1, extensions=[VocabTanh()]),
                        [0.270414, -0.022632, 0.437065, -0.058402])):
        torch.manual_seed(0)
        model = make()
        assert torch.allclose(model.vocab_logits(u)[0, :4], torch.tensor(want), atol=2e-6)
    assert "extensions" not in DCA(30, 8, 10).config
    plain, tanh = DCA(30, 8, 10), ExtendedDCA(30, 8, 10, extensions=["vocab_tanh"])
    assert tanh.config == dict(plain.config, extensions=["vocab_tanh"])
    assert plain.state_dict().keys() == tanh.state_dict().keys()          # no parameters of its own


def _imports(module) -> set:
    """The modules ``module``'s file imports, relative ones as written (``.extensions``)."""
    tree = ast.parse(Path(module.__file__).read_text())
    return {"." * n.level + (n.module or "") if isinstance(n, ast.ImportFrom) else a.name
            for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in (n.names if isinstance(n, ast.Import) else [n])}


def test_the_paper_classes_hold_the_papers_choices_only():
    from dca_course.models import dca, dmn

    params = list(inspect.signature(DMN.__init__).parameters)[1:]
    assert len(params) <= 10
    assert params == ["vocab_size", "emb_size", "hidden_size", "passes", "variant", "answer", "input_module",
                      "gate_features", "memory_update", "dropout"]
    assert "extensions" not in inspect.signature(DCA.__init__).parameters
    assert "vocab_mlp" not in inspect.signature(DCA.__init__).parameters
    # neither module refers to the course's additions
    for module in (dmn, dca):
        assert not any("extensions" in name for name in _imports(module)), module.__name__
        assert "extension" not in Path(module.__file__).read_text().lower(), module.__name__
    # the paper's sizes, and no extension anywhere
    _, model, _ = _dmn(variant="dmn+", input_module="fusion", memory_update="relu")
    assert type(model) is DMN and "extensions" not in model.config
    assert model.gate_hidden.in_features == 7 * 10 + 2 and model.memory_layers[0].in_features == 3 * 10
    assert not hasattr(model, "extensions")


def test_each_extension_says_its_size_at_its_hook():
    _, model, _ = _dmn(variant="dmn+", input_module="fusion", memory_update="relu", extensions=ALL_THREE)
    assert model.gate_hidden.in_features == 7 * 10 + 2 + TimeFeatures.gate_width == 7 * 10 + 2 + 3
    assert model.memory_layers[0].in_features == 3 * 10 + WordMatch.memory_width == 3 * 10 + 144
    assert model.config["extensions"] == ALL_THREE
    # modules and names are the same thing; the order given is kept
    _, again, _ = _dmn(variant="dmn+", input_module="fusion", memory_update="relu",
                       extensions=[TimeFeatures(), SentenceEpisodes(), "word_match"])
    assert again.config == model.config
    with pytest.raises(ValueError, match="given twice"):
        make_extensions(["word_match", WordMatch()], DMNExtension)
    with pytest.raises(TypeError):
        ExtendedDMN(10, 4, 4, extensions=[VocabTanh()])                      # a DCA extension
    with pytest.raises(ValueError, match="unknown extension"):
        ExtendedDCA(10, 4, 4, extensions=["word_match"])

    class ReadsWords(DMNExtension):
        name = "reads_words"

        def episode_input(self, model, batch, c):
            return c
    with pytest.raises(ValueError, match="at most one extension"):
        ExtendedDMN(10, 4, 4, input_module="fusion", extensions=["sentence_episodes", ReadsWords()])


def test_the_recipe_builds_the_paper_class_unless_a_knob_asks_for_an_addition():
    from dca_course.recipes import DMNConfig, DMNRecipe
    from dca_course.recipes.dca import DCAConfig, DCARecipe

    vocab = babi_vocab(_examples())
    model = DMNRecipe(DMNConfig(input_module="fusion", time_features=True, word_match=True,
                                episode_reads="sentences")).build_model(vocab)
    assert type(model) is ExtendedDMN and model.config["extensions"] == ALL_THREE
    assert type(DMNRecipe(DMNConfig()).build_model(vocab)) is DMN
    assert type(DMNRecipe(DMNConfig.from_profile("full")).build_model(vocab)) is DMN
    built = DMNRecipe(DMNConfig(word_match=True)).build_model(vocab)
    assert type(built) is ExtendedDMN and built.config["extensions"] == ["word_match"]
    tanh = DCARecipe(DCAConfig(vocab_mlp="tanh")).build_model(vocab)
    assert type(tanh) is ExtendedDCA and tanh.config["extensions"] == ["vocab_tanh"]
    assert type(DCARecipe(DCAConfig()).build_model(vocab)) is DCA


def test_a_checkpoints_config_names_its_class():
    """``model_from_config`` builds the paper class from its config, the extended class from one
    that names ``extensions``; the weights load strictly either way, with the same outputs."""
    from dca_course.recipes import DMNConfig, DMNRecipe
    from dca_course.recipes.dca import DCAConfig, DCARecipe

    recipe = DMNRecipe(DMNConfig())
    for kw in (dict(variant="dmn+", input_module="fusion", memory_update="relu", extensions=ALL_THREE), {}):
        _, model, batch = _dmn(**kw)
        model.eval()
        again = recipe.model_from_config(model.config)
        again.load_state_dict(model.state_dict())                      # strict: every weight in place
        again.eval()
        assert type(again) is type(model) and again.config == model.config
        assert torch.equal(again(batch)["logits"], model(batch)["logits"])
    dca_recipe = DCARecipe(DCAConfig())
    for model in (DCA(30, 8, 10), ExtendedDCA(30, 8, 10, extensions=["vocab_tanh"])):
        again = dca_recipe.model_from_config(model.config)
        again.load_state_dict(model.state_dict())
        assert type(again) is type(model) and again.config == model.config
    # a run of the paper model saved with an empty list of extensions is the paper model
    assert type(dca_recipe.model_from_config({**DCA(30, 8, 10).config, "extensions": []})) is DCA
    assert type(recipe.model_from_config({**_dmn()[1].config, "extensions": []})) is DMN


def test_intervening_mass_counts_the_relevance_strictly_between_a_fact_and_the_last_read():
    from dca_course.models.extensions.intervening_facts import intervening_mass

    r = torch.tensor([[0.9, 0.1, 0.8, 0.5, 0.7, 0.3]])
    t = torch.arange(6.0).unsqueeze(0)
    mask = torch.tensor([[True, True, True, True, True, False]])
    b = intervening_mass(r, t, torch.tensor([[4.0]]), mask).squeeze(-1)
    # before p = 4: fact 0 has facts 1-3 between (0.1 + 0.8 + 0.5), fact 3 none; fact 4 is p itself;
    # the padded fact 5 is zero and counts for nothing
    assert torch.allclose(b, torch.tensor([[1.4, 1.3, 0.5, 0.0, 0.0, 0.0]]))
    # p^0, after the last fact: the latest fact has nothing between it and the question
    b0 = intervening_mass(r, t, torch.tensor([[5.0]]), mask).squeeze(-1)
    assert torch.allclose(b0, torch.tensor([[2.1, 2.0, 1.2, 0.7, 0.0, 0.0]]))
    # a place between two facts (a soft read): fact 3 is after it with nothing between, fact 4 after fact 3
    b_mid = intervening_mass(r, t, torch.tensor([[2.5]]), mask).squeeze(-1)
    assert torch.allclose(b_mid, torch.tensor([[0.9, 0.8, 0.0, 0.0, 0.5, 0.0]]))
    # linear in r: gradcheck in float64
    torch.autograd.gradcheck(lambda x: intervening_mass(x, t.double(), torch.tensor([[3.3]], dtype=torch.float64),
                                                        mask), (r.double().requires_grad_(),))


def test_the_gate_looks_twice_and_its_second_look_reads_the_first_looks_picks():
    from dca_course.models.extensions import InterveningFacts
    from dca_course.models.extensions.intervening_facts import intervening_mass
    from dca_course.models.extensions.time_features import read_position

    vocab, model, batch = _dmn(variant="dmn+", input_module="fusion", memory_update="relu", gate_features="dmn+",
                               extensions=["time_features", "intervening_facts"])
    assert model.gate_hidden.in_features == 4 * 10 + 3 + InterveningFacts.gate_width
    model.eval()
    out = model(batch)
    c, q = model.encode_story(batch), model.encode_question(batch)
    readings = {name: ext.begin(model, batch, c) for name, ext in model.extensions.items()}
    t, mask = readings["intervening_facts"]
    m, g = q, None
    for i in range(model.passes):                 # the pass written out: two looks of one gate
        time = model.extensions["time_features"].gate_features(readings["time_features"], g)
        first = model.gate_scores(c, m, q, [time, torch.zeros_like(t).unsqueeze(-1)])
        where = mask.sum(1, keepdim=True).to(t.dtype) if g is None else read_position(g, t)
        first_g = model.gates_from_scores(first, batch.fact_mask)
        b = intervening_mass(first_g / first_g.max(1, keepdim=True).values, t, where, mask)
        scores = model.gate_scores(c, m, q, [time, b])
        assert not torch.allclose(first, scores)   # the second look changes the scores
        assert torch.equal(scores, out["scores"][:, i])
        g = model.gates_from_scores(scores, batch.fact_mask)
        assert torch.allclose(g.sum(1), torch.ones(2)) and (g[~batch.fact_mask] == 0).all()
        m = model.update_memory(i + 1, m, model.episode(c, g), q)
    # the recipe's knob adds it, after the others
    from dca_course.recipes import DMNConfig, DMNRecipe

    built = DMNRecipe(DMNConfig(time_features=True, intervening_facts=True)).build_model(vocab)
    assert built.config["extensions"] == ["time_features", "intervening_facts"]
