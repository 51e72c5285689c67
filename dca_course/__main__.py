"""The command line: ``python -m dca_course`` (also installed as ``dca-course``).

    train MODEL --data SPEC [--profile fast|full|NAME] [--device auto|cpu|cuda] [--seed N] [--out DIR]
    evaluate DIR --data SPEC [--split test]
    score --pred FILE --ref FILE [--sents]
    data generate babi --task N --out DIR | data generate synthnews [--long] --out DIR
    data download babi [--cache DIR] | data download cnndm --out DIR
    profiles [MODEL]

All of them end with one line of JSON holding the final metrics (``train`` also writes it to
``DIR/metrics.json``), so scripts can read results without parsing prose.  Progress and logs
go to stderr.  Under ``torchrun`` only rank 0 prints the JSON and writes files.
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import re
import sys
import tempfile
from dataclasses import fields
from pathlib import Path

from . import device as pick_device
from . import configure_process, seed_everything
from .recipes import CONFIGS
from .recipes.config import add_config_flags, config_overrides, flag_name
from .data.specs import spec_kind
from .registry import MODELS, SpecError, data_choices, get_model, load_data
from .errors import InputError, OptionError
from .io import text_lines, write_lines
from .train import dist_info, distributed_device, saving_goes_on


class Parser(argparse.ArgumentParser):
    """argparse's parser (its subcommands' too), whose errors are one line like the library's:
    ``dca-course: error: ...`` and where the options are listed, not the usage block."""

    def error(self, message):
        _error(f"{message} (`{self.prog} --help` lists the options)")
        raise SystemExit(2)


def whole_number(low: int, high: int | None = None, what: str = "a whole number"):
    """An argparse ``type``: an int from ``low`` (to ``high``), refused in one line otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} {bounds}")
        return value
    parse.__name__ = what
    return parse


#: Seeds NumPy, Python and PyTorch all take (NumPy's are 0 .. 2**32 - 1).
seed_number = whole_number(0, 2**32 - 1, "a seed")
positive = whole_number(1)


