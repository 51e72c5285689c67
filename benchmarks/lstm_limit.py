"""Distance from the limit: our pointer-generator + coverage training step against its LSTM
layers alone.

    python benchmarks/lstm_limit.py [--profile fast|full] [--steps 10] [--rounds 5] [--device cpu|cuda]
                                    [--no-input-feeding] [--reference]

A training step of the pointer-generator runs a bidirectional LSTM over the article and an
LSTM cell over the summary, and around them embeddings, attention, coverage, the pointer, the
output softmax over the vocabulary, the losses and Adam.  The LSTM layers alone, as one
``torch.nn.LSTM`` call each (cuDNN on a GPU, oneDNN or PyTorch's own kernels on a CPU), on the
same batch shapes, forward and backward, are a floor that no implementation of the model can
go under.  The ratio step time / LSTM time says how far above that floor we are.

The model is the recipe's default, input feeding included (``x_t = W_x [E y_{t-1}; h*_{t-1}]``,
as See et al.'s code): each step's input needs the previous step's attention, so the decoder
LSTM must run cell by cell.  The floor that allows is the third time, the same LSTM layers with
the decoder run one cell step at a time: ``stepwise_ratio`` (step time / that floor) is the
like-for-like distance from the limit.  A fourth time adds to that floor the attention each step
waits for, in its cheapest form (scores through one sigmoid over every source position, their softmax,
the context fed into the next step's input): ``attention_floor_over_stepwise`` is how much of the
distance the attention's own arithmetic takes, and ``attention_floor_ratio`` (step time / it) what
coverage, the pointer, the output layer, the loss and Adam add.  ``--no-input-feeding`` times the model without it,
whose decoder LSTM is one fused call, against the fused floor.  ``--reference`` times the
models' own code (the recipe's ``--no-fast-path``) instead of the fast path (:mod:`dca_course.fast`).
Batches are the recipe's (16 articles of similar lengths, 400/100 tokens).

The four are timed in turns, ``--rounds`` times over the same batches, so that the load of a
shared machine falls on all of them alike; each time is the fastest round's mean per step (the
least disturbed), and the medians are printed beside.  Prints the times per step, the ratio,
and one line of JSON (``--out FOLDER`` also writes it to ``lstm_limit_{profile}.json`` there).
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
import sys

import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from benchmarks.timing import StepTimer, length_bucketed_batches, time_per_call  # noqa: E402
from tools.provenance import POINTER_GENERATOR_CODE, command_line, write_result_json  # noqa: E402

import dca_course


def lstm_floor(config, device) -> tuple[torch.nn.LSTM, torch.nn.LSTM]:
    """The encoder's bidirectional LSTM and a decoder LSTM of the model's sizes."""
    E, H = config.emb_size, config.hidden_size
    encoder = torch.nn.LSTM(E, H, batch_first=True, bidirectional=True).to(device)
    decoder = torch.nn.LSTM(E, H, batch_first=True).to(device)
    return encoder, decoder


def floor_with_attention(model, cell: torch.nn.LSTMCell, device):
    """The step-by-step floor with the attention that input feeding waits for at every step, in its
    cheapest form, as a function of one batch shape (batch, source length, target length): the scores
    v^T sigmoid(W_h h_j + W_s s_t) over every source position (sigmoid: the fast path's nonlinearity,
    cheaper than tanh on the CPUs timed), their softmax, the context and its feed into the next step's
    input; no coverage, pointer, output layer or loss.  What no code of these equations avoids.  The
    sizes are ``model``'s own (its attention size, 2H where the recipe leaves it unset)."""
    A, K = model.attention.W_s.out_features, model.attention.W_h.in_features
    E, H = cell.input_size, cell.hidden_size
    W_s = torch.nn.Linear(H, A).to(device)
    W_ctx = torch.nn.Linear(K, E, bias=False).to(device)
    v = torch.randn(A, device=device, requires_grad=True)

    def attention_floor_step(shape):
        B, S, T = shape
        x_tgt = torch.randn(B, T, E, device=device, requires_grad=True)
        keys = torch.randn(B, S, K, device=device, requires_grad=True)
        proj_keys = torch.randn(B, S, A, device=device, requires_grad=True)
        h = c = torch.zeros(B, H, device=device)
        context = torch.zeros(B, K, device=device)
        outs = []
        for t in range(T):
            h, c = cell(x_tgt[:, t] + W_ctx(context), (h, c))
            scores = torch.sigmoid(proj_keys + W_s(h).unsqueeze(1)) @ v                  # (batch, source)
            context = torch.bmm(torch.softmax(scores, -1).unsqueeze(1), keys).squeeze(1)
            outs.append(h)
        (torch.stack(outs, 1).sum() + context.sum()).backward()

    return attention_floor_step


