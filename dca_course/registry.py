"""The command line's two lookup tables, in one import: data specs and models.

* data specs: :data:`dca_course.data.specs.DATA_SPECS`, ``PREFIX -> DataSpec`` (a loader
  ``(arg, profile, seed) -> Dataset``, its usage and help);
* models: :data:`dca_course.recipes.MODELS`, ``name -> Recipe`` subclass.

Both are plain literal tables: adding a data set or a model is one entry there.
"""
from __future__ import annotations

from .data.dataset import Dataset, SpecError
from .data.specs import DATA_SPECS, DataSpec, data_choices, load_data
from .recipes import MODELS

__all__ = ["DATA_SPECS", "DataSpec", "Dataset", "MODELS", "SpecError", "data_choices", "get_model", "load_data"]


def get_model(name: str) -> type:
    if name not in MODELS:
        raise SpecError(f"unknown model {name!r}; valid models are: {', '.join(MODELS)}")
    return MODELS[name]
