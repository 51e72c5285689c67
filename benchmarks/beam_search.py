"""Batched beam search against one example at a time, on the same model and the same articles.

    python benchmarks/beam_search.py [--run DIR] [--model pointer-generator|copynet|seq2seq]
                                     [--n 64] [--beam 4] [--batch-size 32] [--max-len 60]

``beam_search`` decodes a whole batch of examples with all their beams in one tensor
(batch * beam rows); ``beam_search_one_by_one`` runs the same search on one example at a time
(its K beams still go through the model together).  Both must return the same summaries; the
script checks that and prints examples per second for each and their ratio, then one line of
JSON.  With ``--run DIR`` the model of a training run folder is used (a trained model ends its
summaries the way it learned to); otherwise a freshly initialised model of the chosen size
decodes SynthNews articles (it rarely ends a summary, so every search runs ``--max-len`` steps).
The device comes from ``dca_course.device()`` (``DCA_DEVICE`` or ``--device`` to choose).
"""
from __future__ import annotations

import argparse
import json
import time
import sys
from pathlib import Path

import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from benchmarks.timing import sync  # noqa: E402

import dca_course
from dca_course.data.batching import collate
from dca_course.data.vocab import Vocab
from dca_course.decoding import beam_search, beam_search_one_by_one


def _model_and_data(args, device):
    from dca_course.data.synthnews import load_synthnews

    _, _, test = load_synthnews(1, 1, args.n, seed=args.seed)
    if args.run:
        from dca_course.recipes import load_run

        recipe, model, vocab, _ = load_run(args.run, device)
        max_src = getattr(recipe.config, "max_src", None)
    else:
        from dca_course.fast import accelerate
        from dca_course.models.copynet import CopyNet
        from dca_course.models.pointer_generator import PointerGenerator
        from dca_course.models.seq2seq import Seq2Seq

        train, _, _ = load_synthnews(500, 1, 1, seed=args.seed)
        vocab = Vocab.build([ex.source + ex.target for ex in train], max_size=2000)
        dca_course.seed_everything(args.seed)
        make = {"pointer-generator": lambda: PointerGenerator(len(vocab), args.emb, args.hidden, coverage=True),
                "copynet": lambda: CopyNet(len(vocab), args.emb, args.hidden),
                "seq2seq": lambda: Seq2Seq(len(vocab), args.emb, args.hidden)}[args.model]
        model = accelerate(make()).to(device)          # as the recipes decode (their fast_path knob)
        max_src = 400
    return model.eval(), vocab, test, max_src


def main(argv=None) -> dict:
    dca_course.configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", default=None, help="a training run folder (uses its model and vocabulary)")
    parser.add_argument("--model", default="pointer-generator", choices=["pointer-generator", "copynet", "seq2seq"])
    parser.add_argument("--emb", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--n", type=int, default=64, help="articles to decode")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-len", type=int, default=60)
    parser.add_argument("--min-len", type=int, default=0)
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads (default 1: a second thread on a busy 2-core machine waits at every op)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = dca_course.device(args.device)
    model, vocab, examples, max_src = _model_and_data(args, device)
    batches = [collate(examples[i: i + args.batch_size], vocab, max_src).to(device)
               for i in range(0, len(examples), args.batch_size)]
    kw = dict(max_len=args.max_len, min_len=args.min_len)

    def run(search):
        ids = []
        sync(device)
        start = time.perf_counter()
        for batch in batches:
            ids += search(model, batch, args.beam, **kw).ids
        sync(device)
        return ids, time.perf_counter() - start

    run(beam_search)                                   # warm-up (allocator, kernels)
    fast_ids, fast_s = run(beam_search)
    slow_ids, slow_s = run(beam_search_one_by_one)
    same = sum(a == b for a, b in zip(fast_ids, slow_ids))
    result = {"device": device.type, "model": args.run or args.model, "examples": len(examples),
              "beam": args.beam, "batch_size": args.batch_size, "max_len": args.max_len,
              "batched_examples_per_s": round(len(examples) / fast_s, 2),
              "one_by_one_examples_per_s": round(len(examples) / slow_s, 2),
              "speedup": round(slow_s / fast_s, 2), "same_summaries": f"{same}/{len(examples)}"}
    print(f"batched beam search:   {result['batched_examples_per_s']:8.2f} examples/s")
    print(f"one example at a time: {result['one_by_one_examples_per_s']:8.2f} examples/s")
    print(f"speed-up {result['speedup']:.2f}x on {device.type}; same summaries: {result['same_summaries']}")
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    main()
