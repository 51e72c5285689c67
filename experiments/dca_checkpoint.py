"""The shipped checkpoint of a 3-agent DCA on SynthNews-long (notebook 06 looks inside it).

    python experiments/dca_checkpoint.py make RUN_DIR     # slim RUN_DIR/last.pt into data/checkpoints/, with its JSON
    python experiments/dca_checkpoint.py make --which pg400 RUN_DIR   # the same for the 400-word pointer-generator
    python experiments/dca_checkpoint.py check            # recompute both checkpoints' check values (tests do the same)
    python experiments/dca_checkpoint.py inspect [--pg400 RUN]   # what it shows: agent attention, late facts, messages

``make`` keeps what ``dca_course.recipes.load_run`` needs (the weights, the configs, the vocabulary; no
optimizer state), so ``python -m dca_course evaluate data/checkpoints/dca3-synthnews-long`` works on it,
and writes ``checkpoint.json`` beside it: the command, the configs, the commit and machine it was trained
on, its metrics on the whole test split (the run's own ``metrics.json``) and check values on a fixed
small set (the first 16 test articles): the teacher-forced loss and the greedy summaries, which
``tests/test_dca_checkpoint.py`` recomputes on the CPU and compares.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import RESULTS, ROOT, write_json, write_report, write_text  # noqa: E402

import torch  # noqa: E402

from dca_course.data.agents import split_example  # noqa: E402
from dca_course.data.synthnews import load_synthnews, slot_contexts  # noqa: E402
from dca_course.decoding import greedy  # noqa: E402
from dca_course.losses import sequence_nll  # noqa: E402
from dca_course.metrics import attributed_facts, contains, fact_metrics, late_facts, mean, misattribution  # noqa: E402
from dca_course.recipes import load_run  # noqa: E402
from dca_course.train import save_checkpoint  # noqa: E402

FOLDER = ROOT / "data" / "checkpoints" / "dca3-synthnews-long"
PG400_FOLDER = ROOT / "data" / "checkpoints" / "pg400-synthnews-long"
COMMAND = ("python -m dca_course train dca --agents 3 --data synthnews-long --profile fast --device cpu --seed 0 "
           "--out runs/ckpt-dca3-fast-s0")
PG400_COMMAND = ("python -m dca_course train pointer-generator --coverage --epochs 5 --coverage-epochs 1 --max-src 400 "
                 "--data synthnews-long --profile fast --device cpu --seed 0")
N_CHECK = 16                     # the fixed set: the first 16 test articles of synthnews-long, seed 0
KEEP = ("model", "recipe", "hparams", "model_config", "vocab", "data", "seed", "epoch", "history")


def check_set():
    """The first N_CHECK test articles of the checkpoint's data (the test split has its own random stream)."""
    return load_synthnews(0, 0, N_CHECK, seed=0, long=True)[2]


@torch.no_grad()
def check_values(folder: Path = FOLDER) -> dict:
    """On the CPU: the teacher-forced loss and the greedy summaries of the fixed set, and their fact scores."""
    recipe, model, vocab, _ = load_run(folder, "cpu")
    model.eval()
    examples = check_set()
    batch = recipe.make_batch(examples, vocab)
    loss = sequence_nll(model(batch)["log_probs"], batch.tgt_out, batch.tgt_mask).item()
    max_len, _ = recipe.decode_lengths()
    decoded = greedy(model, batch, max_len)
    preds = [vocab.decode(ids, oovs) for ids, oovs in zip(decoded.ids, batch.oovs)]
    return {"articles": N_CHECK, "teacher_forced_nll": loss, "greedy_summaries": [" ".join(p) for p in preds],
            **{f"greedy_{k}": v for k, v in {**fact_metrics(preds, examples),
                                             **misattribution(preds, examples, slot_contexts)}.items()}}


CHECKPOINTS = {   # what `make` writes: folder, the command that trained the run, what it is
    "dca": (FOLDER, COMMAND, "a 3-agent DCA (Celikyilmaz et al. 2018) trained on SynthNews-long by the command line, "
                             "fast profile"),
    "pg400": (PG400_FOLDER, PG400_COMMAND + " --out runs/pg400-s0",
              "the pointer-generator with coverage (See et al. 2017) reading the first 400 words, trained on "
              "SynthNews-long by the command line, fast profile: notebook 06's 400-word reader"),
}


