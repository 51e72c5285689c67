"""Every data spec of the command line, in one table: ``PREFIX[:ARG]`` -> how to load it.

A loader is a function ``(arg, profile, seed) -> Dataset``; ``profile`` (``fast`` or ``full``)
picks the sizes from the tables below.  Loaders import their data module when called, so that
reading this table costs nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .dataset import Dataset, SpecError

#: Toy pairs per profile: (train, valid, test).
TOY_SIZES = {"fast": (6000, 200, 500), "full": (50000, 1000, 2000)}
#: SynthNews articles per profile: (train, valid, test); ``synthnews:N`` sets the training ones.
SYNTHNEWS_SIZES = {"fast": (2000, 100, 300), "full": (50000, 1000, 2000)}
#: How long a summary of each data set may be when decoding (See et al.: 35..120 on CNN/DM).
SUMMARY_DECODE = {"synthnews": dict(min_decode=20, max_decode=80),
                  "cnndm": dict(min_decode=35, max_decode=120)}
#: CNN/DailyMail examples read per split under each profile (None: all); fast reads the first lines.
CNNDM_LIMITS = {"fast": {"train": 10000, "valid": 200, "test": 500},
                "full": {"train": None, "valid": None, "test": None}}
#: Generated bAbI sizes per profile: questions to train on, to validate on, to test on.
BABI_SIZES = {"fast": (1000, 200, 1000), "full": (10000, 1000, 1000)}


#: What each kind of data holds (``Dataset.kind``), in words for the command line's messages.
KIND_NAMES = {"pairs": "toy source -> target pairs", "summaries": "articles to summarise",
              "babi": "bAbI questions"}


@dataclass(frozen=True)
class DataSpec:
    load: Callable[[str, str, int], Dataset]
    usage: str
    help: str
    #: the ``Dataset.kind`` its loader returns, known before loading (so that a model that cannot
    #: train on it refuses at once, not after minutes of generating or reading data)
    kind: str


def load_toy_spec(arg: str, profile: str, seed: int) -> Dataset:
    from .toy import load_toy

    if arg not in ("dates", "reverse"):
        raise SpecError(f"unknown toy task {arg!r}")
    train, valid, test = load_toy(arg, *TOY_SIZES[profile], seed=seed)
    return Dataset(f"toy:{arg}", "pairs", train, valid, test)


def _synthnews(name: str, arg: str, profile: str, seed: int, long: bool) -> Dataset:
    """``synthnews[:N]`` and ``synthnews-long[:N]``: the profile's sizes, N training articles."""
    from .synthnews import load_synthnews

    n_train, n_valid, n_test = SYNTHNEWS_SIZES[profile]
    if arg:
        if not arg.isdigit() or int(arg) < 1:
            raise SpecError(f"{name} takes a number of training articles, got {arg!r}")
        n_train = int(arg)
    train, valid, test = load_synthnews(n_train, n_valid, n_test, seed=seed, long=long)
    return Dataset(f"{name}:{n_train}" if arg else name, "summaries", train, valid, test,
                   meta=dict(SUMMARY_DECODE["synthnews"]))


def load_synthnews_spec(arg: str, profile: str, seed: int) -> Dataset:
    return _synthnews("synthnews", arg, profile, seed, long=False)


def load_synthnews_long_spec(arg: str, profile: str, seed: int) -> Dataset:
    return _synthnews("synthnews-long", arg, profile, seed, long=True)


def load_cnndm_spec(arg: str, profile: str, seed: int) -> Dataset:
    """Training articles are cut to 400 words and summaries to 100, as See et al. (2017)
    trained; validation and test references stay whole (the articles are cut when batched)."""
    from .cnndm import read_cnndm_splits, truncate

    if not arg:
        raise SpecError("cnndm needs a folder: cnndm:PATH")
    if not Path(arg).is_dir():
        raise SpecError(f"no such folder {arg!r}")
    try:
        splits = read_cnndm_splits(arg, CNNDM_LIMITS[profile])
    except FileNotFoundError as exc:
        raise SpecError(str(exc)) from None
    train = [truncate(ex, 400, 100) for ex in splits["train"]]
    return Dataset(f"cnndm:{arg}", "summaries", train, splits["valid"], splits["test"],
                   meta=dict(SUMMARY_DECODE["cnndm"]))


