"""Recipes: how each model of the course is built, trained and evaluated from the command line.

Every model has a typed configuration (a frozen dataclass: every knob, its help, the ``fast``
and ``full`` profiles) and a :class:`Recipe` subclass; :data:`MODELS` names them for the
command line.  Adding a model is one module here and one entry in :data:`MODELS`.
"""
from __future__ import annotations

from pathlib import Path

from ..data.dataset import Dataset, SpecError
from . import base
from .base import Recipe, save_metrics
from .config import RecipeConfig
from .copying import (CopyNetConfig, CopyNetRecipe, PointerGeneratorConfig, PointerGeneratorRecipe,
                      SummarizerRecipe, source_length_buckets)
from .dca import DCAConfig, DCARecipe
from .dmn import DMNConfig, DMNRecipe
from .seq2seq import GRULMConfig, GRULMRecipe, LMBatch, Seq2SeqConfig, Seq2SeqRecipe, lm_sequences

#: The models of ``python -m dca_course train MODEL``: name -> recipe class.
MODELS: dict[str, type[Recipe]] = {
    "seq2seq": Seq2SeqRecipe,
    "gru-lm": GRULMRecipe,
    "copynet": CopyNetRecipe,
    "pointer-generator": PointerGeneratorRecipe,
    "dca": DCARecipe,
    "dmn": DMNRecipe,
}

#: Each model's configuration class, as the command line generates its flags from them.
CONFIGS: dict[str, type[RecipeConfig]] = {name: recipe.config_class for name, recipe in MODELS.items()}


def load_run(out_dir: Path, device):
    """The recipe, model and vocabulary saved in a run folder's ``last.pt``, and the checkpoint."""
    return base.load_run(out_dir, device, MODELS)


__all__ = [
    "CONFIGS", "CopyNetConfig", "CopyNetRecipe", "DCAConfig", "DCARecipe", "DMNConfig", "DMNRecipe", "Dataset",
    "GRULMConfig", "GRULMRecipe", "LMBatch", "MODELS", "PointerGeneratorConfig", "PointerGeneratorRecipe",
    "Recipe", "RecipeConfig", "Seq2SeqConfig", "Seq2SeqRecipe", "SpecError",
    "SummarizerRecipe", "lm_sequences", "load_run", "save_metrics", "source_length_buckets",
]