def build_parser(model: str | None = None) -> argparse.ArgumentParser:
    """The command line.  With ``model`` (``train MODEL ...``), ``train`` has that model's flags
    only, with its own help (``train dmn --help``); without, every model's."""
    configs = {model: CONFIGS[model]} if model else CONFIGS
    parser = Parser(prog="dca-course", description=__doc__.split("\n\n")[0],
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="on an input error, show the traceback too")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a model and print its test metrics as JSON",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog="data specs:\n" + data_choices())
    train.add_argument("model", choices=list(MODELS), help="which model")
    train.add_argument("--data", required=True, help="data spec (see below)")
    named = sorted({n for c in CONFIGS.values() for n in c.NAMED})
    train.add_argument("--profile", default="fast", metavar="PROFILE",
                       help="fast: CPU-sized (default); full: "
                            + (CONFIGS[model].FULL_HELP if model else "the paper's sizes (`train MODEL --help` says "
                               "what each model's is)") + "; a model's own: "
                            + "; ".join(f"{n} ({', '.join(m for m, c in CONFIGS.items() if n in c.NAMED)}: "
                                        f"{next(c.NAMED[n][2] for c in CONFIGS.values() if n in c.NAMED)})"
                                        for n in named))
    train.add_argument("--device", default="auto", help="auto (cuda > mps > cpu), cpu, cuda, cuda:N, mps")
    train.add_argument("--seed", type=seed_number, default=0, help="seeds the initial weights, the batch order "
                       "and generated data (0 .. 2**32-1; default 0)")
    train.add_argument("--out", type=Path, default=None, help="run folder (default runs/MODEL-DATA-seedN)")
    train.add_argument("--limit-train", type=positive, default=None, metavar="N",
                       help="train on the first N training examples only (of each task for babi:all; a quick smoke run)")
    train.add_argument("--fresh", action="store_true", help="ignore a checkpoint already in --out")
    train.add_argument("--quiet", action="store_true", help="no progress bars or epoch logs")
    # one flag per knob of the models' configurations (`profiles MODEL` shows their values)
    add_config_flags(train.add_argument_group(f"{model or 'model'} options (default: the profile's)"), configs)

    evaluate = sub.add_parser("evaluate", help="evaluate a trained run folder and print metrics as JSON")
    evaluate.add_argument("run", type=Path, help="run folder written by train (holds last.pt)")
    evaluate.add_argument("--data", default=None, help="data spec (default: the one it was trained on)")
    evaluate.add_argument("--split", default="test", choices=["train", "valid", "test"])
    evaluate.add_argument("--device", default="auto")

    score = sub.add_parser("score", help="ROUGE-1/2/L/Lsum of a file of summaries against references, as JSON",
                           description="ROUGE F1 x100 (rouge-score, Porter stemmer) of one summary a line "
                                       "against one reference a line, averaged over lines.")
    score.add_argument("--pred", type=Path, required=True, help="system summaries, one example a line")
    score.add_argument("--ref", type=Path, required=True, help="reference summaries, one example a line")
    score.add_argument("--sents", action="store_true",
                       help="sentences within a line are TAB-separated (ROUGE-Lsum splits there)")

    profiles = sub.add_parser("profiles", help="the fast and full settings of every model, as JSON")
    profiles.add_argument("model", nargs="?", choices=list(MODELS), help="one model (default: all)")

    data = sub.add_parser("data", help="write generated data sets to files, or download real ones (opt-in)")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    gen = data_sub.add_parser("generate", help="write bAbI-format tasks or SynthNews as files")
    gen.add_argument("what", choices=["babi", "synthnews"])
    gen.add_argument("--out", type=Path, required=True, help="folder to write into")
    gen.add_argument("--task", type=int, default=1, help="babi: the task number")
    gen.add_argument("--train", type=positive, default=1000, help="training questions (babi) or articles (synthnews)")
    gen.add_argument("--valid", type=positive, default=100, help="synthnews: validation articles")
    gen.add_argument("--test", type=positive, default=1000, help="test questions (babi) or articles (synthnews)")
    gen.add_argument("--long", action="store_true", help="synthnews: 5-6 paragraph articles (for DCA)")
    gen.add_argument("--seed", type=seed_number, default=0)
    down = data_sub.add_parser("download", help="download a real data set once (cached, checksummed)")
    down.add_argument("what", choices=["babi", "cnndm"])
    down.add_argument("--cache", type=Path, default=None, help="babi: cache folder (default $DCA_COURSE_CACHE "
                                                               "or ~/.cache/dca_course)")
    down.add_argument("--out", type=Path, default=None, help="cnndm: folder for the line files")
    down.add_argument("--limit", type=positive, default=None, help="cnndm: examples per split (default: all)")
    for command in (train, evaluate, score, profiles, gen, down):   # --debug also after the command
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="on an input error, show the traceback too")
    return parser


def _print_json(result: dict) -> None:
    print(json.dumps(result, sort_keys=True), flush=True)


def checked_device(choice: str | None):
    """The device ``--device`` (or ``$DCA_DEVICE`` under ``auto``) names, refused in one line
    before any work when it is not a device, or not one this machine has."""
    import torch

    named = choice not in (None, "", "auto")
    name = choice if named else os.environ.get("DCA_DEVICE", "").strip()
    if name not in ("", "auto"):
        said = f"--device {name}" if named else f"DCA_DEVICE={name}"
        try:
            dev = torch.device(name)
        except (RuntimeError, ValueError):
            raise OptionError(f"{said}: not a device; use auto, cpu, cuda, cuda:N or mps") from None
        if dev.type not in ("cpu", "cuda", "mps"):
            raise OptionError(f"{said}: the course runs on auto, cpu, cuda, cuda:N or mps, not on {dev.type}")
        if dev.type == "cpu" and dev.index not in (None, 0):
            raise OptionError(f"{said}: the CPU has no devices to number; use --device cpu")
        if dev.type == "cuda":
            if not torch.cuda.is_available():
                why = "this PyTorch is built without CUDA" if torch.version.cuda is None else "no CUDA GPU found"
                raise OptionError(f"{said}: CUDA is not available on this machine ({why}); use --device cpu or auto")
            count = torch.cuda.device_count()
            if dev.index is not None and dev.index >= count:
                raise OptionError(f"{said}: this machine has {count} CUDA device{'s' * (count != 1)} "
                                  f"(cuda:0{f' .. cuda:{count - 1}' if count > 1 else ''})")
        if dev.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise OptionError(f"{said}: MPS (Apple's GPU) is not available on this machine; use --device cpu or auto")
    return pick_device(choice)