def _babi_tasks(text: str, valid: list[int], where: str) -> list[int]:
    if text == "all":
        return list(valid)
    if not text.isdigit() or int(text) not in valid:
        choices = ", ".join(str(t) for t in valid)
        raise SpecError(f"unknown bAbI task {text!r} for {where}; choose one of {choices} or 'all'")
    return [int(text)]


def load_babi_spec(arg: str, profile: str, seed: int) -> Dataset:
    """``babi:TASK`` generates the task; ``babi:PATH:TASK`` reads a v1.2 release folder."""
    from . import babi

    if not arg:
        raise SpecError("bAbI needs a task: babi:1, babi:all, or babi:PATH:TASK for a v1.2 folder")
    path, sep, task_text = arg.rpartition(":")
    train, valid, test = [], [], []
    if not sep:  # generated
        tasks = _babi_tasks(task_text, sorted(babi.GENERATED_TASKS), "generated data")
        n_train, n_valid, n_test = BABI_SIZES[profile]
        for t in tasks:
            tr, te = babi.load_generated(t, n_train, n_test, seed)
            train += tr
            test += te
            valid += babi.generate_examples(t, n_valid, seed=f"{seed}:valid")
        source = "generated"
    else:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise SpecError(f"no bAbI folder at {path!r}: give a folder holding en/ or en-10k/ "
                            "(or the qaN_*_train.txt files themselves)")
        tasks = _babi_tasks(task_text, sorted(babi.TASK_NAMES), f"the folder {path}")
        for t in tasks:
            try:
                train += babi.load_task(folder, t, "train")
                test += babi.load_task(folder, t, "test")
            except FileNotFoundError as exc:
                raise SpecError(str(exc)) from None
        source = str(folder)   # the release has no validation split: valid stays empty
    return Dataset(f"babi:{arg}", "babi", train, valid, test,
                   meta={"tasks": tasks, "task": task_text, "source": source})


DATA_SPECS: dict[str, DataSpec] = {
    "toy": DataSpec(load_toy_spec, "toy:dates | toy:reverse", "generated date normalisation / string reversal",
                    kind="pairs"),
    "synthnews": DataSpec(load_synthnews_spec, "synthnews[:N]",
                          "generated news articles and summaries (N to train on)", kind="summaries"),
    "cnndm": DataSpec(load_cnndm_spec, "cnndm:PATH", "CNN/DailyMail from a folder (.story files or line files)",
                      kind="summaries"),
    "synthnews-long": DataSpec(load_synthnews_long_spec, "synthnews-long[:N]",
                               "SynthNews with 12-paragraph, ~800-token articles, for DCA (N to train on)",
                               kind="summaries"),
    "babi": DataSpec(load_babi_spec, "babi:TASK | babi:PATH:TASK",
                     "bAbI QA: generated (TASK 1,2,3,6,7,8,11,15 or all), or a v1.2 folder holding en/ (1-20 or all)",
                     kind="babi"),
}


def data_choices() -> str:
    return "\n".join(f"  {spec.usage:<28} {spec.help}" for spec in DATA_SPECS.values())


def spec_usages() -> str:
    """The valid specs on one line (for error messages; ``data_choices`` is the help table)."""
    return ", ".join(spec.usage for spec in DATA_SPECS.values())


def spec_kind(spec: str) -> str:
    """The kind of data ``spec`` loads (``pairs``, ``summaries``, ``babi``), without loading it."""
    prefix = spec.partition(":")[0]
    if prefix not in DATA_SPECS:
        raise SpecError(f"unknown data spec {spec!r}; valid specs are: {spec_usages()}")
    return DATA_SPECS[prefix].kind


def load_data(spec: str, profile: str = "fast", seed: int = 0) -> Dataset:
    """Parse ``PREFIX[:ARG]`` and load it; an unknown prefix or argument lists the valid specs."""
    prefix, _, arg = spec.partition(":")
    source = DATA_SPECS.get(prefix)
    if source is None:
        raise SpecError(f"unknown data spec {spec!r}; valid specs are: {spec_usages()}")
    try:
        return source.load(arg, profile, seed)
    except SpecError as exc:
        raise SpecError(f"bad data spec {spec!r}: {exc}") from None
