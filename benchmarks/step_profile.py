"""Where a training step of the pointer-generator + coverage spends its time, per operation,
forward and backward, for the straightforward code and for the fast path.

    python benchmarks/step_profile.py [--profile fast|full] [--steps 6] [--rounds 5] [--out FOLDER]

The straightforward code is the models' own (``dca_course/models``, ``dca_course/nn``):
``model.step`` once per target word, the attention as its equations read (one layer per
term, ``torch.tanh``).  The fast path is the recipes' default (:func:`dca_course.fast.accelerate`):
the attention as one autograd operation with its backward pass written out, the output layers
run once for all steps, and the keys' gradient summed over the steps in one matrix product (see
``dca_course/fast``).  Both compute the same numbers (``tests/test_fast_paths.py``); one model
switches between them in place (:func:`dca_course.fast.paper_code` and ``accelerate``).

1. Timing: the two versions run in turns (``--rounds`` rounds of ``--steps`` training steps
   each, on the same batches), so that the machine's load falls on both alike; each round's
   CPU seconds per step are kept, and the medians and their ratio are printed.
2. ``torch.profiler`` tables: self CPU time per operation and per training step, the forward
   pass (loss included) and the backward pass profiled separately, for each version.

3. ``--models``: the same timing in turns for the recipes' CopyNet and DCA (which share the
   attention and the teacher forcing) and the pointer-generator with input feeding.
4. ``--compile``: ``torch.compile`` tried on the attention step (the equations as written),
   its compile time and its forward + backward time against the hand-fused operation, on the
   batch shapes of the timing (CPU, one thread).

Prints both and one line of JSON; ``--out FOLDER`` also writes ``step_profile.md`` and
``step_profile.json`` there.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
import sys

import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from benchmarks.timing import StepTimer, length_bucketed_batches  # noqa: E402
from tools.provenance import POINTER_GENERATOR_CODE, command_line, cpu_name, write_report  # noqa: E402
from torch.profiler import ProfilerActivity, profile

import dca_course
from dca_course.fast import accelerate, paper_code

ROWS = 14   # operations shown per table


def version(model, reference: bool):
    """``model``, in place, as the paper's code (``reference``) or as its fast form."""
    return paper_code(model) if reference else accelerate(model)


def loss_of(timer: StepTimer, batch) -> torch.Tensor:
    """The training loss of one batch, NLL + coverage loss (the forward pass): the recipe's."""
    return timer.recipe.loss(timer.model, batch)[0]


def cpu_seconds_per_step(timer: StepTimer, batches, reference: bool) -> float:
    """CPU seconds of this process per full training step (optimizer included)."""
    version(timer.model, reference)
    start = time.process_time()
    for batch in batches:
        timer.step(batch)
    return (time.process_time() - start) / len(batches)


def op_table(prof, n_steps: int) -> list[dict]:
    """The profiler's operations by self CPU time: ms per training step."""
    rows = []
    for ev in prof.key_averages():
        if ev.key.startswith(("ProfilerStep", "autograd::engine::evaluate_function")):
            continue
        rows.append({"op": ev.key, "ms": ev.self_cpu_time_total / 1000.0 / n_steps,
                     "calls": ev.count / n_steps})
    rows.sort(key=lambda r: -r["ms"])
    return rows


def profile_version(timer: StepTimer, batches, reference: bool) -> dict:
    """Forward and backward profiled separately over ``batches`` (after the timing warmed up)."""
    fwd_total = bwd_total = 0.0
    tables = {}
    version(timer.model, reference)
    with profile(activities=[ProfilerActivity.CPU]) as pf:
        losses = [loss_of(timer, b) for b in batches]
    with profile(activities=[ProfilerActivity.CPU]) as pb:
        for loss in losses:
            loss.backward()
    timer.model.zero_grad(set_to_none=True)
    for name, prof in (("forward", pf), ("backward", pb)):
        rows = op_table(prof, len(batches))
        tables[name] = rows
        total = sum(r["ms"] for r in rows)
        if name == "forward":
            fwd_total = total
        else:
            bwd_total = total
    return {"forward_ms": fwd_total, "backward_ms": bwd_total, "tables": tables}


