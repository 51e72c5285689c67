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


def diagram(name: str, *, ax=None):
    """A picture of the model ``name`` ("gru", "seq2seq", "dmn", "copynet", "pointer-generator", "dca",
    "self-critical", "lineage") in its notebook's symbols; returns the figure (see :mod:`.diagrams`)."""
    from .diagrams import diagram as draw

    return draw(name, ax=ax)
