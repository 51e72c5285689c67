"""What the mixed self-critical objective of the DCA recipe does, step by step (not a test: it trains).

    python experiments/rl_diagnostics.py --init /tmp/mle --train-init 500 --steps 30 \\
        --config legacy,0.97,greedy --config token,0.9984,loo --out rl_diagnostics.json

(``--train-init 500`` first trains notebook 07's small MLE DCA on synthnews-long:500 into
``--init``, about a minute; any dca run folder works, e.g. ``python -m dca_course train dca
--agents 3 --data synthnews-long:400 --profile fast --out /tmp/mle``, though a briefly trained
fast-profile model still writes mostly noise, which makes the rewards near 0.)

From the weights of an MLE run (``--init``), every ``--config REDUCTION,GAMMA,BASELINE`` runs
``--steps`` steps of the recipe's mixed loss (Adam, the recipe's RL learning rate and gradient
clipping, the same batches and seed for every configuration) on the run's *training* articles,
and measures at every step, from the same draws:

* ``reward_sample``, ``reward_greedy``: mean ROUGE of the K samples and of the greedy summary;
* ``pos_greedy``, ``tie_greedy``, ``pos_loo``: the fraction of samples whose advantage is positive
  (and, for greedy, exactly 0: a sample equal to the greedy summary teaches nothing) against the
  greedy baseline and against the leave-one-out one (Kool et al. 2019);
* ``g_rl``, ``g_mle``: the gradient norms of the two terms *as reduced* by the configuration,
  ``g_rl_tok``/``g_mle_tok`` the same per token (the scale of a reduction is a constant per
  batch, so the conversion is exact), ``mle_share`` = (1 - gamma) g_mle / (gamma g_rl) and
  ``cos`` the cosine between the two gradients; ``clipped``: the mixed gradient's norm was
  over the recipe's clip;
* ``entropy``: -log p of the sampled words per word (a Monte Carlo estimate of the policy's
  per-step entropy), ``sample_len`` the sampled summaries' mean length.

At the first and the last step (``--variance-draws R``), the variance of the RL gradient estimate
on one fixed batch: R independent draws of K samples per article, the RL term's gradient (per
token) with no baseline, the greedy baseline and the leave-one-out baseline *on the same draws*,
and the total variance tr Cov = E||g - E g||^2, relative to ||E g||^2.  ``--valid N`` adds the
greedy ROUGE-L of N validation articles before and after the steps (never the test articles).
It prints a table and writes everything as JSON (``--out``).
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from dataclasses import replace
from pathlib import Path
import sys

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import SUMMARIZER_CODE, command_line, cpu_model, write_result_json  # noqa: E402

from dca_course import seed_everything
from dca_course.decoding import greedy
from dca_course.losses import rouge_reward, self_critical_loss


def _flat(grads, params) -> torch.Tensor:
    return torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(grads, params)])


def _grad(loss, params, retain: bool) -> torch.Tensor:
    return _flat(torch.autograd.grad(loss, params, retain_graph=retain, allow_unused=True), params)


def gradient_variance(recipe, model, batch, draws: int = 4) -> dict:
    """Variance of the RL term's gradient estimate (per-token reduction) over ``draws``
    independent draws of ``rl_samples`` samples per article of ``batch``, with no baseline, the
    greedy baseline and the leave-one-out one computed on the *same* draws.

    All three estimate the same expected gradient (neither baseline depends on the sample it
    judges), so their variances compare directly.  For each: ``trace_var``, the total variance
    sum_i Var(g_i) = E||g - E g||^2 (unbiased over the draws); ``norm2``, an unbiased estimate of
    ||E g||^2 (||mean||^2 - trace_var / draws); ``proj_var``, the variance of the projection of g
    on the direction of the mean of all draws of all three (the direction that matters)."""
    params = [p for p in model.parameters() if p.requires_grad]
    k = recipe.config.rl_samples
    kinds = ["none", "greedy"] + (["loo"] if k >= 2 else [])
    grads = {name: [] for name in kinds}
    model.train()
    for _ in range(draws):
        draw = recipe.rl_draw(model, batch, greedy_baseline=True)
        advs = {"none": torch.tensor(draw["r_sample"], dtype=draw["lp"].dtype),
                "greedy": recipe.rl_advantages(draw, "greedy")}
        if "loo" in kinds:
            advs["loo"] = recipe.rl_advantages(draw, "loo")
        for i, name in enumerate(kinds):
            loss = self_critical_loss(draw["lp"], draw["mask"], advs[name], 0.0, reduction="token")
            grads[name].append(_grad(loss, params, retain=i + 1 < len(kinds)))
    stacked = {name: torch.stack(gs).double() for name, gs in grads.items()}   # (draws, params)
    pooled = torch.cat(list(stacked.values())).mean(0)
    unit = pooled / pooled.norm().clamp_min(1e-30)
    out = {"draws": draws}
    for name, g in stacked.items():
        mean = g.mean(0)
        var = g.var(0, unbiased=True).sum().item() if draws > 1 else float("nan")
        out[name] = {"trace_var": var, "norm2": mean.pow(2).sum().item() - var / draws,
                     "proj_var": (g @ unit).var(unbiased=True).item() if draws > 1 else float("nan")}
    return out


def greedy_rouge(recipe, model, examples, kind: str = "rougeL") -> list:
    """ROUGE (F1, 0..1) of the greedy summary of every article of ``examples`` (eval mode)."""
    was = model.training
    model.eval()
    scores = []
    max_len = recipe.decode_lengths()[0]
    try:
        for i in range(0, len(examples), 32):
            exs = examples[i: i + 32]
            batch = recipe.make_batch(exs, recipe._vocab)
            out = greedy(model, batch, max_len)
            for ids, oovs, ex in zip(out.ids, batch.oovs, exs):
                scores.append(rouge_reward(recipe._vocab.decode(ids, oovs), ex.summary_text(), kind))
    finally:
        model.train(was)
    return scores


def _paired(after: list, before: list) -> dict:
    diffs = [a - b for a, b in zip(after, before)]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")
    return {"mean": statistics.fmean(diffs), "se": se}


#: The mix the recipe used before both terms were reduced alike: a summed L_RL with a per-token L_MLE
#: (the MLE term's weight then shrinks with the summaries' length); measured here, not trainable.
MIXED = "legacy"


def diagnose(recipe, model, examples, *, steps: int, gamma: float, reduction: str = "token",
             baseline: str = "greedy", lr: float | None = None, clip: float | None = None, seed: int = 0,
             variance_draws: int = 0, variance_at=("first", "last"), valid=None, valid_before=None,
             log=None) -> dict:
    """Run ``steps`` mixed-loss steps of ``recipe`` (a :class:`DCARecipe` whose ``_vocab`` is
    set) on ``model`` over the batches of ``examples`` (in order, cycled), measuring every step;
    see the module's docstring.  ``variance_at``: when to measure the variance of the gradient
    (``first``, ``last``); ``valid_before``: the greedy ROUGE-L of ``valid`` before, when known.
    Changes ``model``'s weights; returns ``{"config", "steps":
    [row per step], "variance": {"first", "last"}, "valid": {...}, "seconds"}``."""
    recipe.config = replace(recipe.config, gamma=gamma, baseline=baseline,
                            loss_reduction="token" if reduction == MIXED else reduction)
    # MIXED: L_RL summed over each summary, L_MLE per token, as the recipe once mixed them
    rl_red, mle_red = ("sequence", "token") if reduction == MIXED else recipe.reductions()
    lr = recipe.config.rl_lr if lr is None else lr
    clip = recipe.config.clip if clip is None else clip
    bs, k = recipe.config.rl_batch_size, recipe.config.rl_samples
    seed_everything(seed)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    n_batches = max(len(examples) // bs, 1)
    batches = [examples[i * bs: (i + 1) * bs] for i in range(n_batches)]
    result = {"config": dict(reduction=reduction, gamma=gamma, baseline=baseline, k=k, batch_size=bs, lr=lr,
                             clip=clip, seed=seed, steps=steps), "steps": [], "variance": {}, "valid": {}}
    started = time.perf_counter()
    if valid:
        before = greedy_rouge(recipe, model, valid) if valid_before is None else valid_before
        result["valid"]["scores_before"] = before
    var_batch = recipe.make_batch(batches[0], recipe._vocab)
    if variance_draws and "first" in variance_at:
        result["variance"]["first"] = gradient_variance(recipe, model, var_batch, variance_draws)
    seed_everything(seed + 1)            # the steps draw the same words whether or not that ran
    for step in range(steps):
        model.train()
        batch = recipe.make_batch(batches[step % n_batches], recipe._vocab)
        draw = recipe.rl_draw(model, batch, greedy_baseline=True)
        adv_g = recipe.rl_advantages(draw, "greedy")
        adv_l = recipe.rl_advantages(draw, "loo") if k >= 2 else None
        adv = adv_l if baseline == "loo" else adv_g
        lp, mask = draw["lp"], draw["mask"]
        rl = self_critical_loss(lp, mask, adv, 0.0, reduction=rl_red)
        mle, mle_stats = recipe.mle_loss(model, batch, mle_red)
        g_rl = _grad(rl, params, retain=False)
        g_mle = _grad(mle, params, retain=False)
        total = gamma * g_rl + (1 - gamma) * g_mle
        n_samples, n_tok = lp.size(0), float(mask.sum())
        n_art, n_ref = batch.tgt_mask.size(0), float(batch.tgt_mask.sum())
        # the norm of each term under the other reduction: a constant factor per batch
        rl_tok = g_rl.norm().item() * (n_samples / n_tok if rl_red == "sequence" else 1.0)
        mle_tok = g_mle.norm().item() * (n_art / n_ref if mle_red == "sequence" else 1.0)
        first = lambda a: a if a.dim() == 1 else a[:, 0]          # noqa: E731  per-sample advantage
        row = {"step": step + 1, "reward_sample": statistics.fmean(draw["r_sample"]),
               "reward_greedy": statistics.fmean(draw["r_greedy"]),
               "pos_greedy": float((first(adv_g) > 0).double().mean()),
               "tie_greedy": float((first(adv_g) == 0).double().mean()),
               "pos_loo": float((first(adv_l) > 0).double().mean()) if adv_l is not None else float("nan"),
               "abs_adv": float(first(adv).abs().double().mean()),
               "g_rl": g_rl.norm().item(), "g_mle": g_mle.norm().item(),
               "g_rl_tok": rl_tok, "g_mle_tok": mle_tok,
               "g_rl_seq": rl_tok * n_tok / n_samples, "g_mle_seq": mle_tok * n_ref / n_art,
               "mle_share": ((1 - gamma) * g_mle.norm().item() / (gamma * g_rl.norm().item())
                             if gamma * g_rl.norm().item() > 0 else float("inf")),
               "cos": float(torch.nn.functional.cosine_similarity(g_rl, g_mle, dim=0)),
               "g_total": total.norm().item(), "clipped": float(total.norm().item() > clip),
               "entropy": float(-(lp.detach() * mask).sum() / max(n_tok, 1.0)),
               "sample_len": n_tok / n_samples - 1, "ref_len": n_ref / n_art - 1, "nll": mle_stats["nll"]}
        result["steps"].append(row)
        # the optimiser step on the mixed gradient, as train.fit takes it
        offset = 0
        for p in params:
            p.grad = total[offset: offset + p.numel()].view_as(p).clone()
            offset += p.numel()
        if clip:
            torch.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if log:
            log(f"  step {step + 1}: " + " ".join(f"{key}={row[key]:.4g}" for key in
                                                   ("reward_sample", "reward_greedy", "pos_greedy", "pos_loo",
                                                    "g_rl_tok", "g_mle_tok", "mle_share", "entropy")))
    if variance_draws and "last" in variance_at:
        result["variance"]["last"] = gradient_variance(recipe, model, var_batch, variance_draws)
    if valid:
        after = greedy_rouge(recipe, model, valid)
        result["valid"].update(scores_after=after, before=statistics.fmean(before), after=statistics.fmean(after),
                               change=_paired(after, before))
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


SUMMARY_KEYS = ["reward_sample", "reward_greedy", "pos_greedy", "tie_greedy", "pos_loo", "abs_adv", "g_rl_tok",
                "g_mle_tok", "g_rl_seq", "g_mle_seq", "mle_share", "cos", "clipped", "entropy", "sample_len"]


def summarise(result: dict) -> dict:
    """Means over all steps, over the first and the last third of the steps."""
    rows = result["steps"]
    third = max(len(rows) // 3, 1)
    mean = lambda rs, key: statistics.fmean(r[key] for r in rs)   # noqa: E731
    return {part: {key: mean(rs, key) for key in SUMMARY_KEYS}
            for part, rs in (("all", rows), ("first", rows[:third]), ("last", rows[-third:]))}


def table(results: list) -> str:
    head = ["config", "R(sample)", "R(greedy)", "pos greedy", "ties greedy", "pos LOO", "|A|", "|g_RL| tok",
            "|g_MLE| tok", "MLE share", "cos", "clipped", "entropy", "len", "valid R-L before -> after (paired s.e.)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for res in results:
        c, s = res["config"], res["summary"]["all"]
        v = res.get("valid") or {}
        valid = (f"{100 * v['before']:.2f} -> {100 * v['after']:.2f} ({100 * v['change']['se']:.2f})"
                 if "after" in v else "")
        lines.append("| " + " | ".join([
            f"{c['reduction']}, gamma {c['gamma']}, {c['baseline']}", f"{s['reward_sample']:.3f}",
            f"{s['reward_greedy']:.3f}", f"{s['pos_greedy']:.2f}", f"{s['tie_greedy']:.2f}", f"{s['pos_loo']:.2f}",
            f"{s['abs_adv']:.3f}", f"{s['g_rl_tok']:.3g}", f"{s['g_mle_tok']:.3g}", f"{s['mle_share']:.3g}",
            f"{s['cos']:.3f}", f"{s['clipped']:.2f}", f"{s['entropy']:.3f}", f"{s['sample_len']:.1f}", valid]) + " |")
    var_lines = []
    for res in results:
        for when, v in res.get("variance", {}).items():
            c = res["config"]
            var_lines.append(f"| {c['reduction']}, gamma {c['gamma']}, {c['baseline']} | {when} ({v['draws']} draws) | "
                             + " | ".join(f"{v[b]['trace_var']:.3g} / {v[b]['proj_var']:.3g} / {v[b]['norm2']:.2g}"
                                          if b in v else ""
                                          for b in ("none", "greedy", "loo")) + " |")
    if var_lines:
        lines += ["", "Variance of the RL gradient estimate (per token) over repeated draws on one batch: "
                      "tr Cov / variance of the projection on the mean gradient / ||E g||^2 (unbiased estimate)", "",
                  "| config | when | no baseline | greedy | leave-one-out |", "|---|---|---|---|---|"] + var_lines
    return "\n".join(lines)


#: notebook 07's MLE model: small enough to train in about a minute on one CPU thread
SMALL = dict(emb_size=32, hidden_size=64, context_layers=1, vocab_size=800, max_src=150, max_tgt=50, max_decode=60,
             epochs=4, lr=3e-3, batch_size=16, beam_size=1)


def train_small_mle(out_dir: Path, n_train: int = 500, seed: int = 0, agents: int = 3) -> dict:
    """An MLE DCA of notebook 07's sizes (:data:`SMALL`) on ``synthnews-long:n_train``, saved in
    ``out_dir`` like a ``train`` run; scored on 20 validation articles (not the test ones)."""

    from dca_course.recipes import DCAConfig, DCARecipe, save_metrics
    from dca_course.registry import load_data

    data = load_data(f"synthnews-long:{n_train}", "fast", seed)
    data = replace(data, test=data.valid[:20])
    recipe = DCARecipe(DCAConfig.from_profile("fast", dict(agents=agents, **SMALL)))
    seed_everything(seed)
    result = recipe.train(data, torch.device("cpu"), out_dir, seed=seed, progress=False)
    save_metrics(out_dir, result)
    return result


def parse_config(text: str) -> tuple:
    reduction, gamma, baseline = text.split(",")
    if reduction not in ("token", "sequence", MIXED) or baseline not in ("greedy", "loo"):
        raise argparse.ArgumentTypeError(f"--config REDUCTION,GAMMA,BASELINE, e.g. token,0.9984,loo; got {text!r}")
    return reduction, float(gamma), baseline


def main(argv=None) -> None:
    from dca_course import configure_process

    configure_process()   # first: PyTorch fixes its CPU kernels at the first tensor operation
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--init", type=Path, required=True,
                    help="a dca run folder (MLE) to start every configuration from")
    ap.add_argument("--train-init", type=int, default=0, metavar="N",
                    help="first train notebook 07's small MLE DCA on synthnews-long:N into --init "
                         "(when it holds no last.pt)")
    ap.add_argument("--config", action="append", type=parse_config, default=None,
                    help="REDUCTION,GAMMA,BASELINE (repeat); default: legacy,0.97,greedy and token,0.9984,loo")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--samples", type=int, default=4, help="K samples per article")
    ap.add_argument("--batch-size", type=int, default=None, help="articles per step (the profile's rl_batch_size)")
    ap.add_argument("--lr", type=float, default=None, help="default: the profile's rl_lr")
    ap.add_argument("--variance-draws", type=int, default=8,
                    help="draws for the variance of the gradient: at the start (the same for every "
                         "configuration, so measured with the first one only) and, with --variance-last, "
                         "after the steps of every configuration")
    ap.add_argument("--variance-last", action="store_true")
    ap.add_argument("--valid", type=int, default=0, help="greedy ROUGE-L of N validation articles before/after")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="JSON file")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)

    from dca_course.recipes import load_run
    from dca_course.registry import load_data

    if args.train_init and not (args.init / "last.pt").is_file():
        started = time.perf_counter()
        print("MLE:", train_small_mle(args.init, args.train_init, args.seed),
              f"({time.perf_counter() - started:.0f} s)", flush=True)
    configs = args.config or [("legacy", 0.97, "greedy"), ("token", 0.9984, "loo")]
    results, valid_before = [], None
    for i, (reduction, gamma, baseline) in enumerate(configs):
        recipe, model, vocab, state = load_run(Path(args.init), torch.device("cpu"))
        recipe.config = replace(recipe.config, rl=True, rl_samples=args.samples,
                                rl_batch_size=args.batch_size or recipe.config.rl_batch_size)
        data = load_data(state["data"], recipe.config.profile, state.get("seed", 0))
        recipe.config = recipe.config.for_data(data)  # decode lengths of the data set
        recipe._vocab = vocab
        train = data.train[: recipe.config.rl_train or len(data.train)]
        print(f"{reduction}, gamma {gamma}, {baseline}: {args.steps} steps", flush=True)
        res = diagnose(recipe, model, train, steps=args.steps, gamma=gamma, reduction=reduction, baseline=baseline,
                       lr=args.lr, seed=args.seed, variance_draws=args.variance_draws,
                       variance_at=(("first",) if i == 0 else ()) + (("last",) if args.variance_last else ()),
                       valid=data.valid[: args.valid] if args.valid else None, valid_before=valid_before, log=print)
        valid_before = res["valid"].get("scores_before")
        res["summary"] = summarise(res)
        print(f"  ({res['seconds']} s)", flush=True)
        results.append(res)
    print()
    print(table(results))
    if args.out:
        meta = {"init": str(args.init), "data": state["data"], "machine": cpu_model(), "torch": torch.__version__,
                "threads": torch.get_num_threads(), "python": platform.python_version()}
        write_result_json(args.out, {"meta": meta, "results": results}, command=command_line(__file__, argv),
                          config=vars(args), measures=["experiments/rl_diagnostics.py", *SUMMARIZER_CODE])
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