def recipe_speedups(steps: int, rounds: int) -> list[dict]:
    """Training-step CPU ms, reference against fast path in turns, for the recipes' models at the
    ``fast`` profile (batches of similar source lengths, as the recipes train)."""
    from dca_course.data.synthnews import load_synthnews
    from dca_course.models.pointer_generator import PointerGenerator
    from dca_course.recipes import CopyNetRecipe, DCARecipe, PointerGeneratorRecipe
    from dca_course.registry import Dataset

    short, _, _ = load_synthnews(400, 1, 1, seed=0)
    long, _, _ = load_synthnews(200, 1, 1, seed=0, long=True)
    cases = [("pointer-generator + coverage, input feeding", PointerGeneratorRecipe, {"input_feeding": True}, short),
             ("CopyNet", CopyNetRecipe, {}, short),
             ("DCA, 3 agents (synthnews-long)", DCARecipe, {}, long)]
    rows = []
    for label, recipe_cls, overrides, train in cases:
        dca_course.seed_everything(0)
        recipe = recipe_cls(recipe_cls.config_class.from_profile("fast", overrides))
        vocab = recipe.build_vocab(Dataset("synthnews", "summaries", train, [], []))
        recipe._vocab = vocab
        model = recipe.build_model(vocab)
        if isinstance(model, PointerGenerator):
            model.set_coverage(True)
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        groups = length_bucketed_batches(train, recipe.config.batch_size)[: steps + 1]
        batches = [recipe.make_batch(g, vocab) for g in groups]

        def step(batch):
            loss, _ = recipe.loss_fn(model, batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

        times = {"reference": [], "fast": []}
        for reference in (True, False):                 # warm-up
            version(model, reference)
            step(batches[0])
        for _ in range(rounds):
            for v in ("reference", "fast"):
                version(model, v == "reference")
                start = time.process_time()
                for b in batches[1:]:
                    step(b)
                times[v].append(1000 * (time.process_time() - start) / (len(batches) - 1))
        ref, fast = statistics.median(times["reference"]), statistics.median(times["fast"])
        rows.append({"model": label, "reference_ms": ref, "fast_ms": fast, "speedup": ref / fast})
    return rows


def compile_trial(B: int, S: int, A: int, D: int, calls: int = 50) -> dict:
    """Seconds to compile the attention step with ``torch.compile`` (dynamic shapes) and
    microseconds per forward + backward, compiled, eager (the equations) and hand-fused."""
    from dca_course.fast.attention import _FusedAdditiveAttention
    from dca_course.nn.attention import masked_softmax

    def equations(pk, q, cov, w_c, v, keys, mask):
        feats = pk + q.unsqueeze(1) + cov.unsqueeze(-1) * w_c
        weights = masked_softmax(torch.tanh(feats) @ v, mask)
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights

    g = torch.Generator().manual_seed(0)
    args = [torch.randn(*shape, generator=g).requires_grad_() for shape in
            ((B, S, A), (B, A), (B, S), (A,), (A,), (B, S, D))] + [torch.ones(B, S, dtype=torch.bool)]

    def fwd_bwd(fn):
        context, weights = fn(*args)
        (context.sum() + weights.square().sum()).backward()

    out = {}
    try:
        compiled = torch.compile(equations, dynamic=True)
        start = time.perf_counter()
        fwd_bwd(compiled)
        out["compile_s"] = time.perf_counter() - start
    except Exception as err:                    # no compiler here: say so, do not fail
        out["compile_error"] = f"{type(err).__name__}: {err}"[:200]
        compiled = None
    for name, fn in (("eager_us", equations), ("fused_us", _FusedAdditiveAttention.apply),
                     ("compiled_us", compiled)):
        if fn is None:
            continue
        fwd_bwd(fn)
        start = time.process_time()
        for _ in range(calls):
            fwd_bwd(fn)
        out[name] = 1e6 * (time.process_time() - start) / calls
    return out


def markdown(result: dict) -> str:
    lines = [f"# Where a training step goes: pointer-generator + coverage ({result['profile']} profile, cpu)", "",
             f"{result['steps']} steps, {result['rounds']} rounds; {result['machine']}, one thread. Batches of "
             f"{result['batch_size']} SynthNews articles of similar lengths (source {result['src_len']}, "
             f"target {result['tgt_len']} tokens on average).", "",
             "## Full training step, CPU ms (the two versions in turns, median over the rounds)", "",
             "| version | ms per step | rounds |", "|---|---:|---|"]
    for v in ("reference", "fast"):
        lines.append(f"| {v} | {result[v + '_ms']:.1f} | {', '.join(f'{x:.0f}' for x in result[v + '_rounds'])} |")
    lines += ["", f"Fast path: **{result['speedup']:.2f}x** faster than the straightforward code.", ""]
    for v in ("reference", "fast"):
        p = result["profiles"][v]
        lines += [f"## {v}: self CPU ms per training step, by operation (under the profiler)", "",
                  f"Forward (loss included) {p['forward_ms']:.1f} ms, backward {p['backward_ms']:.1f} ms.", "",
                  "| forward op | ms | calls | | backward op | ms | calls |", "|---|---:|---:|---|---|---:|---:|"]
        f, b = p["tables"]["forward"][:ROWS], p["tables"]["backward"][:ROWS]
        for i in range(max(len(f), len(b))):
            left = f"{f[i]['op']} | {f[i]['ms']:.1f} | {f[i]['calls']:.0f}" if i < len(f) else " | | "
            right = f"{b[i]['op']} | {b[i]['ms']:.1f} | {b[i]['calls']:.0f}" if i < len(b) else " | | "
            lines.append(f"| {left} | | {right} |")
        lines.append("")
    if result.get("models"):
        lines += ["## The other models sharing the machinery (`--models`)", "",
                  "Training-step CPU ms, `fast` profile, reference and fast path in turns (median of the rounds):", "",
                  "| model | reference | fast | speedup |", "|---|---:|---:|---:|"]
        for r in result["models"]:
            lines.append(f"| {r['model']} | {r['reference_ms']:.0f} | {r['fast_ms']:.0f} | {r['speedup']:.2f}x |")
        lines.append("")
    trial = result.get("compile")
    if trial:
        lines += ["## torch.compile on the attention step", "",
                  f"Shapes (batch {result['batch_size']}, source {result['src_len']}); forward + backward, "
                  "CPU microseconds per call (one thread):", ""]
        if "compile_error" in trial:
            lines.append(f"- compiling failed: `{trial['compile_error']}`")
        else:
            lines.append(f"- compile time: {trial['compile_s']:.1f} s (dynamic shapes, first call)")
        for k, label in (("eager_us", "the equations, eager"), ("compiled_us", "the equations, compiled"),
                         ("fused_us", "hand-fused (the library's)")):
            if k in trial:
                lines.append(f"- {label}: {trial[k]:.0f} us")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> dict:
    dca_course.configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="fast", choices=["fast", "full"])
    parser.add_argument("--steps", type=int, default=6, help="training steps per round and per profile")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--compile", action="store_true", help="also try torch.compile on the attention step")
    parser.add_argument("--models", action="store_true", help="also time CopyNet, DCA and the input-feeding variant")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    dca_course.seed_everything(0)
    from dca_course.data.synthnews import load_synthnews

    train, _, _ = load_synthnews(args.articles, 1, 1, seed=0)
    timer = StepTimer(train, args.profile, {}, coverage=True, device=torch.device("cpu"))
    groups = length_bucketed_batches(train, timer.config.batch_size)[: args.steps + 2]
    batches = [timer.recipe.make_batch(g, timer.vocab) for g in groups]
    warm, timed = batches[:2], batches[2:]
    for reference in (True, False):
        cpu_seconds_per_step(timer, warm, reference)
    rounds = {"reference": [], "fast": []}
    for _ in range(args.rounds):
        for v in ("reference", "fast"):
            rounds[v].append(1000 * cpu_seconds_per_step(timer, timed, v == "reference"))
    profiles = {v: profile_version(timer, timed, v == "reference") for v in ("reference", "fast")}
    ref, fast = statistics.median(rounds["reference"]), statistics.median(rounds["fast"])
    result = {
        "profile": args.profile, "steps": args.steps, "rounds": args.rounds,
        "machine": f"{cpu_name()}, torch {torch.__version__}",
        "batch_size": timer.config.batch_size,
        "src_len": round(statistics.mean(b.src.shape[1] for b in timed)),
        "tgt_len": round(statistics.mean(b.tgt_out.shape[1] for b in timed)),
        "reference_ms": ref, "fast_ms": fast, "speedup": ref / fast,
        "reference_rounds": rounds["reference"], "fast_rounds": rounds["fast"], "profiles": profiles,
    }
    if args.models:
        result["models"] = recipe_speedups(args.steps, args.rounds)
    if args.compile:
        config = timer.config
        result["compile"] = compile_trial(config.batch_size, result["src_len"],
                                          config.attn_size or 2 * config.hidden_size, 2 * config.hidden_size)
    print(markdown(result))
    summary = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in result.items() if k != "profiles"}
    print(json.dumps(summary, sort_keys=True, default=str))
    if args.out:
        write_report(args.out, "step_profile", summary, markdown(result) + "\n", command=command_line(__file__, argv),
                     config=vars(args), measures=["benchmarks/step_profile.py", "benchmarks/timing.py",
                                                  *POINTER_GENERATOR_CODE, "dca_course/models/copynet.py",
                                                  "dca_course/models/dca.py"])
    return result


if __name__ == "__main__":
    main()