def writable_folder(folder: Path, what: str = "--out") -> list[Path]:
    """Make ``folder`` (and the folders above it) and write and remove a file there, so that a
    folder that cannot be written is refused before any work, not when the first checkpoint or
    file is saved.  Returns the folders it made, deepest first (:func:`remove_made` undoes them)."""
    folder = Path(folder)
    made = [f for f in [folder, *folder.parents] if not os.path.lexists(f)]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-check.", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        remove_made(made)
        reasons = {errno.EEXIST: "a file of that name is there, not a folder",
                   errno.ENOTDIR: "a file stands where a folder above it should be"}
        reason = reasons.get(exc.errno, exc.strerror or str(exc))
        where = f" ({exc.filename})" if exc.filename and Path(exc.filename) != folder else ""
        raise OptionError(f"{what} {folder}: cannot write there: {reason}{where}") from None
    return made


def remove_made(made: list[Path]) -> None:
    """Remove the folders :func:`writable_folder` made, where they are still empty."""
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            return


def cmd_train(args) -> int:
    from .recipes import save_metrics

    # Every argument is checked before any work: the device, the knobs' ranges (from the
    # configuration), the pair of model and data, and the run folder; then the data is read.
    info = dist_info()
    device = distributed_device(checked_device(args.device))
    recipe_cls = get_model(args.model)
    overrides = config_overrides(args, recipe_cls.config_class, CONFIGS, args.model)
    config = recipe_cls.config_class.from_profile(args.profile, overrides)
    recipe_cls.check_kind(spec_kind(args.data), args.data)     # refuse a pair before loading the data
    out = args.out or Path("runs") / re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{args.model}-{args.data}-seed{args.seed}")
    made = writable_folder(out) if info.is_main else []
    seed_everything(args.seed)
    try:
        data = load_data(args.data, config.data_profile, args.seed)
    except BaseException:
        remove_made(made)          # a refused run leaves no empty folder behind
        raise
    if args.limit_train:
        data.limit_train(args.limit_train)
    log = None if args.quiet else (lambda msg: _say(msg))
    with saving_goes_on(warn=lambda msg: _say(f"dca-course: warning: {msg}")) as unsaved:
        result = recipe_cls(config).train(data, device, out, seed=args.seed, progress=not args.quiet,
                                          resume=not args.fresh, log=log)
    if not info.is_main:
        return 0
    result.update(profile=config.profile, seed=args.seed, out=str(out), world_size=info.world_size)
    try:
        save_metrics(out, result)
    except OSError as exc:
        unsaved[str(Path(out) / "metrics.json")] = exc.strerror or str(exc)
    _print_json(result)
    if unsaved:
        # The metrics are printed all the same: a finished training is never lost silently.
        _error("the training finished and its metrics are printed above, but not saved: "
               + "; ".join(f"{path} ({why})" for path, why in unsaved.items()))
        return 1
    return 0


def cmd_evaluate(args) -> int:
    from .recipes import load_run

    device = checked_device(args.device)
    recipe, model, vocab, state = load_run(args.run, device)
    # the data it trained on, rebuilt with the same profile and seed (or another spec)
    spec = args.data or state["data"]
    recipe.check_kind(spec_kind(spec), spec)
    data = load_data(spec, recipe.config.data_profile, int(state.get("seed", 0)))
    _print_json(recipe.evaluate(model, vocab, data, args.split, device))
    return 0


