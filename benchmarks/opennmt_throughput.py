"""Training throughput against OpenNMT-py: our pointer-generator + coverage beside OpenNMT-py's
copy attention with coverage, on the same SynthNews articles exported as text files.

    python benchmarks/opennmt_throughput.py --onmt-bin /tmp/onmt/bin [--steps 60] [--device cpu|cuda]

Both systems train with batches of 16 articles of similar lengths, Adam at 3e-3, gradients
clipped at 2, no dropout, one CPU thread (``--threads``), and the throughput is target tokens
(real ones, end-of-summary included, padding not) per second of training, the batching of
examples into tensors included (OpenNMT-py batches on the fly and its clock counts it).

The sizes cannot be made identical: OpenNMT-py's attention needs the encoder's output size to
equal the decoder's state size, and its bidirectional encoder splits ``enc_hid_size`` between
the two directions, while our pointer-generator (See et al.) has ``H`` per direction (``2H``-d
annotations) and an ``H``-d decoder.  So OpenNMT-py runs twice and brackets ours:

* ``enc_hid_size = dec_hid_size = 2H``: the same encoder as ours, a decoder twice as wide;
* ``enc_hid_size = dec_hid_size = H``: the same decoder as ours, an encoder half as wide.

OpenNMT-py is not a dependency of the course.  Its last release (3.5.1) pins ``torch<2.3``,
which no longer installs beside the course's torch, so give it its own environment and
install it without that pin (it imports and trains with torch 2.13 on CPU)::

    python3 -m venv /tmp/onmt
    /tmp/onmt/bin/pip install torch            # the same torch the course uses
    /tmp/onmt/bin/pip install --no-deps OpenNMT-py==3.5.1
    /tmp/onmt/bin/pip install configargparse pyyaml six sacrebleu rapidfuzz tensorboard \\
        pyonmttok spacy pyahocorasick fasttext-wheel 'ctranslate2>=4,<5' flask waitress

OpenNMT-py reports tokens per second every ``--report-every`` steps; the first report (start-up
and warm-up) is dropped and the rest are pooled.  Prints a table, the ratios ours / OpenNMT-py
and one line of JSON; ``--out FOLDER`` also writes ``opennmt_throughput.{json,md}`` there.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
import sys

import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from benchmarks.timing import StepTimer, length_bucketed_batches  # noqa: E402
from tools.provenance import POINTER_GENERATOR_CODE, command_line, write_report  # noqa: E402

import dca_course
from dca_course.data.cnndm import load_cnndm

# "Step 10/   30; acc: 1.9; ppl: 518.8; xent: 6.3; lr: 0.00300; sents:      80; bsz: 2925/ 625/16; 5958/1272 tok/s;"
_REPORT = re.compile(r"Step\s+(\d+)/\s*\d+;.*?xent:\s*([\d.]+);.*?bsz:\s*(\d+)/\s*(\d+)/\s*\d+;\s*"
                     r"(\d+)/\s*(\d+) tok/s")


def parse_reports(log: str) -> list[dict]:
    """OpenNMT-py's training reports: step, cross-entropy, mean source/target tokens per batch
    and source/target tokens per second since the previous report."""
    return [dict(step=int(m[1]), xent=float(m[2]), src_per_batch=int(m[3]), tgt_per_batch=int(m[4]),
                 src_per_s=int(m[5]), tgt_per_s=int(m[6])) for m in _REPORT.finditer(log)]


def pooled_rate(reports: list[dict], report_every: int) -> float:
    """Target tokens per second over all reports but the first (start-up, warm-up): total
    tokens over total seconds, each window's seconds being its tokens over its rate."""
    timed = [r for r in reports[1:] if r["tgt_per_s"] > 0]
    if not timed:
        raise ValueError("OpenNMT-py wrote fewer than two training reports; train longer (--steps)")
    tokens = [r["tgt_per_batch"] * report_every for r in timed]
    return sum(tokens) / sum(t / r["tgt_per_s"] for t, r in zip(tokens, timed))


def export_text(examples, folder: Path) -> tuple[Path, Path]:
    """One article and one summary per line, sentences joined by spaces (OpenNMT-py's input)."""
    folder.mkdir(parents=True, exist_ok=True)
    src, tgt = folder / "src.txt", folder / "tgt.txt"
    src.write_text("".join(" ".join(ex.source) + "\n" for ex in examples), encoding="utf-8")
    tgt.write_text("".join(" ".join(ex.target) + "\n" for ex in examples), encoding="utf-8")
    return src, tgt


