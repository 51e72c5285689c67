"""Pictures of what a model does inside, each paired with a short text summary.

nbval compares a notebook's text outputs, not its images, so every plotting function here
also returns a few lines of text (for example, the most-attended source token for each
output step).  A notebook prints that text for the learner.  What a *trained* model attends
to depends on the machine and the seed, so by default the summary comes in the trained-output
form of :mod:`dca_course.outputs` (every line marked ``≈``, masked by nbval), and the notebook
asserts its qualitative claim separately; pass ``trained_model=False`` for weights that are
the same everywhere (built by hand, or from a fixed seed without training).
"""
from __future__ import annotations

import statistics
from typing import Sequence

import numpy as np

from .outputs import trained_text


def _summary(lines: list[str], trained_model: bool) -> str:
    text = "\n".join(lines)
    return trained_text(text) if trained_model else text


def set_style() -> None:
    """Plot defaults for the course: seaborn's whitegrid, moderate figure size, no clutter."""
    import matplotlib as mpl
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    mpl.rcParams.update({"figure.figsize": (7, 4), "figure.dpi": 80, "axes.titlesize": 12,
                         "svg.hashsalt": "dca-course"})


def _as_array(weights) -> np.ndarray:
    if hasattr(weights, "detach"):
        weights = weights.detach().float().cpu().numpy()
    return np.asarray(weights, dtype=float)


def alignment_summary(weights, src_tokens: Sequence[str], tgt_tokens: Sequence[str],
                      max_rows: int | None = None, *, trained_model: bool = True, first_position: int = 0) -> str:
    """One line per output token: ``output <- most-attended source token @position (weight)``.

    ``first_position`` is the position of ``src_tokens[0]`` in the whole source, for a window
    cut out of it (:func:`attended_window`): the positions printed are the source's."""
    w = _as_array(weights)[: len(tgt_tokens), : len(src_tokens)]
    lines = []
    for i, tok in enumerate(tgt_tokens[: max_rows or len(tgt_tokens)]):
        j = int(w[i].argmax())
        lines.append(f"{tok!r:>12} <- {src_tokens[j]!r} @{j + first_position} ({w[i, j]:.2f})")
    return _summary(lines, trained_model)


def attended_window(weights, width: int = 25) -> tuple[int, int]:
    """``(start, stop)``: the ``width`` consecutive source positions that hold the most attention.

    ``weights`` is (output steps, source length), or one vector (source length,); the mass of a
    window is the attention all the rows pay to it.  Heatmaps of a long source are unreadable
    past some 30 columns: cut them to ``src[start:stop]`` and ``weights[:, start:stop]``.  Ties
    go to the earliest window; a source no longer than ``width`` is kept whole.
    """
    w = _as_array(weights)
    per_position = w.reshape(-1, w.shape[-1]).sum(axis=0)                     # (src_len,)
    start = _heaviest_window(per_position, width)
    return start, min(start + width, per_position.shape[0])