class ScoreError(InputError):
    """Files that cannot be scored against each other."""


def _read_summaries(path: Path, sents: bool) -> list[str]:
    lines = [text for _, text in text_lines(path)]     # not UTF-8, NUL bytes: FILE:LINE: one line
    return [line.replace("\t", "\n") for line in lines] if sents else lines


def cmd_score(args) -> int:
    from .metrics import rouge

    preds = _read_summaries(args.pred, args.sents)
    refs = _read_summaries(args.ref, args.sents)
    if len(preds) != len(refs):
        (short, n_short), (long, n_long) = sorted([(args.pred, len(preds)), (args.ref, len(refs))], key=lambda x: x[1])
        raise ScoreError(f"{short}:{n_short + 1}: the file ends here, but {long} has {n_long} lines: "
                         "they must hold one example a line, in the same order")
    result = {k: round(v, 4) for k, v in rouge(preds, refs).items()}
    result.update(n=len(refs), pred=str(args.pred), ref=str(args.ref), sents=bool(args.sents))
    _print_json(result)
    return 0


def write_line_files(folder: Path, split: str, examples) -> None:
    """``{split}.source`` (one article a line) and ``{split}.target.sents.tsv`` (its summary's
    sentences TAB-separated): the layout ``cnndm:PATH`` and ``score --sents`` read."""
    write_lines(folder / f"{split}.source", [" ".join(ex.source) for ex in examples])
    write_lines(folder / f"{split}.target.sents.tsv",
                 ["\t".join(ex.summary_text().split("\n")) for ex in examples])


def cmd_data(args) -> int:
    result: dict = {"command": f"data {args.data_command} {args.what}"}
    if args.data_command == "generate" and args.what == "babi":
        from .data.babi import TASK_NAMES, load_generated, write_babi

        if args.task not in TASK_NAMES:
            raise SpecError(f"bAbI has tasks 1..20, not {args.task}")
        writable_folder(args.out / "en")
        train, test = load_generated(args.task, args.train, args.test, args.seed)   # as babi:TASK trains on
        stem = args.out / "en" / TASK_NAMES[args.task]
        write_babi(train, f"{stem}_train.txt")
        write_babi(test, f"{stem}_test.txt")
        result.update(folder=str(args.out), task=args.task, spec=f"babi:{args.out}:{args.task}")
    elif args.data_command == "generate":
        from .data.synthnews import load_synthnews

        writable_folder(args.out)
        splits = load_synthnews(args.train, args.valid, args.test, seed=args.seed, long=args.long)
        for name, examples in zip(("train", "val", "test"), splits):
            write_line_files(args.out, name, examples)
        result.update(folder=str(args.out), spec=f"cnndm:{args.out}", articles=[len(s) for s in splits])
    else:
        if args.what == "cnndm" and args.out is None:
            raise SpecError("data download cnndm needs --out FOLDER for the line files")
        if args.out is not None:
            writable_folder(args.out)
        if args.what == "babi" and args.cache is not None:
            writable_folder(args.cache, "--cache")
        try:
            if args.what == "babi":
                from .data.babi import download_babi

                result.update(folder=str(download_babi(args.cache)))
            else:
                from .data.cnndm import load_hf

                for name, split in (("train", "train"), ("val", "valid"), ("test", "test")):
                    write_line_files(args.out, name, load_hf(split, args.limit))
                result.update(folder=str(args.out), spec=f"cnndm:{args.out}")
        except (ImportError, RuntimeError, OSError) as exc:     # no network, no `datasets`
            raise SpecError(f"could not download {args.what}: {exc}") from None
    _print_json(result)
    return 0


def cmd_profiles(args) -> int:
    """Every model's profiles in one place: ``fast`` (a CPU minute) and ``full`` (the paper's sizes)."""
    names = [args.model] if args.model else list(MODELS)
    _print_json({name: CONFIGS[name].profiles() for name in names})
    return 0


