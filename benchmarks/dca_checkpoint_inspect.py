"""What the shipped 3-agent DCA shows (``python benchmarks/dca_checkpoint.py inspect``): on the test
articles of SynthNews-long, which agent the decoder attends to while it writes each key fact, against
which agents hold that fact; the late facts (beyond word 400) it states, against a 400-word reader
(a pointer-generator + coverage run folder, if given); and what the messages and each agent carry
(agent 1's states when agent 3 reads another article; the facts stated with one agent left empty).
Prints a text report; the numbers are those of this checkpoint on this machine."""
from __future__ import annotations

from pathlib import Path

import torch

from dca_course.data.agents import split_example
from dca_course.data.synthnews import load_synthnews
from dca_course.decoding import greedy
from dca_course.metrics import contains, fact_metrics, late_facts, mean
from dca_course.recipes import load_run

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
    print("greedy:", {k: round(v, 3) for k, v in fact_metrics(preds, test).items()})

    # 1. agent attention while each stated key fact is written, against the agents holding it
    rows = {"late": [], "early": []}
    for ex, pred, g in zip(test, preds, attn):
        chunks = split_example(ex, M, src_len)
        late = set(late_facts(ex.source, ex.facts))
        for fact in ex.facts["key_facts"]:
            at = _find(pred, fact)
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
    late_dca = [sum(contains(p, f) for f in fs) / len(fs) for p, ex in zip(preds, test)
                if (fs := late_facts(ex.source, ex.facts))]
    print(f"\nlate facts (beyond word 400) stated, greedy: {mean(late_dca):.3f} over {len(late_dca)} articles; "
          f"articles with at least one: {sum(x > 0 for x in late_dca)}")
    if pg400 and (pg400 / "last.pt").is_file():
        r400, m400, v400, _ = load_run(pg400, "cpu")
        p400 = r400.predict(m400.eval(), test, v400, "cpu")
        pbeam = recipe.predict(model, test, vocab, "cpu")
        print(f"beam search (the recipes' evaluation): DCA {fact_metrics(pbeam, test)}; "
              f"400-word pointer-generator + coverage {fact_metrics(p400, test)}")
        shown = 0
        for ex, a, b in zip(test, pbeam, p400):
            fs = late_facts(ex.source, ex.facts)
            if shown < 2 and any(contains(a, f) for f in fs) and not any(contains(b, f) for f in fs):
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
        out = fact_metrics(ablated(recipe, model, vocab, test, agent), test)
        print(f"agent {agent + 1} left empty: fact recall {out['fact_recall']:.3f}, "
              f"late-fact recall {out.get('late_fact_recall', 0):.3f}")
