"""Typed configurations: every knob a recipe reads, with its help, and the two profiles.

A recipe's configuration is a frozen dataclass whose field defaults are the ``fast`` profile
(CPU-sized; ``FAST`` lists the inherited ones it changes) and whose ``FULL`` table lists what
the ``full`` profile (the papers' sizes) changes from ``fast``.  ``NAMED`` adds a model's own
profiles, each a base profile and its changes (the DMN's ``babi-1k``: the settings of
``results/babi_real_1k.md``).  The ``train`` command's flags and the ``profiles`` command's JSON are generated from
these dataclasses, so a knob cannot be read without being documented and settable::

    @dataclass(frozen=True)
    class MyConfig(RecipeConfig):
        hidden_size: int = knob(64, "LSTM state size", metavar="N")
        FULL: ClassVar[dict] = dict(hidden_size=256)

Models that share knobs compose them rather than inherit them: a knob group is a dict of
``name=(type, default, help, extras)`` and :func:`with_knobs` adds groups to a configuration,
with help written for that model where it differs, so that no configuration is more than one
level below :class:`RecipeConfig`.
"""
from __future__ import annotations

import argparse
import dataclasses
import typing
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from ..data.dataset import SpecError

PROFILES = ("fast", "full")


def knob(default: Any, help: str, *, flags: tuple = (), choices: tuple | None = None,
         metavar: str | None = None, flag: bool = True) -> Any:
    """A configuration field with its one-line ``help``; ``flags`` are extra spellings of its
    command-line flag (``--dmn-variant`` also as ``--variant``), ``flag=False`` gives it none."""
    meta = {"help": help, "flags": tuple(flags), "choices": choices, "metavar": metavar, "flag": flag}
    return field(default=default, metadata=meta)


def with_knobs(*groups: dict, help: dict | None = None):
    """Class decorator (under ``@dataclass``): the knobs of ``groups`` become fields of the class,
    in order, before its own; ``help`` rewrites a group knob's help for this model, and a knob the
    class declares itself wins over a group's (its default and help)."""
    def add(cls):
        own = dict(cls.__dict__.get("__annotations__", {}))
        added: dict = {}
        for group in groups:
            for name, (kind, default, text, extra) in group.items():
                if name in own or name in added:
                    continue
                added[name] = kind
                setattr(cls, name, knob(default, (help or {}).get(name, text), **extra))
        unknown = set(help or {}) - set(added)
        if unknown:
            raise TypeError(f"{cls.__name__}: help for knobs no group adds: {sorted(unknown)}")
        cls.__annotations__ = {**added, **own}
        return cls
    return add