def _train_model(argv: list) -> str | None:
    """The MODEL of ``train MODEL ...`` (options may come before ``train``), else None."""
    words = [w for w in argv if not w.startswith("-")]
    return words[1] if len(words) > 1 and words[0] == "train" and words[1] in MODELS else None


def main(argv=None) -> int:
    configure_process()                    # first: PyTorch fixes its CPU kernels at the first tensor operation
    stderr = sys.stderr
    sys.stderr = _LineTracker(stderr)      # so that an error can start on a line of its own
    try:
        return _main(argv)
    finally:
        sys.stderr = stderr


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    model = _train_model(argv)
    parser = build_parser(model)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        flags = [u.split("=")[0] for u in unknown if u.startswith("--")]
        others = {spelling for name, config in CONFIGS.items() if name != model     # another model's flags
                  for f in fields(config) if f.metadata.get("flag", True)
                  for spelling in (flag_name(f.name), *f.metadata["flags"], "--no-" + f.name.replace("_", "-"))}
        foreign = sorted(f for f in flags if f in others)
        if model and foreign and not getattr(args, "debug", False):
            _error(f"model {model!r} has no option {', '.join(foreign)} "
                   f"(`python -m dca_course profiles {model}` lists its knobs)")
            return 2
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    commands = {"train": cmd_train, "evaluate": cmd_evaluate, "score": cmd_score, "data": cmd_data,
                "profiles": cmd_profiles}
    try:
        return commands[args.command](args)
    except (InputError, OSError) as exc:
        # Bad input (a file, a folder, a spec) is the user's to fix: one line, FILE:LINE: first
        # where the library knows them, and exit 2 as argparse does.  A bug is not caught here.
        if args.debug:
            _end_progress_bars()
            raise
        _error(_one_line(exc))
        return 2
    finally:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()


class _LineTracker:
    """``sys.stderr`` as it is, remembering whether what was written last ended a line (a
    progress bar leaves the cursor after its text, or after the ``\\r`` that cleared it)."""

    def __init__(self, stream):
        self._stream = stream
        self.last = "\n"

    def write(self, text):
        if text:
            self.last = text[-1]
        return self._stream.write(text)

    def at_line_start(self) -> bool:
        # after a cleared bar's "\\r" a terminal is at the start of an empty line; a file or a
        # pipe still holds the bar's text on that line
        return self.last == "\n" or (self.last == "\r" and self.isatty())

    def isatty(self) -> bool:
        return bool(getattr(self._stream, "isatty", lambda: False)())

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _say(text: str) -> None:
    """A line on stderr, on a line of its own while progress bars are drawn."""
    from tqdm import tqdm as std_tqdm

    with std_tqdm.external_write_mode(file=sys.stderr):
        _new_line()
        print(text, file=sys.stderr, flush=True)


def _error(text: str) -> None:
    """``dca-course: error: TEXT`` on a line of its own, after any progress bar."""
    _end_progress_bars()
    _new_line()
    print(f"dca-course: error: {text}", file=sys.stderr, flush=True)


def _new_line() -> None:
    if isinstance(sys.stderr, _LineTracker) and not sys.stderr.at_line_start():
        sys.stderr.write("\n")


def _end_progress_bars() -> None:
    """Close the bars an error interrupted (a finished one draws its last state and a line end,
    an unfinished one clears its line), so that nothing is drawn after the error."""
    from tqdm import tqdm as std_tqdm

    for bar in list(getattr(std_tqdm, "_instances", ())):
        try:
            bar.close()
        except Exception:       # a bar whose stream is gone has nothing left to draw
            pass


def _one_line(exc: BaseException) -> str:
    """The error's message on one line (an OSError names its file as ``FILE: reason``)."""
    if isinstance(exc, OSError) and exc.filename:
        text = f"{exc.filename}: {exc.strerror or exc}"
    else:
        text = str(exc)
    return " ".join(line.strip() for line in text.strip().splitlines() if line.strip())


if __name__ == "__main__":
    sys.exit(main())