def make(run: Path, which: str = "dca") -> None:
    folder, command, what = CHECKPOINTS[which]
    state = torch.load(run / "last.pt", map_location="cpu", weights_only=True)
    folder.mkdir(parents=True, exist_ok=True)
    save_checkpoint(folder / "last.pt", {k: state[k] for k in KEEP if k in state})
    metrics = json.loads((run / "metrics.json").read_text())
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    info = {
        "what": what, "command": command, "trained_at_commit": os.environ.get("TRAINED_AT", commit),
        "made_at_commit": commit,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, OMP_NUM_THREADS=1",
        "torch": torch.__version__, "hparams": state["hparams"], "model_config": state["model_config"],
        "parameters": sum(t.numel() for t in state["model"].values()),
        "file": {"name": "last.pt", "bytes": (folder / "last.pt").stat().st_size,
                 "sha256": hashlib.sha256((folder / "last.pt").read_bytes()).hexdigest()},
        "test_metrics": metrics, "check": check_values(folder),
    }
    write_json(folder / "checkpoint.json", info)
    print(json.dumps({k: info[k] for k in ("file", "parameters")}, indent=1))


def check() -> int:
    same = True
    for folder in (FOLDER, PG400_FOLDER):
        stored = json.loads((folder / "checkpoint.json").read_text())["check"]
        now = check_values(folder)
        ok = (abs(now["teacher_forced_nll"] - stored["teacher_forced_nll"]) <= 1e-5 * stored["teacher_forced_nll"]
              and now["greedy_summaries"] == stored["greedy_summaries"])
        print(folder.name, json.dumps({k: (now[k], stored[k]) for k in now if k != "greedy_summaries"}, indent=1))
        print("the same as stored:", ok)
        same = same and ok
    return 0 if same else 1


# -- inspect: what the checkpoint shows ------------------------------------------------------------
# On the test articles: which agent the decoder attends to while it writes each key fact, against the
# agents that hold the fact; the late facts (beyond word 400) it states, against a 400-word reader; what
# the messages and each agent carry (agent 1's states when agent 3 reads another article; the facts
# stated with one agent left empty).
N_TEST = 300


def _find(tokens, fact):
    f = fact.split()
    return next((i for i in range(len(tokens) - len(f) + 1) if tokens[i: i + len(f)] == f), None)


@torch.no_grad()
def decode(recipe, model, vocab, examples, batch_size=50):
    preds, g = [], []
    max_len, _ = recipe.decode_lengths()
    for i in range(0, len(examples), batch_size):
        batch = recipe.make_batch(examples[i: i + batch_size], vocab)
        out = greedy(model, batch, max_len)
        preds += [vocab.decode(ids, oovs) for ids, oovs in zip(out.ids, batch.oovs)]
        g += list(out.info["agent_attn"])                                  # (steps, agents) each
    return preds, g


@torch.no_grad()
def ablated(recipe, model, vocab, examples, agent):
    """Greedy summaries with one agent left empty (its words masked out before encoding)."""
    preds = []
    max_len, _ = recipe.decode_lengths()
    for i in range(0, len(examples), 50):
        batch = recipe.make_batch(examples[i: i + 50], vocab)
        batch.src_mask = batch.src_mask.clone()
        batch.src_mask[:, agent] = False
        batch.src = batch.src.masked_fill(~batch.src_mask, vocab.pad_id)
        out = greedy(model, batch, max_len)
        preds += [vocab.decode(ids, oovs) for ids, oovs in zip(out.ids, batch.oovs)]
    return preds