@dataclass(frozen=True)
class RecipeConfig:
    """The knobs every recipe has: the training loop's."""

    profile: str = knob("fast", "the profile these values started from (it also sizes the data)", flag=False)
    epochs: int = knob(4, "override the profile's epochs")
    batch_size: int = knob(64, "override the profile's batch size (per process)")
    lr: float = knob(3e-3, "override the profile's learning rate (Adam)")
    clip: float = knob(1.0, "max global gradient norm (0: no clipping)")
    time_limit: float | None = knob(None, "stop training after the epoch that crosses this many seconds "
                                          "(dmn: per bAbI task)", metavar="SECONDS")

    #: ``FAST``: the fast profile's changes to the field defaults; ``FULL``: the full profile's to fast's
    FAST: ClassVar[dict] = {}
    FULL: ClassVar[dict] = {}
    #: ``{name: (base profile, its changes, one line of help)}``: this model's own named profiles
    NAMED: ClassVar[dict] = {}
    #: What ``--profile full`` trains, in ``train MODEL --help``
    FULL_HELP: ClassVar[str] = "the paper's sizes"

    # -- building one ------------------------------------------------------------------------
    @classmethod
    def from_profile(cls, name: str, overrides: dict | None = None):
        """The ``name`` profile with ``overrides`` (``None`` values ignored) applied."""
        if name not in cls.profile_names():
            raise SpecError(f"unknown profile {name!r} for this model; choose from {', '.join(cls.profile_names())}")
        given = {k: v for k, v in (overrides or {}).items() if v is not None}
        unknown = sorted(set(given) - cls.field_names())
        if unknown:
            raise SpecError(f"{cls.__name__} has no option {', '.join(unknown)}; it has "
                            f"{', '.join(sorted(cls.field_names()))}")
        base, changes = (cls.NAMED[name][0], cls.NAMED[name][1]) if name in cls.NAMED else (name, {})
        values = {**cls.FAST, **(cls.FULL if base == "full" else {}), **changes}
        base = cls(profile=name, **values)
        return replace(base, **cls.implied_overrides(base, given))

    @classmethod
    def implied_overrides(cls, base, given: dict) -> dict:
        """The overrides to apply to ``base``: ``given`` plus what they imply (none here)."""
        return given

    @classmethod
    def from_dict(cls, values: dict):
        """A configuration saved with :meth:`to_dict` (or an older checkpoint's ``hparams``):
        keys it does not know are dropped, missing ones take the field defaults."""
        return cls(**{k: v for k, v in values.items() if k in cls.field_names()})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def profile_names(cls) -> tuple:
        """``fast``, ``full`` and this model's named profiles."""
        return PROFILES + tuple(cls.NAMED)

    @property
    def data_profile(self) -> str:
        """The profile that sizes generated data: a named profile's base (``fast`` or ``full``)."""
        return self.NAMED[self.profile][0] if self.profile in self.NAMED else self.profile

    def for_data(self, data):
        """This configuration with what it leaves to the data set (decode lengths) resolved."""
        return self

    @classmethod
    def field_names(cls) -> set:
        return {f.name for f in fields(cls)}

    @classmethod
    def profiles(cls) -> dict:
        """``{"fast": {...}, "full": {...}, NAMED...}``: every knob's value under each profile."""
        return {name: cls.from_profile(name).to_dict() for name in cls.profile_names()}


# -- the command line ----------------------------------------------------------------------------
def flag_name(field_name: str) -> str:
    return "--" + field_name.replace("_", "-")


def _flag_type(hint) -> type:
    """``int`` for ``int`` and ``int | None``, and so on."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if args else hint


def add_config_flags(parser: argparse.ArgumentParser, configs: dict[str, type]) -> None:
    """One flag per knob of ``configs`` (model name -> configuration class), each added once
    however many models share it.  Every flag defaults to None, which means "not given"."""
    owners: dict[str, list[str]] = {}
    declared: dict[str, tuple] = {}
    for model, config_cls in configs.items():
        hints = typing.get_type_hints(config_cls)
        for f in fields(config_cls):
            if f.metadata.get("flag", True):
                owners.setdefault(f.name, []).append(model)
                declared.setdefault(f.name, (f, _flag_type(hints[f.name])))
    for name, (f, kind) in declared.items():
        help_text = f.metadata["help"]
        if len(owners[name]) < len(configs):        # say which models have it
            help_text = f"{', '.join(owners[name])}: {help_text}"
        help_text = help_text.replace("%", "%%")     # argparse formats help with %: "100%" must print as written
        spellings = [flag_name(name), *f.metadata["flags"]]
        if kind is bool:
            parser.add_argument(spellings[0], dest=name, action=argparse.BooleanOptionalAction,
                                default=None, help=help_text)
            continue
        extra = {k: f.metadata[k] for k in ("choices", "metavar") if f.metadata.get(k)}
        parser.add_argument(*spellings, dest=name, type=kind, default=None, help=help_text, **extra)


def config_overrides(args: argparse.Namespace, config_cls: type, configs: dict[str, type], model: str) -> dict:
    """The knobs given on the command line for ``model``; a flag of another model only is an error."""
    every = {f.name for c in configs.values() for f in fields(c) if f.metadata.get("flag", True)}
    given = {k: v for k, v in vars(args).items() if k in every and v is not None}
    foreign = sorted(flag_name(k) for k in set(given) - config_cls.field_names())
    if foreign:
        raise SpecError(f"model {model!r} has no option {', '.join(foreign)} "
                        f"(`python -m dca_course profiles {model}` lists its knobs)")
    return given