def onmt_config(folder: Path, src: Path, tgt: Path, config, size: int, steps: int, report_every: int,
                cuda: bool) -> Path:
    """An OpenNMT-py config as close to our pointer-generator + coverage as its options allow."""
    lines = {
        "save_data": folder / "run", "src_vocab": folder / "run.vocab", "save_model": folder / "model",
        "share_vocab": "true", "overwrite": "true",
        "src_vocab_size": config.vocab_size, "tgt_vocab_size": config.vocab_size,
        "src_seq_length_trunc": config.max_src, "tgt_seq_length_trunc": config.max_tgt,
        "encoder_type": "brnn", "decoder_type": "rnn", "rnn_type": "LSTM", "layers": 1,
        "word_vec_size": config.emb_size, "enc_hid_size": size, "dec_hid_size": size,
        "bridge": "true", "global_attention": "mlp", "input_feed": 1,
        "copy_attn": "true", "reuse_copy_attn": "true", "coverage_attn": "true",
        "lambda_coverage": config.coverage_weight,
        "batch_type": "sents", "batch_size": config.batch_size, "bucket_size": 1024,
        "optim": "adam", "learning_rate": config.lr, "max_grad_norm": config.clip, "dropout": 0.0,
        "train_steps": steps, "valid_steps": 10 ** 9, "save_checkpoint_steps": 10 ** 9,
        "report_every": report_every, "num_workers": 0, "seed": 0,
    }
    text = "".join(f"{k}: {v}\n" for k, v in lines.items())
    text += f"data:\n  corpus_1:\n    path_src: {src}\n    path_tgt: {tgt}\n"
    if cuda:
        text += "gpu_ranks: [0]\nworld_size: 1\n"
    path = folder / f"onmt_{size}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def run_onmt(onmt_bin: Path, config: Path, threads: int, log_path: Path) -> str:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    log = ""
    for tool, extra in (("onmt_build_vocab", ["-n_sample", "-1"]), ("onmt_train", [])):
        proc = subprocess.run([str(onmt_bin / tool), "-config", str(config), *extra], env=env,
                              capture_output=True, text=True)
        log += proc.stdout + proc.stderr
        log_path.write_text(log, encoding="utf-8")
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
            raise SystemExit(f"{onmt_bin / tool} failed (exit {proc.returncode}); its log is {log_path}:\n{tail}")
    return log