def inspect(folder: Path, pg400: Path | None = None) -> None:
    recipe, model, vocab, state = load_run(folder, "cpu")
    model.eval()
    M, src_len = recipe.config.agents, recipe.config.max_src
    test = load_synthnews(0, 0, N_TEST, seed=0, long=True)[2]
    preds, attn = decode(recipe, model, vocab, test)
    print(f"{len(test)} test articles of synthnews-long (seed 0); greedy summaries of the checkpoint")
    print("greedy:", {k: round(v, 3) for k, v in fact_metrics(preds, test, contexts_of=slot_contexts).items()})

    def stated(pred, ex) -> set[str]:
        """The key facts ``pred`` states with what they are about (the course's fact measure)."""
        return attributed_facts(pred, ex.facts, slot_contexts(ex.facts["event"]))

    # 1. agent attention while each stated key fact is written, against the agents holding it
    rows = {"late": [], "early": []}
    for ex, pred, g in zip(test, preds, attn):
        chunks = split_example(ex, M, src_len)
        late = set(late_facts(ex.source, ex.facts))
        said = stated(pred, ex)
        for fact in ex.facts["key_facts"]:
            at = _find(pred, fact) if fact in said else None
            if at is None:
                continue
            share = g[at: at + len(fact.split())].mean(0)                 # (agents,) over the fact's words
            holders = [a for a, c in enumerate(chunks) if contains(c, fact)]
            rows["late" if fact in late else "early"].append((share, holders))
    for kind, items in rows.items():
        if not items:
            continue
        shares = torch.stack([s for s, _ in items])
        lead = shares.argmax(-1).tolist()
        hit = mean(lead[i] in h for i, (_, h) in enumerate(items))
        chance = mean(len(h) / M for _, h in items)
        held = [sum(a in h for _, h in items) / len(items) for a in range(M)]
        print(f"\n{kind} key facts stated: {len(items)}; mean agent attention while writing them "
              f"{[round(x, 3) for x in shares.mean(0).tolist()]}; leading agent (argmax) "
              f"{[lead.count(a) for a in range(M)]}; held by agent {[round(x, 2) for x in held]} (share); "
              f"the leading agent holds the fact: {hit:.3f} (chance {chance:.3f})")

    # 2. late facts against the 400-word reader
    late_dca = [len(stated(p, ex) & set(fs)) / len(fs) for p, ex in zip(preds, test)
                if (fs := late_facts(ex.source, ex.facts))]
    print(f"\nlate facts (beyond word 400) stated with what they are about, greedy: {mean(late_dca):.3f} "
          f"over {len(late_dca)} articles; "
          f"articles with at least one: {sum(x > 0 for x in late_dca)}")
    if pg400 and (pg400 / "last.pt").is_file():
        r400, m400, v400, _ = load_run(pg400, "cpu")
        p400 = r400.predict(m400.eval(), test, v400, "cpu")
        pbeam = recipe.predict(model, test, vocab, "cpu")
        print(f"beam search (the recipes' evaluation): DCA {fact_metrics(pbeam, test, contexts_of=slot_contexts)}; "
              f"400-word pointer-generator + coverage {fact_metrics(p400, test, contexts_of=slot_contexts)}")
        shown = 0
        for ex, a, b in zip(test, pbeam, p400):
            fs = late_facts(ex.source, ex.facts)
            if shown < 2 and stated(a, ex) & set(fs) and not stated(b, ex) & set(fs):
                shown += 1
                print(f"  late facts {fs}\n    DCA: {' '.join(a)}\n    400: {' '.join(b)}")

    # 3. what the messages and each agent carry
    batch = recipe.make_batch(test[:2], vocab)
    swapped_src, swapped_mask = batch.src.clone(), batch.src_mask.clone()
    swapped_src[0, M - 1], swapped_mask[0, M - 1] = batch.src[1, M - 1], batch.src_mask[1, M - 1]
    with torch.no_grad():
        h_a, _, _, msgs = model.encode_agents(batch.src[:1], batch.src_mask[:1], return_layers=True)
        h_b, _ = model.encode_agents(swapped_src[:1], swapped_mask[:1])
    n1 = int(batch.src_mask[0, 0].sum())
    move = (h_a[0, 0, :n1] - h_b[0, 0, :n1]).abs()
    print(f"\nmessages: agent 1's top-layer states move by {move.max():.3f} at most, {move.mean():.4f} on average "
          f"(states of size {h_a[0, 0, :n1].abs().mean():.3f}), when agent {M} reads another article; "
          f"message norms of the first article {[round(x, 2) for x in msgs[0][0].norm(dim=-1).tolist()]}")
    for agent in range(M):
        out = fact_metrics(ablated(recipe, model, vocab, test, agent), test, contexts_of=slot_contexts)
        print(f"agent {agent + 1} left empty: attributed fact recall {out['attributed_fact_recall']:.3f}, "
              f"attributed late-fact recall {out.get('attributed_late_fact_recall', 0):.3f}")


def main(argv=None) -> int:
    from dca_course import configure_process

    configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make_parser = sub.add_parser("make")
    make_parser.add_argument("run", type=Path)
    make_parser.add_argument("--which", choices=sorted(CHECKPOINTS), default="dca")
    sub.add_parser("check")
    sub.add_parser("inspect").add_argument("--pg400", type=Path, default=None,
                                           help=f"a run folder of `{PG400_COMMAND}`, to compare")
    args = parser.parse_args(argv)
    if args.command == "make":
        make(args.run, args.which)
        return 0
    if args.command == "check":
        return check()
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as report:
        inspect(FOLDER, args.pg400)
    print(report.getvalue())
    command = "python experiments/dca_checkpoint.py inspect" + (" --pg400 RUN" if args.pg400 else "")
    text = ("# What the shipped 3-agent DCA shows\n\n"
            + (f"RUN: a run of `{PG400_COMMAND}`. " if args.pg400 else "")
            + f"From `data/checkpoints/dca3-synthnews-long`.\n\n```\n{report.getvalue().strip()}\n```\n")
    write_report(RESULTS, "dca_checkpoint_inspect", {"report": report.getvalue().strip().splitlines()}, text,
                 command=command, config={"pg400": PG400_COMMAND if args.pg400 else None},
                 measures=["experiments/dca_checkpoint.py", "data/checkpoints/dca3-synthnews-long",
                           "dca_course/models/dca.py", "dca_course/metrics.py", "dca_course/decoding.py"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