def main(argv=None) -> dict:
    dca_course.configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="fast", choices=["fast", "full"])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per round (after 2 warm-up steps)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the four timings, in turns")
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-input-feeding", action="store_true",
                        help="the pointer-generator without input feeding (its decoder LSTM runs fused); the "
                             "recipe's default, timed without this flag, feeds the attention back as See et al.'s code")
    parser.add_argument("--reference", action="store_true",
                        help="time the models' own code (the recipe's --no-fast-path) instead of dca_course.fast")
    parser.add_argument("--out", type=Path, default=None, help="write lstm_limit_{profile}.json here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = dca_course.device(args.device)
    dca_course.seed_everything(0)

    from dca_course.data.synthnews import load_synthnews

    train, _, _ = load_synthnews(args.articles, 1, 1, seed=0)
    input_feeding = not args.no_input_feeding
    overrides = {"input_feeding": input_feeding, "fast_path": not args.reference}
    timer = StepTimer(train, args.profile, overrides, coverage=True, device=device)
    config = timer.config
    groups = length_bucketed_batches(train, config.batch_size)[: args.steps + 2]
    batches = [timer.recipe.make_batch(g, timer.vocab).to(device) for g in groups]

    encoder, decoder = lstm_floor(config, device)
    E = config.emb_size
    # the same shapes as the model's batches: (batch, source length) and (batch, target length)
    shapes = [(b.src.shape[0], b.src.shape[1], b.tgt_out.shape[1]) for b in batches]

    # between the two: the same layers with the decoder run one step at a time, as the model must
    cell = torch.nn.LSTMCell(E, config.hidden_size).to(device)

    def layers_step(shape, stepwise=False):
        B, S, T = shape
        x_src = torch.randn(B, S, E, device=device, requires_grad=True)
        x_tgt = torch.randn(B, T, E, device=device, requires_grad=True)
        enc_out, _ = encoder(x_src)
        if stepwise:
            h = c = torch.zeros(B, config.hidden_size, device=device)
            outs = []
            for t in range(T):
                h, c = cell(x_tgt[:, t], (h, c))
                outs.append(h)
            dec_out = torch.stack(outs, 1)
        else:
            dec_out, _ = decoder(x_tgt)
        (enc_out.sum() + dec_out.sum()).backward()

    attention_floor_step = floor_with_attention(timer.model, cell, device)

    timings = {"model": [], "lstm": [], "stepwise": [], "attention_floor": []}
    runs = {"model": lambda: time_per_call(timer.step, batches, device),
            "lstm": lambda: time_per_call(layers_step, shapes, device),
            "stepwise": lambda: time_per_call(lambda shape: layers_step(shape, stepwise=True), shapes, device),
            "attention_floor": lambda: time_per_call(attention_floor_step, shapes, device)}
    for _ in range(args.rounds):
        for name, run in runs.items():
            timings[name].append(run())
    model_step, lstm_step, stepwise, attention_floor = (min(timings[k]) for k in ("model", "lstm", "stepwise",
                                                                                   "attention_floor"))
    medians = {k: round(1000 * statistics.median(v), 1) for k, v in timings.items()}
    backend = ("cuDNN " + str(torch.backends.cudnn.version())) if device.type == "cuda" else "CPU kernels"
    result = {"device": device.type, "backend": backend, "threads": args.threads, "profile": args.profile,
              "batch_size": config.batch_size, "emb_size": E, "hidden_size": config.hidden_size,
              "vocab_size": len(timer.vocab), "steps": args.steps,
              "model_step_ms": round(1000 * model_step, 1), "lstm_layers_ms": round(1000 * lstm_step, 1),
              "lstm_stepwise_decoder_ms": round(1000 * stepwise, 1),
              "ratio": round(model_step / lstm_step, 2), "stepwise_ratio": round(model_step / stepwise, 2),
              "attention_floor_ms": round(1000 * attention_floor, 1),
              "attention_floor_over_stepwise": round(attention_floor / stepwise, 2),
              "attention_floor_ratio": round(model_step / attention_floor, 2),
              "rounds": args.rounds,
              "median_ms": medians, "median_ratio": round(medians["model"] / medians["lstm"], 2),
              "fast_path": not args.reference, "input_feeding": input_feeding}
    feeding = "with input feeding (the recipe's default)" if input_feeding else "without input feeding"
    print(f"pointer-generator + coverage {feeding}, {args.profile} sizes, batch {config.batch_size}, "
          f"{device.type} ({backend}):")
    print(f"  full training step:            {1000 * model_step:8.1f} ms")
    print(f"  its LSTM layers alone (fused): {1000 * lstm_step:8.1f} ms")
    print(f"  the same, decoder step by step: {1000 * stepwise:7.1f} ms  ({stepwise / lstm_step:.2f}x the fused layers)")
    print(f"  distance from the limit:       {model_step / lstm_step:8.2f}x  (fastest of {args.rounds} rounds; "
          f"medians {medians['model']} / {medians['lstm']} ms: {result['median_ratio']:.2f}x)")
    print(f"  against the step-by-step floor: {model_step / stepwise:7.2f}x  (the floor input feeding allows)")
    print(f"  that floor with the attention input feeding waits for (scores, softmax, context): "
          f"{1000 * attention_floor:.1f} ms,\n  {attention_floor / stepwise:.2f}x the step-by-step floor; our step is "
          f"{model_step / attention_floor:.2f}x it")
    print(json.dumps(result, sort_keys=True))
    if args.out:
        write_result_json(args.out / f"lstm_limit_{args.profile}.json", result, command=command_line(__file__, argv),
                          config=dict(vars(args), recipe=config.to_dict()),
                          measures=["benchmarks/lstm_limit.py", "benchmarks/timing.py", *POINTER_GENERATOR_CODE])
    return result


if __name__ == "__main__":
    main()