def _heaviest_window(mass: np.ndarray, width: int, near: int | None = None) -> int:
    """The start of the ``width`` consecutive positions with the most ``mass`` (0 if there are no
    more positions than that); of equally heavy windows the earliest, or with ``near`` the one
    centred nearest that position."""
    if mass.shape[0] <= width:
        return 0
    sums = np.convolve(mass, np.ones(width), mode="valid")                    # (n - width + 1,)
    if near is None:
        return int(np.argmax(sums))
    best = np.flatnonzero(sums >= sums.max() * (1 - 1e-9))
    return int(best[np.argmin(np.abs(best + width // 2 - near))])


def attention_heatmap(weights, src_tokens: Sequence[str], tgt_tokens: Sequence[str], *, ax=None,
                      title: str | None = None, cmap: str = "viridis", max_rows: int | None = None,
                      trained_model: bool = True, xlabel: str = "source", first_position: int | None = None,
                      vmax: float | None = None) -> str:
    """Heatmap of attention weights (output steps x source tokens); returns :func:`alignment_summary`.

    ``weights`` is (tgt_len, src_len), rows being output steps; it is cut to the tokens given.
    For a window of a longer source (:func:`attended_window`) pass the window's weights and
    tokens and ``first_position=start``: the ticks then read ``word@position`` (positions in the
    whole source).  ``vmax`` fixes
    the top of the colour scale (to compare several heatmaps; default: the largest weight).
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    w = _as_array(weights)[: len(tgt_tokens), : len(src_tokens)]
    if ax is None:
        _, ax = plt.subplots(figsize=(min(0.35 * len(src_tokens) + 2, 16), min(0.3 * len(tgt_tokens) + 1.5, 12)))
    offset = first_position or 0
    xticks = list(src_tokens) if first_position is None else [f"{t}@{j + offset}" for j, t in enumerate(src_tokens)]
    top = vmax if vmax is not None else max(float(w.max()), 1e-9)
    sns.heatmap(w, ax=ax, cmap=cmap, vmin=0.0, vmax=top, cbar=True,
                xticklabels=xticks, yticklabels=list(tgt_tokens), square=False)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("output")
    ax.tick_params(axis="x", rotation=90)
    ax.tick_params(axis="y", rotation=0)
    if title:
        ax.set_title(title)
    return alignment_summary(w, src_tokens, tgt_tokens, max_rows, trained_model=trained_model,
                             first_position=offset)


def gate_plot(gates: dict, tokens: Sequence[str], *, units: int = 8, axes=None, trained_model: bool = True,
              unit_label: str = "unit", unit_ids: Sequence[int] | None = None) -> str:
    """Heatmaps of GRU gates over time (one per gate, ``units`` hidden units shown).

    ``gates`` maps a name (``"z"``, ``"r"``) to a (time, hidden) array.  Row ``k`` is labelled
    ``f"{unit_label} {unit_ids[k]}"`` (default: ``k``), so that a caller who reorders the units
    (e.g. by how much their gate moves) can label each row with the unit it shows.  Returns, per gate,
    the mean activity and the token where it is lowest (where the unit lets most new input in).
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    names = list(gates)
    if axes is None:
        _, axes = plt.subplots(len(names), 1, figsize=(min(0.35 * len(tokens) + 2, 16), 2.2 * len(names)),
                               squeeze=False)
        axes = axes[:, 0]
    lines = []
    for ax, name in zip(axes, names):
        g = _as_array(gates[name])[: len(tokens)]
        sns.heatmap(g[:, :units].T, ax=ax, cmap="magma", vmin=0, vmax=1, xticklabels=list(tokens),
                    yticklabels=[f"{unit_label} {u if unit_ids is None else int(unit_ids[u])}"
                                 for u in range(min(units, g.shape[1]))])
        ax.set_title(f"gate {name}")
        ax.tick_params(axis="x", rotation=0)
        per_step = g.mean(axis=1)
        t = int(per_step.argmin())
        lines.append(f"gate {name}: mean {g.mean():.2f}, lowest at step {t} ({tokens[t]!r}, {per_step[t]:.2f})")
    return _summary(lines, trained_model)


def line_plot(values: Sequence[float], labels: Sequence[str] | None = None, *, ax=None, title: str = "",
              ylabel: str = "") -> None:
    """A simple line plot of one value per step (p_gen along an output, a loss curve...)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(min(0.35 * len(values) + 3, 16), 3))
    ax.plot(range(len(values)), list(values), marker="o")
    if labels is not None:
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(list(labels), rotation=90)
    ax.set_title(title)
    ax.set_ylabel(ylabel)


def memory_gates_heatmap(gates, facts: Sequence[str], *, supporting: Sequence[int] = (), ax=None,
                         title: str | None = None, max_chars: int = 42, cmap: str = "viridis",
                         trained_model: bool = True) -> str:
    """Heatmap of a memory network's gates, facts (rows) x passes (columns); returns one text
    line per pass: ``pass i -> fact t 'text' (gate)``.

    ``gates`` is (passes, facts) - the gates g^i_t of a Dynamic Memory Network for one story -
    and is cut to the facts given.  Facts listed in ``supporting`` get a ``*`` in their label
    and in the summary, so one can see whether each pass found a supporting fact.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    g = _as_array(gates)[:, : len(facts)]
    marks = ["*" if t in set(supporting) else " " for t in range(len(facts))]
    labels = [f"{m}{t:>2} {f[:max_chars]}" for t, (m, f) in enumerate(zip(marks, facts))]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.1 * g.shape[0] + 4.5, 0.32 * len(facts) + 1.2))
    sns.heatmap(g.T, ax=ax, cmap=cmap, vmin=0.0, vmax=1.0, annot=True, fmt=".2f", cbar=False,
                xticklabels=[f"pass {i + 1}" for i in range(g.shape[0])], yticklabels=labels)
    ax.tick_params(axis="y", rotation=0)
    ax.set_ylabel("fact (* = supporting)")
    if title:
        ax.set_title(title)
    lines = []
    for i in range(g.shape[0]):
        t = int(g[i].argmax())
        lines.append(f"pass {i + 1} -> fact {t}{marks[t].strip()} {facts[t]!r} ({g[i, t]:.2f})")
    return _summary(lines, trained_model)


def agent_attention_heatmaps(agent_attn, word_attn, chunks: Sequence[Sequence[str]], out_words: Sequence[str], *,
                             width: int = 14, axes=None, trained_model: bool = True) -> str:
    """Where a Deep Communicating Agents decoder reads: two heatmaps and a text summary.

    ``agent_attn`` (steps, agents) is g^t, ``word_attn`` (steps, agents, len) is l^t_a, ``chunks``
    the words of each agent, ``out_words`` the output.  Left: g^t, one column per agent.  Right:
    g^t_a l^t_{a,i}, the weight of each source word, shown for a window of ``width`` words of each
    agent's chunk, the one that holds most of that weight (an 800-word article is unreadable
    whole), the agents' windows side by side, separated by white lines and labelled
    ``agent a`` with the words' positions in its chunk.  Empty agents are left out on the right.
    Returns one line per agent: its window, its most-read word and its share of all the weight.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    T = len(out_words)
    g = _as_array(agent_attn)[:T]                                             # (T, M)
    lw = _as_array(word_attn)[:T]                                             # (T, M, len)
    M = g.shape[1]
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(16, min(0.3 * T + 2.0, 12)), gridspec_kw={"width_ratios": [1, 5]})
    total = float(sum((g[:, a:a + 1] * lw[:, a, : len(c)]).sum() for a, c in enumerate(chunks))) or 1.0
    cols, ticks, spans, lines = [], [], [], []
    for a, chunk in enumerate(chunks):
        if not len(chunk):
            lines.append(f"agent {a + 1}: no words")
            continue
        read = g[:, a:a + 1] * lw[:, a, : len(chunk)]                             # (T, len)
        mass = read.sum(axis=0)
        j = int(mass.argmax())
        start = _heaviest_window(mass, width, near=j)       # of equally heavy windows, the one around word j
        stop = min(start + width, len(chunk))
        spans.append((len(ticks), len(ticks) + stop - start, a, start, stop))
        cols.append(read[:, start:stop])
        ticks.extend(chunk[start:stop])
        lines.append(f"agent {a + 1}: words {start}-{stop - 1} of {len(chunk)} shown; most read {chunk[j]!r} "
                     f"@{j}; {mass.sum() / total:.0%} of the weight")
    # g^t gets its own colorbar (0 to 1, a distribution over agents): the right panel's scale is another
    sns.heatmap(g, ax=axes[0], cmap="viridis", vmin=0.0, vmax=1.0, cbar=True, cbar_kws={"label": "$g^t_a$"},
                xticklabels=[f"agent {a + 1}" for a in range(M)], yticklabels=list(out_words))
    axes[0].set_xlabel("agent")
    axes[0].set_ylabel("output")
    axes[0].set_title("agent attention $g^t$")
    axes[0].tick_params(axis="y", rotation=0)
    if cols:
        w = np.concatenate(cols, axis=1)
        sns.heatmap(w, ax=axes[1], cmap="viridis", vmin=0.0, vmax=max(float(w.max()), 1e-9), cbar=True,
                    cbar_kws={"label": "$g^t_a\\, l^t_{a,i}$"}, xticklabels=ticks, yticklabels=list(out_words))
        for lo, hi, a, start, stop in spans:
            if lo:
                axes[1].axvline(lo, color="white", lw=3)
            axes[1].text((lo + hi) / 2, 1.01, f"agent {a + 1}: words {start}-{stop - 1}", ha="center", va="bottom",
                         fontsize=10, transform=axes[1].get_xaxis_transform())
        axes[1].tick_params(axis="x", rotation=90)
        axes[1].tick_params(axis="y", rotation=0)
    axes[1].set_xlabel(f"source words, in each agent the {width}-word window it reads most")
    axes[1].set_ylabel("output")
    axes[1].set_title("$g^t_a\\, l^t_{a,i}$: the weight of each word", pad=26)
    return _summary(lines, trained_model)


def babi_lead_summary(stored: dict, without=(17, 19)) -> str:
    """Where a stored bAbI result's lead over the DMN paper comes from: the mean over all tasks, the
    mean without ``without`` (the relational tasks where the paper's DMN is weakest) and the tasks
    at >= 95%, for the stored model and for Kumar et al.'s DMN (Table 1)."""
    from .data.babi import PAPER_ACCURACY_1K

    ours = {int(t): 100 * a for t, a in stored["per_task"].items()}
    paper = {int(t): a for t, a in PAPER_ACCURACY_1K["DMN"].items()}
    left_out = ", ".join(map(str, without))
    lines = [f"{'':<24}{'mean %':>8}{f'without {left_out}':>16}{'tasks >= 95%':>14}"]
    for name, acc in (("stored model", ours), ("DMN paper (Kumar et al.)", paper)):
        rest = [a for t, a in acc.items() if t not in without]
        lines.append(f"{name:<24}{sum(acc.values()) / len(acc):>8.1f}{sum(rest) / len(rest):>16.1f}"
                     f"{sum(a >= 95 for a in acc.values()):>9} of {len(acc)}")
    return "\n".join(lines)


def pool_wall_seconds(seconds: list[float], workers: int = 2) -> float:
    """The wall time of trainings taking ``seconds`` each when a pool of ``workers`` takes them in
    the order given, each next one going to the first worker free (what ``experiments/babi_rows.py``'s
    process pool does): the time the last one ends."""
    free = [0.0] * workers
    for s in seconds:
        k = free.index(min(free))
        free[k] += s
    return max(free)


#: The order ``experiments/babi_rows.py`` hands a seed's tasks to its pool (its ``TASKS``: longest
#: first, by an earlier run's times; a test keeps the two equal).
BABI_ROWS_ORDER = (3, 2, 5, 8, 7, 18, 6, 14, 13, 11, 12, 20, 10, 9, 1, 15, 16, 19, 17, 4)


def babi_row_seed_minutes(row: dict, workers: int = 2, order: Sequence[int] = BABI_ROWS_ORDER) -> float:
    """The longest seed of a row of ``results/babi_protocol.md``: the minutes its final trainings
    take on ``workers`` one-thread workers, from each training's measured ``train_seconds`` in the
    runner's ``order`` (:func:`pool_wall_seconds`; tasks not in ``order`` come after it).  A run
    that ``babi_rows.py rescore`` trained again counts with the time of the final command's training
    (its ``replaced_run``), like the row's ``train_seconds``.  The issue's budget is one seed of all
    tasks in 40 minutes on 2 cores."""
    runs = row["runs"]
    tasks = [str(t) for t in order if str(t) in runs] + sorted(set(runs) - {str(t) for t in order}, key=int)
    seconds = lambda run: run.get("replaced_run", run)["train_seconds"]     # noqa: E731
    return max(pool_wall_seconds([seconds(runs[t][str(s)]) for t in tasks], workers)
               for s in row["seeds"]) / 60


def babi_row_summary(row: dict) -> str:
    """One row of ``results/babi_protocol.md`` in a sentence, the way the protocol's status and
    notebook 08 quote it: the mean over the tasks (and each seed's), the mean without tasks 17 and
    19, the tasks at >= 95% on their mean over the seeds, the one-thread training hours and the
    minutes of its longest seed on two workers."""
    seeds = [str(s) for s in row["seeds"]]
    per_seed = [statistics.fmean(t["per_seed"][s] for t in row["per_task"].values()) for s in seeds]
    return (f"mean {100 * row['mean']:.1f}% over seeds {', '.join(seeds)} "
            f"({', '.join(f'{100 * m:.1f}' for m in per_seed)}), {100 * row['mean_without_17_19']:.1f}% without "
            f"tasks 17 and 19, {row['tasks_at_95']} of the {len(row['per_task'])} tasks at 95% or more on the mean; "
            f"{row['train_seconds'] / 3600:.1f} h of one-thread training, "
            f"{babi_row_seed_minutes(row):.0f} min for its longest seed on two workers")


def babi_rows_table(stored: dict, without=(17, 19)) -> str:
    """The rows of ``results/babi_protocol.md`` (``stored["rows"]``, written by
    ``experiments/babi_rows.py``: one model per row, settings chosen on held-out stories only)
    beside the papers' 1k figures (Kumar et al. 2016, Table 1): the mean over the tasks, the mean
    without ``without``, the tasks at >= 95%, the hours of one-thread training the row's final
    models took (``train_seconds``; the row's ``provenance`` names the machine) and the minutes its
    longest seed takes on two workers (:func:`babi_row_seed_minutes`).  Says so plainly when no
    row has been run."""
    from .data.babi import PAPER_ACCURACY_1K

    rows = stored.get("rows") or {}
    left_out = ", ".join(map(str, without))
    seeds = {", ".join(map(str, r["seeds"])) for r in rows.values()}
    # the seeds once, in the header, when every row has the same (so that a line fits 120 characters)
    labels = {name: r["name"] + ("" if len(seeds) == 1 else f" (seeds {', '.join(map(str, r['seeds']))})")
              for name, r in rows.items()}
    w = max([48, *(len(label) + 2 for label in labels.values())])
    lines = [f"{f'seeds {seeds.pop()}' if len(seeds) == 1 else '':<{w}}{'mean %':>8}{f'without {left_out}':>16}"
             f"{'tasks >= 95%':>14}{'train h':>9}{'min/seed, 2 cores':>19}"]
    for name in ("dmn", "dmn+", "dmn+ext"):
        if name in rows:
            r = rows[name]
            lines.append(f"{labels[name]:<{w}}{100 * r['mean']:>8.1f}{100 * r['mean_without_17_19']:>16.1f}"
                         f"{r['tasks_at_95']:>9} of {len(r['per_task'])}{r['train_seconds'] / 3600:>9.1f}"
                         f"{babi_row_seed_minutes(r):>19.0f}")
        else:
            lines.append(f"{name + ': not run yet (results/babi_protocol.md)':<{w}}{'-':>8}{'-':>16}{'-':>14}"
                         f"{'-':>9}{'-':>19}")
    for paper, label in (("DMN", "DMN paper (Kumar et al. 2016, Table 1)"), ("MemNN", "MemNN (in the DMN paper's Table 1)")):
        acc = PAPER_ACCURACY_1K[paper]
        rest = [a for t, a in acc.items() if t not in without]
        lines.append(f"{label:<{w}}{sum(acc.values()) / len(acc):>8.1f}{sum(rest) / len(rest):>16.1f}"
                     f"{sum(a >= 95 for a in acc.values()):>9} of {len(acc)}{'-':>9}{'-':>19}")
    return "\n".join(lines)


#: The protocol's steps from the DMN paper's model to this course's, and what each one adds.
BABI_ROW_STEPS = (("dmn", "dmn+", "DMN -> DMN+ (input fusion, softmax attention, ReLU update)"),
                  ("dmn+", "dmn+ext", "DMN+ -> + time features and word match"))


def babi_row_steps(stored: dict, top: int = 3) -> str:
    """What each step between the rows of ``results/babi_protocol.md`` buys (:data:`BABI_ROW_STEPS`):
    the change in the mean over the tasks, the same change seed by seed (each seed's mean of the
    later row minus the same seed's of the earlier: every row trains seeds 0, 1 and 2, so a gain on
    every seed is one that survives a change of seed), and the ``top`` tasks whose mean over the
    seeds changes most.  A step whose rows have not both run says so."""
    rows = stored.get("rows") or {}
    lines = [f"{'step':<60}{'mean':>7}  {'per seed':<22}tasks changed most (points)"]
    for before, after, label in BABI_ROW_STEPS:
        if before not in rows or after not in rows:
            lines.append(f"{label:<60}{'-':>7}  not run yet: {', '.join(r for r in (before, after) if r not in rows)}")
            continue
        a, b = rows[before], rows[after]
        seeds = [str(s) for s in a["seeds"] if s in b["seeds"]]
        tasks = sorted(set(a["per_task"]) & set(b["per_task"]), key=int)

        def seed_mean(row, s):
            return statistics.fmean(row["per_task"][t]["per_seed"][s] for t in tasks)

        per_seed = [100 * (seed_mean(b, s) - seed_mean(a, s)) for s in seeds]
        gain = {t: 100 * (b["per_task"][t]["mean"] - a["per_task"][t]["mean"]) for t in tasks}
        most = sorted(tasks, key=lambda t: (-abs(gain[t]), int(t)))[:top]
        change = 100 * (statistics.fmean(b["per_task"][t]["mean"] for t in tasks)
                        - statistics.fmean(a["per_task"][t]["mean"] for t in tasks))
        lines.append(f"{label:<60}{change:>+7.1f}  {', '.join(f'{g:+.1f}' for g in per_seed):<22}"
                     + ", ".join(f"{t} ({gain[t]:+.1f})" for t in most))
    return "\n".join(lines)


def babi_row_losses(stored: dict, row: str, below: float = 0.95) -> str:
    """Where a row of ``results/babi_protocol.md`` loses: each task whose mean over the seeds is
    under ``below``, beside the DMN paper's figure, with how often each pass's top gate picked its
    supporting fact on the test (``supporting_fact_accuracy_per_pass``, the mean over the seeds; the
    last pass of a question with more supporting facts than passes: any of the facts left over).
    A pass that finds its fact and an answer still wrong point at the answer module; a pass that
    misses it, at the gate."""
    from .data.babi import PAPER_ACCURACY_1K, TASK_NAMES

    r = (stored.get("rows") or {}).get(row)
    if r is None:
        return f"{row}: not run yet (results/babi_protocol.md)"
    lines = [f"{r['name']}: tasks under {100 * below:.0f}% (mean over seeds {', '.join(map(str, r['seeds']))})",
             f"{'task':>4}  {'':<24}{'ours %':>14}{'paper':>7}  supporting fact found, per pass %"]
    for t, v in sorted(r["per_task"].items(), key=lambda kv: int(kv[0])):
        if round(v["mean"], 9) >= below:
            continue
        runs = [r["runs"][t][str(s)] for s in r["seeds"]]
        passes = [res.get("supporting_fact_accuracy_per_pass", []) for res in runs]
        per_pass = [statistics.fmean(p[i] for p in passes) for i in range(min(map(len, passes)))]
        ours = f"{100 * v['mean']:.1f} ± {100 * v['sd']:.1f}"
        lines.append(f"{int(t):>4}  {TASK_NAMES[int(t)][:24]:<24}{ours:>14}{PAPER_ACCURACY_1K['DMN'][int(t)]:>7.1f}  "
                     + " ".join(f"{100 * a:.0f}" for a in per_pass))
    if len(lines) == 2:
        lines.append("      (none)")
    return "\n".join(lines)


def babi_selection_rows(selection: dict) -> list[str]:
    """A row's search on held-out stories (``results/babi_selection.json``, one row's entry) as
    markdown table rows ``| step | point | held-out mean % |``: each (lr, L2, dropout) point where
    its step first trained it, with the held-out mean over the tasks at cap 3 and, in brackets, at
    cap 5 (``results/babi_protocol.md`` quotes them)."""
    import json

    def words(p):
        l2 = f"L2 {p['weight_decay']:g}" if p["weight_decay"] else "no L2"
        dropout = f"dropout {p['dropout']:g}" if p["dropout"] else "no dropout"
        return f"lr {p['lr']:g}, {l2}, {dropout}"

    mean = {json.dumps(p["point"], sort_keys=True): p["held_out_mean"] for p in selection["points"]}
    step_name = {"lr": "learning rate", "weight_decay": "L2", "dropout": "dropout"}
    lines, seen = [], set()
    for step in selection["steps"]:
        for name in step["points"]:
            point = next(p["point"] for p in selection["points"] if _point_name(p["point"]) == name)
            key = words(point)
            if key in seen:
                continue
            seen.add(key)
            caps = [mean[json.dumps(dict(point, max_passes=c), sort_keys=True)] for c in (3, 5)]
            lines.append(f"| {step_name[step['setting']]} | {key} | {100 * caps[0]:.2f} ({100 * caps[1]:.2f}) |")
    return lines


def _point_name(point: dict) -> str:
    # experiments/babi_rows.py's point_name, in its grid's order (a stored point's keys are sorted)
    return "_".join(f"{k}{point[k]:g}" for k in ("lr", "weight_decay", "dropout", "max_passes"))


def babi_results_table(stored: dict) -> str:
    """The per-task table of a stored ``experiments/babi_real.py`` result beside the papers' figures
    (Kumar et al. 2016, Table 1: the DMN and MemNN on the 1k tasks), with its mean and pass count.
    Stored results are data, printed plainly: the same text on every machine."""
    from .data.babi import PAPER_ACCURACY_1K, TASK_NAMES

    dmn, memnn = PAPER_ACCURACY_1K["DMN"], PAPER_ACCURACY_1K["MemNN"]
    spread = stored.get("per_task_per_seed", {})
    lines = [f"{'task':>4}  {'':<26}{'ours %':>14}{'DMN paper':>11}{'MemNN':>7}{'sup. facts %':>14}"]
    for t in sorted(stored["per_task"], key=int):
        seeds = list(spread.get(t, {}).values())
        ours = f"{100 * stored['per_task'][t]:.1f}"
        if len(seeds) > 1:
            ours += f" ± {100 * statistics.stdev(seeds):.1f}"
        flag = " *" if 100 * stored["per_task"][t] < dmn[int(t)] - 3 else ""
        lines.append(f"{t:>4}  {TASK_NAMES[int(t)].split('_', 1)[1]:<26}{ours:>14}{dmn[int(t)]:>11.1f}"
                     f"{memnn[int(t)]:>7.0f}{100 * stored['supporting_fact_accuracy'][t]:>14.1f}{flag}")
    mean_dmn = sum(dmn.values()) / len(dmn)
    mean_memnn = sum(memnn.values()) / len(memnn)
    at_95 = sum(a >= 0.95 for a in stored["per_task"].values())
    lines.append(f"{'mean':>4}  {'':<26}{100 * stored['mean_accuracy']:>14.1f}{mean_dmn:>11.1f}{mean_memnn:>7.1f}")
    lines.append(f"tasks at >= 95%: {at_95} of {len(stored['per_task'])}; * more than 3 points under the DMN paper")
    return "\n".join(lines)


def diagram(name: str, *, ax=None):
    """A picture of the model ``name`` ("gru", "seq2seq", "dmn", "copynet", "pointer-generator", "dca",
    "self-critical", "lineage") in its notebook's symbols; returns the figure (see :mod:`.diagrams`)."""
    from .diagrams import diagram as draw

    return draw(name, ax=ax)