def main(argv=None) -> dict:
    dca_course.configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--onmt-bin", type=Path, default=os.environ.get("ONMT_BIN"),
                        help="the folder holding onmt_train and onmt_build_vocab (or set ONMT_BIN)")
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=60, help="training steps for each system")
    parser.add_argument("--report-every", type=int, default=10)
    parser.add_argument("--profile", default="fast", choices=["fast", "full"])
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--work", type=Path, default=None, help="folder for the text files and logs")
    parser.add_argument("--out", type=Path, default=None, help="write opennmt_throughput.{json,md} here")
    args = parser.parse_args(argv)
    if args.onmt_bin is None or not (Path(args.onmt_bin) / "onmt_train").exists():
        parser.error(f"no onmt_train in {args.onmt_bin}: install OpenNMT-py as this script's docstring "
                     "says and pass --onmt-bin FOLDER (or set ONMT_BIN)")
    torch.set_num_threads(args.threads)
    device = dca_course.device(args.device)
    work = args.work or Path(tempfile.mkdtemp(prefix="onmt_bench_"))

    # The same articles for both, read back from the exported line files.
    from dca_course.__main__ import write_line_files
    from dca_course.data.synthnews import load_synthnews

    train, _, _ = load_synthnews(args.articles, 1, 1, seed=0)
    write_line_files(work, "train", train)
    examples = load_cnndm(work, "train")          # collate cuts them at max_src / max_tgt
    dca_course.seed_everything(0)
    timer = StepTimer(examples, args.profile, {}, coverage=True, device=device)
    pg = timer.config
    src, tgt = export_text(examples, work / "onmt")

    def ours_rate():
        return timer.tokens_per_second(length_bucketed_batches(examples, pg.batch_size), args.steps,
                                       include_batching=True)

    # ours before and after OpenNMT-py's runs: on a shared machine the load may change in between, and the
    # mean of the two is compared (the two are stored, so the drift shows)
    ours_before = ours_rate()
    H = pg.hidden_size
    rows = {}
    for size, label in ((2 * H, "same encoder, decoder 2x"), (H, "same decoder, encoder 1/2")):
        config = onmt_config(work / "onmt", src, tgt, pg, size, args.steps, args.report_every, device.type == "cuda")
        reports = parse_reports(run_onmt(Path(args.onmt_bin), config, args.threads, work / f"onmt_{size}.log"))
        rows[size] = dict(label=label, tokens_per_s=round(pooled_rate(reports, args.report_every), 1),
                          last_xent=reports[-1]["xent"], reports=len(reports))
    ours_after = ours_rate()
    ours = (ours_before + ours_after) / 2
    result = {"device": device.type, "threads": args.threads, "profile": args.profile, "steps": args.steps,
              "batch_size": pg.batch_size, "emb_size": pg.emb_size, "hidden_size": H,
              "vocab_size": pg.vocab_size, "ours_tokens_per_s": round(ours, 1),
              "ours_tokens_per_s_before_after": [round(ours_before, 1), round(ours_after, 1)],
              "input_feeding": {"ours": pg.input_feeding, "opennmt": True},
              "opennmt": {f"enc=dec={k}": v for k, v in rows.items()},
              "ratio_ours_over_opennmt": {f"enc=dec={k}": round(ours / v["tokens_per_s"], 2)
                                          for k, v in rows.items()}}
    print(f"training throughput, pointer-generator + coverage, {args.profile} sizes "
          f"(emb {pg.emb_size}, H {H}), batch {pg.batch_size}, {device.type}, {args.threads} thread(s):")
    print(f"  ours (bi-LSTM {H}+{H}, decoder {H}):        {ours:9.1f} target tokens/s")
    for size, row in rows.items():
        print(f"  OpenNMT-py enc=dec={size:<4d} ({row['label']}): {row['tokens_per_s']:9.1f} target tokens/s"
              f"   ours/OpenNMT-py {ours / row['tokens_per_s']:.2f}x")
    print(json.dumps(result, sort_keys=True))
    if args.out:
        # OpenNMT-py's folder and the scratch folder lie outside the repository: stored as DIR, as a user writes them
        shown = list(sys.argv[1:] if argv is None else argv)
        for flag in ("--onmt-bin", "--work"):
            if flag in shown[:-1]:
                shown[shown.index(flag) + 1] = "DIR"
        config = dict(vars(args), onmt_bin="DIR", work="DIR" if args.work else None, recipe=pg.to_dict())
        write_results(args.out, result, command_line(__file__, shown), config)
    return result


def write_results(folder: Path, result: dict, command: str, config: dict) -> None:
    H = result["hidden_size"]
    rows = [f"| ours: pointer-generator + coverage | {H} + {H} | {H} | {result['ours_tokens_per_s']:,.0f} | 1.00 |"]
    for key, row in result["opennmt"].items():
        size = int(key.split("=")[-1])
        rows.append(f"| OpenNMT-py 3.5.1 copy attention + coverage, {key} | {size // 2} + {size // 2} | {size} "
                    f"| {row['tokens_per_s']:,.0f} | {result['ratio_ours_over_opennmt'][key]:.2f} |")
    text = ("# Training throughput against OpenNMT-py\n\n"
            f"`python benchmarks/opennmt_throughput.py --onmt-bin DIR --steps {result['steps']} --out "
            f"results` on {result['device']} ({os.cpu_count()} CPUs, {result['threads']} thread), "
            f"{result['profile']} sizes: {result['emb_size']}-d embeddings, vocabulary {result['vocab_size']:,}, "
            f"batches of {result['batch_size']}, 400/100 tokens, the same 1,000 SynthNews articles; input feeding in "
            f"both (ours: the recipe's default; OpenNMT-py: input_feed 1). Ours is timed before and after "
            f"OpenNMT-py's runs ({result['ours_tokens_per_s_before_after'][0]:,.0f} and "
            f"{result['ours_tokens_per_s_before_after'][1]:,.0f} tokens/s) and the mean compared.\n\n"
            "| system | encoder (per direction) | decoder | target tokens/s | ours / it |\n|---|---|---:|---:|---:|\n"
            + "\n".join(rows) + "\n")
    write_report(folder, "opennmt_throughput", result, text, command=command,
                 config={k: str(v) if isinstance(v, Path) else v for k, v in config.items()},
                 measures=["benchmarks/opennmt_throughput.py", "benchmarks/timing.py", *POINTER_GENERATOR_CODE])


if __name__ == "__main__":
    main()
