"""Where data sets and models plug into the command line: one registration each.

* ``@register_data("toy", usage=..., help=...)`` on a function ``(arg, profile, seed) -> Dataset``
  adds the data spec ``toy:ARG``;
* ``@register_model("seq2seq")`` on a :class:`dca_course.recipes.Recipe` subclass adds the
  model name to ``train``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


class SpecError(ValueError):
    """An unknown model or data spec; the message lists the valid choices."""


@dataclass
class Dataset:
    """Train/valid/test splits of one data spec.

    ``kind`` tells the recipes what they hold: ``"pairs"`` (toy source -> target tasks, scored
    by exact match), ``"summaries"`` (scored by ROUGE), ``"babi"`` (question answering).
    """

    spec: str
    kind: str
    train: list
    valid: list
    test: list
    meta: dict = field(default_factory=dict)

    def limit_train(self, n: int) -> None:
        """Keep the first ``n`` training examples: of each task, when the set holds several
        tasks (``babi:all``), so that every task still trains on something."""
        if len(self.meta.get("tasks") or ()) > 1:
            seen: dict = {}
            kept = []
            for ex in self.train:
                seen[ex.task] = seen.get(ex.task, 0) + 1
                if seen[ex.task] <= n:
                    kept.append(ex)
            self.train = kept
        else:
            self.train = self.train[:n]

    def split(self, name: str) -> list:
        if name not in ("train", "valid", "test"):
            raise SpecError(f"unknown split {name!r}; choose from train, valid, test")
        return getattr(self, name)


@dataclass
class DataSource:
    prefix: str
    load: Callable
    usage: str
    help: str


DATA_SOURCES: dict[str, DataSource] = {}
MODELS: dict[str, type] = {}


def register_data(prefix: str, *, usage: str, help: str = ""):
    def deco(fn):
        DATA_SOURCES[prefix] = DataSource(prefix, fn, usage, help)
        return fn
    return deco


def register_model(name: str):
    def deco(cls):
        cls.name = name
        MODELS[name] = cls
        return cls
    return deco


def data_choices() -> str:
    return "\n".join(f"  {src.usage:<28} {src.help}" for src in DATA_SOURCES.values())


def load_data(spec: str, profile: str = "fast", seed: int = 0) -> Dataset:
    """Parse ``PREFIX[:ARG]`` and load it; an unknown prefix or argument lists the valid specs."""
    prefix, _, arg = spec.partition(":")
    source = DATA_SOURCES.get(prefix)
    if source is None:
        raise SpecError(f"unknown data spec {spec!r}; valid specs are:\n{data_choices()}")
    try:
        return source.load(arg, profile, seed)
    except SpecError as exc:
        raise SpecError(f"bad data spec {spec!r}: {exc}\nvalid specs are:\n{data_choices()}") from None


def get_model(name: str) -> type:
    if name not in MODELS:
        raise SpecError(f"unknown model {name!r}; valid models are: {', '.join(MODELS)}")
    return MODELS[name]
