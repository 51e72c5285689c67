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
import math
import typing
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from ..data.dataset import SpecError
from ..data.vocab import SPECIALS

PROFILES = ("fast", "full")


@dataclass(frozen=True)
class Range:
    """The values a number knob may take: from ``low`` to ``high`` (either end ``None``: open),
    ``low_open``/``high_open`` leave that end itself out.  Not a number (nan) and infinities are
    never in a range; ``None`` (for a knob that allows it) is not a number and not checked."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, value) -> bool:
        value = float(value)
        if not math.isfinite(value):
            return False
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return self.high is None or (value < self.high or (not self.high_open and value == self.high))

    def __str__(self) -> str:
        low = None if self.low is None else f"{'above' if self.low_open else 'at least'} {_number(self.low)}"
        high = None if self.high is None else f"{'below' if self.high_open else 'at most'} {_number(self.high)}"
        return " and ".join(part for part in (low, high) if part) or "a finite number"


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def at_least(low: float) -> Range:
    return Range(low=low)


def above(low: float) -> Range:
    return Range(low=low, low_open=True)


def fraction(*, one: bool = True) -> Range:
    """From 0 to 1; ``one=False`` leaves 1 out (a dropout of 1 drops everything)."""
    return Range(low=0, high=1, high_open=not one)


#: The ranges of the knobs that the recipe modules and their knob groups declare, by name: a name
#: means the same thing in every model (``hidden_size`` is a state size wherever it is), so one
#: table gives them all.  A knob's own ``valid=`` wins over this table; a number knob in neither is
#: an error of the configuration (``tests/test_cli_ranges.py`` checks that every one has a range).
KNOB_RANGES: dict[str, Range] = dict(
    # sizes and lengths
    emb_size=at_least(1), hidden_size=at_least(1), attn_size=at_least(1), max_src=at_least(1),
    max_tgt=at_least(1), max_decode=at_least(1), min_decode=at_least(0), max_facts=at_least(1),
    vocab_size=at_least(len(SPECIALS) + 1),          # the special tokens count in it: one word at least
    # decoding
    beam_size=at_least(1), eval_batch_size=at_least(1), length_penalty=at_least(0),
    # the pointer-generator's coverage
    coverage_weight=at_least(0), coverage_epochs=at_least(0),
    # DCA
    agents=at_least(1), context_layers=at_least(0), cohesion=at_least(0), rl_epochs=at_least(1),
    rl_lr=above(0), rl_batch_size=at_least(1), rl_train=at_least(1), gamma=fraction(),
    reward_discount=fraction(), rl_samples=at_least(1),
    # the DMN
    dmn_passes=at_least(0), max_passes=at_least(1), extra_passes=at_least(0), gate_weight=at_least(0),
    dropout=fraction(one=False), weight_decay=at_least(0), val_fraction=fraction(one=False), patience=at_least(0),
    ceiling_patience=at_least(0), lr_patience=at_least(0), cpu_threads=at_least(1),
)


def knob(default: Any, help: str, *, flags: tuple = (), choices: tuple | None = None,
         metavar: str | None = None, flag: bool = True, valid: Range | None = None) -> Any:
    """A configuration field with its one-line ``help``; ``flags`` are extra spellings of its
    command-line flag (``--dmn-variant`` also as ``--variant``), ``flag=False`` gives it none;
    ``valid``: the values a number knob may take (default: its name's in :data:`KNOB_RANGES`)."""
    meta = {"help": help, "flags": tuple(flags), "choices": choices, "metavar": metavar, "flag": flag,
            "valid": valid}
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
    epochs: int = knob(4, "override the profile's epochs", valid=at_least(1))
    batch_size: int = knob(64, "override the profile's batch size (per process)", valid=at_least(1))
    lr: float = knob(3e-3, "override the profile's learning rate (Adam)", valid=above(0))
    clip: float = knob(1.0, "max global gradient norm (0: no clipping)", valid=at_least(0))
    time_limit: float | None = knob(None, "stop training after the epoch that crosses this many seconds "
                                          "(dmn: per bAbI task)", metavar="SECONDS", valid=above(0))

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
        cls.check_ranges(given)       # the values given, named as given, before anything is built
        base, changes = (cls.NAMED[name][0], cls.NAMED[name][1]) if name in cls.NAMED else (name, {})
        values = {**cls.FAST, **(cls.FULL if base == "full" else {}), **changes}
        base = cls(profile=name, **values)
        config = replace(base, **cls.implied_overrides(base, given))
        cls.check_ranges(config.to_dict())     # and what they imply (--rl's rl_lr becomes lr)
        return config

    # -- the values a knob may take ---------------------------------------------------------------
    @classmethod
    def number_knobs(cls) -> dict:
        """``{name: its Range or None}`` for every int and float knob (not the switches)."""
        hints = typing.get_type_hints(cls)
        return {f.name: f.metadata.get("valid") or KNOB_RANGES.get(f.name) for f in fields(cls)
                if _flag_type(hints[f.name]) in (int, float)}

    @classmethod
    def check_ranges(cls, values: dict) -> None:
        """Refuse, in one line naming the flag, a number knob's value outside its range (not a
        number and infinities always).  ``None`` (a knob's "not set") is not checked."""
        numbers = cls.number_knobs()
        for name, value in values.items():
            if name not in numbers or value is None or isinstance(value, bool):
                continue
            valid = numbers[name] or Range()
            if value not in valid:
                shown, finite = (_number(value), "") if math.isfinite(value) else (value, "a finite number, ")
                raise SpecError(f"{flag_name(name)} {shown}: must be {finite}{valid}")

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
