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
import json
import re
import sys
from dataclasses import fields
from pathlib import Path

from . import device as pick_device
from . import seed_everything
from .recipes import CONFIGS
from .recipes.config import add_config_flags, config_overrides, flag_name
from .data.specs import spec_kind
from .registry import MODELS, SpecError, data_choices, get_model, load_data
from .errors import InputError
from .io import text_lines, write_lines
from .train import dist_info, distributed_device


def build_parser(model: str | None = None) -> argparse.ArgumentParser:
    """The command line.  With ``model`` (``train MODEL ...``), ``train`` has that model's flags
    only, with its own help (``train dmn --help``); without, every model's."""
    configs = {model: CONFIGS[model]} if model else CONFIGS
    parser = argparse.ArgumentParser(prog="dca-course", description=__doc__.split("\n\n")[0],
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
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--out", type=Path, default=None, help="run folder (default runs/MODEL-DATA-seedN)")
    train.add_argument("--limit-train", type=int, default=None, metavar="N",
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
    gen.add_argument("--train", type=int, default=1000, help="training questions (babi) or articles (synthnews)")
    gen.add_argument("--valid", type=int, default=100, help="synthnews: validation articles")
    gen.add_argument("--test", type=int, default=1000, help="test questions (babi) or articles (synthnews)")
    gen.add_argument("--long", action="store_true", help="synthnews: 5-6 paragraph articles (for DCA)")
    gen.add_argument("--seed", type=int, default=0)
    down = data_sub.add_parser("download", help="download a real data set once (cached, checksummed)")
    down.add_argument("what", choices=["babi", "cnndm"])
    down.add_argument("--cache", type=Path, default=None, help="babi: cache folder (default $DCA_COURSE_CACHE "
                                                               "or ~/.cache/dca_course)")
    down.add_argument("--out", type=Path, default=None, help="cnndm: folder for the line files")
    down.add_argument("--limit", type=int, default=None, help="cnndm: examples per split (default: all)")
    for command in (train, evaluate, score, profiles, gen, down):   # --debug also after the command
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="on an input error, show the traceback too")
    return parser


def _print_json(result: dict) -> None:
    print(json.dumps(result, sort_keys=True), flush=True)


def cmd_train(args) -> int:
    from .recipes import save_metrics

    info = dist_info()
    device = distributed_device(pick_device(args.device))
    seed_everything(args.seed)
    recipe_cls = get_model(args.model)
    overrides = config_overrides(args, recipe_cls.config_class, CONFIGS, args.model)
    config = recipe_cls.config_class.from_profile(args.profile, overrides)
    recipe_cls.check_kind(spec_kind(args.data), args.data)     # refuse a pair before loading the data
    data = load_data(args.data, config.data_profile, args.seed)
    if args.limit_train:
        data.limit_train(args.limit_train)
    out = args.out or Path("runs") / re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{args.model}-{args.data}-seed{args.seed}")
    log = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    result = recipe_cls(config).train(data, device, out, seed=args.seed, progress=not args.quiet,
                                      resume=not args.fresh, log=log)
    if info.is_main:
        result.update(profile=config.profile, seed=args.seed, out=str(out), world_size=info.world_size)
        save_metrics(out, result)
        _print_json(result)
    return 0


def cmd_evaluate(args) -> int:
    from .recipes import load_run

    device = pick_device(args.device)
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
        train, test = load_generated(args.task, args.train, args.test, args.seed)   # as babi:TASK trains on
        stem = args.out / "en" / TASK_NAMES[args.task]
        write_babi(train, f"{stem}_train.txt")
        write_babi(test, f"{stem}_test.txt")
        result.update(folder=str(args.out), task=args.task, spec=f"babi:{args.out}:{args.task}")
    elif args.data_command == "generate":
        from .data.synthnews import load_synthnews

        splits = load_synthnews(args.train, args.valid, args.test, seed=args.seed, long=args.long)
        for name, examples in zip(("train", "val", "test"), splits):
            write_line_files(args.out, name, examples)
        result.update(folder=str(args.out), spec=f"cnndm:{args.out}", articles=[len(s) for s in splits])
    else:
        if args.what == "cnndm" and args.out is None:
            raise SpecError("data download cnndm needs --out FOLDER for the line files")
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
            print(f"dca-course: error: model {model!r} has no option {', '.join(foreign)} "
                  f"(`python -m dca_course profiles {model}` lists its knobs)", file=sys.stderr)
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
            raise
        print(f"dca-course: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    finally:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()


def _one_line(exc: BaseException) -> str:
    """The error's message on one line (an OSError names its file as ``FILE: reason``)."""
    if isinstance(exc, OSError) and exc.filename:
        text = f"{exc.filename}: {exc.strerror or exc}"
    else:
        text = str(exc)
    return " ".join(line.strip() for line in text.strip().splitlines() if line.strip())


if __name__ == "__main__":
    sys.exit(main())
