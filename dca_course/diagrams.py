"""Diagrams of the course's models, drawn with matplotlib boxes and arrows: ``viz.diagram(NAME)``.

Each diagram uses the symbols of its notebook and one colour per role across the whole course
(:data:`PALETTE`): every box carries its role in its ``gid`` (``"role:attention"``), so that a test can
check that a role looks the same everywhere.  The canvas is in inches (the axes fill the figure, one
data unit per inch), so positions and label sizes read the same in every diagram.
"""
from __future__ import annotations

from dataclasses import dataclass

#: role -> (fill, edge).  One colour per role in every diagram of the course.
PALETTE = {
    "input": ("#dbe8f6", "#3f6fa8"),
    "state": ("#dcefd5", "#467f35"),
    "attention": ("#fde6c3", "#c67c12"),
    "copy": ("#e8dcf4", "#7a4fa3"),
    "output": ("#f8d9d9", "#b0393c"),
    "loss": ("#e4e4e4", "#555555"),
}
ROLE_NAMES = {"input": "input", "state": "recurrent state", "attention": "attention",
              "copy": "copy / pointer", "output": "output", "loss": "loss"}
OP = ("#ffffff", "#444444")          # the small operator nodes (+, the elementwise product, 1 -): no role
INK = "#333333"
BOX_SIZE = 10.5                      # points: box labels
ARROW_SIZE = 10.5                    # points: the symbols on the arrows


@dataclass(frozen=True)
class Box:
    """A drawn box: centre ``(x, y)``, width and height, in inches; ``n``/``s``/``e``/``w_`` are the
    middles of its sides, shifted along the side by ``d``."""
    x: float
    y: float
    w: float
    h: float

    def n(self, d: float = 0.0):
        return (self.x + d, self.y + self.h / 2)

    def s(self, d: float = 0.0):
        return (self.x + d, self.y - self.h / 2)

    def e(self, d: float = 0.0):
        return (self.x + self.w / 2, self.y + d)

    def w_(self, d: float = 0.0):
        return (self.x - self.w / 2, self.y + d)


def canvas(width: float, height: float, ax=None, legend_strip: float = 0.45):
    """An empty drawing area ``width`` x ``height`` inches, plus a strip below it for the legend."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(width, height + legend_strip))
        fig.subplots_adjust(left=0, right=1, bottom=0, top=1)
    ax.set_xlim(0, width)
    ax.set_ylim(-legend_strip, height)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def box(ax, x, y, text, role, w=1.4, h=0.6, *, size=BOX_SIZE, container=False) -> Box:
    """A box of ``role`` centred at ``(x, y)``; a ``container`` (drawn behind) has its text at the top."""
    from matplotlib.patches import FancyBboxPatch

    fill, edge = OP if role == "op" else PALETTE[role]
    style = "circle,pad=0" if role == "op" else "round,pad=0,rounding_size=0.08"
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle=style, facecolor=fill, edgecolor=edge,
                                linewidth=1.3, zorder=0.5 if container else 2,
                                gid=f"role:{role}" + (":container" if container else "")))
    if text:
        ty, va = (y + h / 2 - 0.1, "top") if container else (y, "center")
        ax.text(x, ty, text, ha="center", va=va, fontsize=size, zorder=3, gid="box-label", linespacing=1.5)
    return Box(x, y, w, h)


def group(ax, x, y, w, h, title) -> Box:
    """A dashed outline around several boxes (one agent), its title top left; no role of its own."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.12",
                                facecolor="none", edgecolor="#8a8a8a", linewidth=1.1, linestyle=(0, (4, 3)),
                                zorder=0.4, gid="group"))
    ax.text(x - w / 2 + 0.1, y + h / 2 - 0.08, title, ha="left", va="top", fontsize=10, fontweight="bold", zorder=3,
            color="#555555", gid="box-label")
    return Box(x, y, w, h)


def op(ax, x, y, text, r=0.17) -> Box:
    """A small round operator node (+, the elementwise product, 1 -)."""
    return box(ax, x, y, text, "op", w=2 * r, h=2 * r, size=11)


def _label(ax, at, text, ha="center"):
    ax.text(at[0], at[1], text, ha=ha, va="center", fontsize=ARROW_SIZE, zorder=4, gid="arrow-label",
            bbox=dict(boxstyle="round,pad=0.08", facecolor="white", edgecolor="none"))


def arrow(ax, start, end, label=None, at=None, *, rad=0.0, dashed=False, both=False, ha="center"):
    """A straight (or, with ``rad``, curved) arrow with ``label`` at ``at`` (default: its middle)."""
    path(ax, [start, end], label, at, rad=rad, dashed=dashed, both=both, ha=ha)


def path(ax, points, label=None, at=None, *, rad=0.0, dashed=False, both=False, ha="center", head=True):
    """An arrow along the corners ``points`` (its head at the last), ``label`` at ``at``."""
    from matplotlib.patches import FancyArrowPatch

    style = (0, (4, 3)) if dashed else "-"
    xs, ys = zip(*points[:-1])
    if len(points) > 2:
        ax.plot(xs, ys, color=INK, linewidth=1.3, linestyle=style, zorder=1, solid_capstyle="butt")
    if head:
        head = ax.add_patch(FancyArrowPatch(points[-2], points[-1], arrowstyle="<|-|>" if both else "-|>",
                                            mutation_scale=13, connectionstyle=f"arc3,rad={rad}", color=INK,
                                            linewidth=1.3, shrinkA=0, shrinkB=0, linestyle=style, zorder=1,
                                            gid="arrow"))
        head.heads = [points[-1]] + ([points[-2]] if both else [])     # where it points: a test checks a box is there
    else:
        ax.plot(*zip(*points[-2:]), color=INK, linewidth=1.3, linestyle=style, zorder=1)
    if label:
        mid = ((points[0][0] + points[-1][0]) / 2, (points[0][1] + points[-1][1]) / 2)
        _label(ax, at if at is not None else mid, label, ha)


def note(ax, x, y, text, *, ha="center", size=9.5):
    """A caption inside the drawing (neither a box nor an arrow's symbol)."""
    ax.text(x, y, text, ha=ha, va="center", fontsize=size, color="#555555", style="italic", zorder=3, gid="note")


def legend(ax, roles) -> None:
    """One row under the drawing: the colour of each role the diagram uses."""
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=PALETTE[r][0], edgecolor=PALETTE[r][1], label=ROLE_NAMES[r]) for r in roles]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=len(handles), frameon=False,
              fontsize=9.5, handlelength=1.6, columnspacing=1.6, borderaxespad=0.1)


# -- the diagrams: one function each, coordinates in inches ----------------------------------------

def gru(ax=None):
    """Cho et al. 2014's GRU cell, eqs. (5)-(8) of notebook 01."""
    ax = canvas(9.6, 4.5, ax)
    rail = 3.7
    h0 = box(ax, 0.65, rail, "$h_{t-1}$", "state", w=0.9, h=0.55)
    x = box(ax, 0.65, 0.5, "$x_t$", "input", w=0.9, h=0.55)
    z = box(ax, 2.3, 1.65, "update gate\n$z_t = \\sigma(\\cdot)$", "state", w=1.5, h=0.8)
    r = box(ax, 4.3, 1.65, "reset gate\n$r_t = \\sigma(\\cdot)$", "state", w=1.5, h=0.8)
    c = box(ax, 6.4, 1.65, "candidate\n$\\tilde h_t = \\tanh(\\cdot)$", "state", w=1.7, h=0.8)
    rh, keep, one = op(ax, 6.0, 2.75, "$\\odot$"), op(ax, 7.45, rail, "$\\odot$"), op(ax, 7.45, 2.6, "$1-$")
    new, plus = op(ax, 8.25, 2.6, "$\\odot$"), op(ax, 8.25, rail, "$+$")
    ht = box(ax, 9.1, rail, "$h_t$", "state", w=0.7, h=0.55)
    arrow(ax, h0.e(), keep.w_(), "$h_{t-1}$", at=(5.0, rail))
    for target in (z.n(-0.4), r.n(-0.4), rh.n()):
        arrow(ax, (target[0], rail), target)
    for gate in (z, r, c):
        path(ax, [x.e(), (gate.x, x.y), gate.s()])
    _label(ax, (3.3, x.y), "$x_t$")
    path(ax, [z.n(0.4), (2.7, 3.2), (keep.x, 3.2), keep.s()], "$z_t$", at=(3.3, 3.2))
    arrow(ax, (keep.x, 3.2), one.n())
    path(ax, [r.n(0.4), (4.7, rh.y), rh.w_()], "$r_t$", at=(5.25, rh.y))
    arrow(ax, rh.s(), c.n(-0.4))
    path(ax, [c.e(), (new.x, c.y), new.s()], "$\\tilde h_t$", at=(7.8, c.y))
    arrow(ax, one.e(), new.w_())
    arrow(ax, keep.e(), plus.w_())
    arrow(ax, new.n(), plus.s())
    arrow(ax, plus.e(), ht.w_())
    note(ax, 4.4, 4.25, "$h_t = z_t \\odot h_{t-1} + (1 - z_t) \\odot \\tilde h_t$   (eq. 7)", size=10.5)
    legend(ax, ["input", "state"])
    return ax.figure


def seq2seq(ax=None):
    """Bahdanau et al. 2015: a bidirectional encoder, additive attention, a GRU decoder (notebook 02)."""
    ax = canvas(9.6, 5.1, ax)
    hs = []
    for x, i in zip((0.8, 2.0, 3.2, 4.4), ("1", "2", "", "T_x")):
        w = box(ax, x, 0.85, f"$x_{{{i}}}$" if i else "$\\dots$", "input", w=0.8, h=0.5)
        hs.append(box(ax, x, 2.0, f"$h_{{{i}}}$" if i else "$\\dots$", "state", w=0.8, h=0.6))
        arrow(ax, w.n(), hs[-1].s())
    for a, b in zip(hs, hs[1:]):
        arrow(ax, a.e(0.13), b.w_(0.13))
        arrow(ax, b.w_(-0.13), a.e(-0.13))
    note(ax, 2.6, 0.2, "bidirectional encoder: $h_j = [\\overrightarrow{h}_j; \\overleftarrow{h}_j]$")
    att = box(ax, 2.6, 3.35, "attention  $e_{ij} = a(s_{i-1}, h_j)$\n$\\alpha_{ij} = \\mathrm{softmax}_j(e_{ij})$",
              "attention", w=3.6, h=0.8)
    for h in hs:
        arrow(ax, h.n(), att.s(0.55 * (h.x - att.x)))
    _label(ax, (0.72, 2.62), "$h_j$")
    ctx = box(ax, 2.6, 4.65, "context  $c_i = \\Sigma_j\\, \\alpha_{ij} h_j$", "attention", w=2.9, h=0.55)
    arrow(ax, att.n(), ctx.s(), "$\\alpha_{ij}$")
    prev = box(ax, 6.1, 3.35, "decoder\n$s_{i-1}$", "state", w=1.1, h=0.75)
    cur = box(ax, 8.35, 3.35, "decoder\n$s_i$", "state", w=1.1, h=0.75)
    yin = box(ax, 8.35, 2.0, "$y_{i-1}$", "input", w=0.8, h=0.5)
    out = box(ax, 8.8, 4.65, "output $y_i$", "output", w=0.95, h=0.55)
    arrow(ax, prev.w_(), att.e(), "$s_{i-1}$")
    arrow(ax, prev.e(), cur.w_(), "$f$")
    arrow(ax, yin.n(), cur.s())
    path(ax, [ctx.e(), (8.05, ctx.y), cur.n(-0.3)], "$c_i$", at=(6.0, ctx.y))
    arrow(ax, cur.n(0.45), out.s(), "$g$", at=(9.0, 4.05), ha="left")
    legend(ax, ["input", "state", "attention", "output"])
    return ax.figure


def dmn(ax=None):
    """Kumar et al. 2016's four modules, and the episodic memory's passes (notebook 03)."""
    ax = canvas(10.0, 5.3, ax)
    que = box(ax, 1.9, 0.55, "question module\n$q$: a GRU over the question", "input", w=2.9, h=0.75)
    inp = box(ax, 6.2, 0.55, "input module\nfacts $c_t$: a GRU over the story", "input", w=3.4, h=0.75)
    box(ax, 5.0, 2.7, "episodic memory module: passes $i = 1, \\dots, T_M$", "state", w=8.8, h=2.4, size=10,
        container=True)
    gate = box(ax, 2.2, 2.45, "attention gates\n$g^i_t = G(c_t, m^{i-1}, q)$", "attention", w=2.5, h=0.8)
    epi = box(ax, 5.25, 2.45, "episode\n$e^i$: a gated GRU", "state", w=1.9, h=0.8)
    mem = box(ax, 8.0, 2.45, "memory\n$m^i = \\mathrm{GRU}(e^i, m^{i-1})$", "state", w=2.3, h=0.8)
    ans = box(ax, 4.9, 4.75, "answer module  $a_t = \\mathrm{GRU}([y_{t-1}; q], a_{t-1})$,  $a_0 = m^{T_M}$\n"
              "$y_t = \\mathrm{softmax}(W^{(a)} a_t)$", "output", w=7.0, h=0.8)
    out = box(ax, 9.35, 4.75, "$y_t$", "output", w=0.8, h=0.55)
    arrow(ax, que.n(0.3), gate.s(), "$q$", at=(2.2, 1.7))
    path(ax, [inp.n(-1.2), (5.0, 1.2), (3.0, 1.2), gate.s(0.8)], "$c_t$", at=(4.0, 1.2))
    arrow(ax, inp.n(-0.95), epi.s(), "$c_t$", at=(5.25, 1.75))
    arrow(ax, gate.e(), epi.w_(), "$g^i_t$", at=((gate.e()[0] + epi.w_()[0]) / 2, gate.y + 0.22))
    arrow(ax, epi.e(), mem.w_(), "$e^i$", at=((epi.e()[0] + mem.w_()[0]) / 2, epi.y + 0.22))
    path(ax, [mem.n(-0.6), (7.4, 3.3), (gate.x, 3.3), gate.n()], "$m^{i-1}$: the next pass", at=(4.8, 3.3),
         dashed=True)
    arrow(ax, mem.n(0.2), (8.2, ans.y - 0.4), "$m^{T_M}$", at=(8.2, 4.08))
    path(ax, [que.w_(), (0.2, que.y), (0.2, ans.y), ans.w_()], "$q$", at=(0.2, 4.1))
    arrow(ax, ans.e(), out.w_())
    legend(ax, ["input", "state", "attention", "output"])
    return ax.figure


def copynet(ax=None):
    """Gu et al. 2016: generate and copy modes in one softmax, and the selective read (notebook 04)."""
    ax = canvas(9.7, 4.8, ax)
    src = box(ax, 1.1, 0.5, "source $x_1, \\dots, x_{T_S}$", "input", w=2.0, h=0.55)
    mem = box(ax, 1.1, 1.95, "encoder memory\n$\\mathbf{M} = \\{h_j\\}$", "state", w=2.0, h=0.8)
    dec = box(ax, 3.9, 1.95, "decoder\n$s_t$", "state", w=1.2, h=0.8)
    yin = box(ax, 3.9, 0.5, "$y_{t-1}$", "input", w=0.9, h=0.55)
    sel = box(ax, 3.9, 3.4, "selective read\n$\\zeta(y_{t-1})$", "copy", w=1.7, h=0.8)
    cop = box(ax, 6.9, 3.4, "copy mode\n$\\psi_c(x_j) = \\sigma(h_j^\\top \\mathbf{W}_c)\\, s_t$", "copy", w=2.4, h=0.8)
    gen = box(ax, 6.9, 0.95, "generate mode\n$\\psi_g(v_i) = \\mathbf{v}_i^\\top \\mathbf{W}_o s_t$", "output",
              w=2.4, h=0.8)
    soft = box(ax, 9.0, 2.15, "one softmax\nshared $Z$\n$p(y_t \\mid \\cdot)$", "output", w=1.2, h=1.3)
    arrow(ax, src.n(), mem.s())
    arrow(ax, mem.e(), dec.w_(), "$c_t$")
    arrow(ax, yin.n(), dec.s())
    path(ax, [mem.n(), (mem.x, 4.45), (cop.x, 4.45), cop.n()], "$h_j$", at=(2.5, 4.45))
    arrow(ax, (sel.x, 4.45), sel.n())
    arrow(ax, sel.s(), dec.n(), "$\\zeta(y_{t-1})$")
    path(ax, [dec.e(), (5.85, dec.y)], "$s_t$", at=(5.15, dec.y), head=False)
    arrow(ax, (5.85, dec.y), cop.s(-1.05))
    arrow(ax, (5.85, dec.y), gen.n(-1.05))
    arrow(ax, cop.w_(), sel.e(), "$\\rho_{tj}$", dashed=True)
    path(ax, [gen.e(), (soft.x, gen.y), soft.s()], "$e^{\\psi_g}$", at=(8.5, gen.y))
    path(ax, [cop.e(), (soft.x, cop.y), soft.n()], "$e^{\\psi_c}$", at=(8.5, cop.y))
    legend(ax, ["input", "state", "copy", "output"])
    return ax.figure


def pointer_generator(ax=None):
    """See et al. 2017: attention, the switch p_gen, the extended vocabulary and coverage (notebook 05)."""
    ax = canvas(9.8, 5.2, ax)
    enc = box(ax, 1.3, 0.5, "encoder states $h_i$", "state", w=2.2, h=0.55)
    cov = box(ax, 3.95, 0.5, "coverage\n$c^t = \\Sigma_{t' < t}\\, a^{t'}$", "attention", w=2.1, h=0.8)
    dec = box(ax, 7.9, 0.5, "decoder state $s_t$", "state", w=2.0, h=0.55)
    att = box(ax, 3.0, 1.95, "attention  $a^t = \\mathrm{softmax}(e^t)$\n"
              "$e^t_i = v^\\top \\tanh(W_h h_i + W_s s_t + w_c c^t_i + b_{attn})$", "attention", w=5.0, h=0.8)
    ctx = box(ax, 3.2, 3.25, "context vector  $h^*_t = \\Sigma_i\\, a^t_i h_i$", "attention", w=3.4, h=0.55)
    voc = box(ax, 7.6, 3.25, "vocabulary distribution\n$P_{vocab}$", "output", w=2.3, h=0.8)
    pg = box(ax, 7.6, 1.95, "switch  $p_{gen} = \\sigma(\\cdot)$", "copy", w=2.3, h=0.55)
    fin = box(ax, 4.85, 4.65, "final distribution over the extended vocabulary\n"
              "$P(w) = p_{gen} P_{vocab}(w) + (1 - p_{gen})\\, \\Sigma_{i: w_i = w}\\, a^t_i$", "output",
              w=8.7, h=0.8)
    arrow(ax, enc.n(), att.s(-1.7), "$h_i$")
    arrow(ax, cov.n(-0.45), att.s(0.5), "$c^t$")
    arrow(ax, att.s(1.6), cov.n(0.65), "$a^t$", dashed=True)
    path(ax, [dec.w_(), (5.25, dec.y), att.s(2.25)], "$s_t$", at=(6.05, dec.y))
    arrow(ax, dec.n(0.4), pg.s(0.7), "$s_t$")
    arrow(ax, att.n(0.2), ctx.s(), "$a^t$")
    arrow(ax, att.n(-2.0), fin.s(-3.85), "$a^t$")
    arrow(ax, ctx.e(), voc.w_(), "$h^*_t$", at=(5.35, ctx.y))
    path(ax, [(5.9, ctx.y), (5.9, pg.y), pg.w_()])
    arrow(ax, voc.n(), fin.s(2.75), "$P_{vocab}$", at=(7.7, 3.95), ha="left")
    path(ax, [pg.e(), (9.5, pg.y), (9.5, fin.y), fin.e()], "$p_{gen}$", at=(9.5, 3.25))
    legend(ax, ["state", "attention", "copy", "output"])
    return ax.figure


def dca(ax=None):
    """Celikyilmaz et al. 2018: agents, messages, word and agent attention, a pointer (notebook 06)."""
    ax = canvas(10.2, 6.25, ax)
    cols = [(1.2, "1"), (3.5, "a"), (5.8, "M")]
    layers, words = [], []
    for x, a in cols:
        group(ax, x, 2.6, 2.0, 5.1, f"agent ${a}$")
        para = box(ax, x, 0.45, f"paragraph: $w_{{{a},i}}$", "input", w=1.6, h=0.5)
        layers.append(box(ax, x, 1.65, "bLSTM layer 1\n$h^{(1)}_{" + a + ",i}$", "state", w=1.5, h=0.75))
        top = box(ax, x, 2.95, "layer $K$\n$h^{(K)}_{" + a + ",i}$", "state", w=1.5, h=0.75)
        words.append(box(ax, x, 4.4, f"word attention\n$l^t_{a}$", "attention", w=1.5, h=0.65))
        arrow(ax, para.n(), layers[-1].s())
        arrow(ax, layers[-1].n(), top.s(), "$f(h^{(k)}, z^{(k)})$")
        arrow(ax, top.n(), words[-1].s())
    for a, b in zip(layers, layers[1:]):
        arrow(ax, a.e(), b.w_(), "$z^{(k)}$", both=True)
    dec = box(ax, 8.6, 3.7, "decoder\n$s_t$", "state", w=1.3, h=0.75)
    yin = box(ax, 8.6, 2.3, "$y_{t-1}$", "input", w=0.9, h=0.5)
    path(ax, [dec.w_(), (words[0].x + 0.45, dec.y)], "$s_t$", at=(7.35, dec.y), head=False)
    for w in words:
        arrow(ax, (w.x + 0.45, dec.y), w.s(0.45))
    agent = box(ax, 3.5, 5.8, "agent attention  $g^t$,  $c^*_t = \\Sigma_a\\, g^t_a c^t_a$", "attention",
                w=5.6, h=0.6)
    for w, (_, a) in zip(words, cols):
        start, end = w.n(0.2), agent.s(0.2 + 0.75 * (w.x - agent.x))
        arrow(ax, start, end, f"$c^t_{a}$", at=((start[0] + end[0]) / 2 + 0.12, 5.12), ha="left")
    ptr = box(ax, 8.6, 5.8, "pointer per agent $p^a_t$\n$P(w) = \\Sigma_a\\, g^t_a P^a(w)$", "copy", w=2.5, h=0.8)
    arrow(ax, yin.n(), dec.s())
    arrow(ax, agent.e(), ptr.w_(), "$c^*_t$")
    arrow(ax, dec.n(), ptr.s(), "$s_t$")
    legend(ax, ["input", "state", "attention", "copy"])
    return ax.figure


def self_critical(ax=None):
    """Rennie et al. 2017, Paulus et al. 2017: the self-critical loss, mixed with MLE (notebook 07)."""
    ax = canvas(9.8, 4.75, ax)
    x = box(ax, 0.65, 2.3, "article\n$x$", "input", w=1.0, h=0.8)
    model = box(ax, 2.5, 2.3, "summarizer\n$p_\\theta$", "state", w=1.5, h=0.8)
    samp = box(ax, 4.4, 3.6, "sample\n$\\tilde y \\sim p_\\theta$", "output", w=1.5, h=0.8)
    greedy = box(ax, 4.4, 1.0, "greedy\n$\\hat y = \\arg\\max$", "output", w=1.5, h=0.8)
    rs = box(ax, 6.65, 3.6, "$r(\\tilde y)$: ROUGE", "loss", w=1.5, h=0.55)
    rg = box(ax, 6.65, 1.0, "$r(\\hat y)$: ROUGE", "loss", w=1.5, h=0.55)
    rl = box(ax, 6.5, 2.3, "self-critical loss $L_{RL}$\n"
             "$-(r(\\tilde y) - r(\\hat y))\\, \\Sigma_t \\log p(\\tilde y_t \\mid \\cdot)$", "loss", w=2.8, h=0.8)
    mix = box(ax, 9.05, 2.3, "$L_{MIXED}$\n$= \\gamma L_{RL}$\n$+ (1 - \\gamma) L_{MLE}$", "loss", w=1.3, h=1.2)
    mle = box(ax, 9.05, 0.5, "$L_{MLE}$ on $y^*$", "loss", w=1.3, h=0.55)
    arrow(ax, x.e(), model.w_())
    path(ax, [model.n(0.3), (2.8, samp.y), samp.w_()])
    path(ax, [model.s(0.3), (2.8, greedy.y), greedy.w_()])
    arrow(ax, samp.e(), rs.w_(), "$\\tilde y$")
    arrow(ax, greedy.e(), rg.w_(), "$\\hat y$")
    arrow(ax, rs.s(), rl.n(0.1), "reward")
    arrow(ax, rg.n(), rl.s(0.1), "baseline")
    arrow(ax, rl.e(), mix.w_(), "$\\gamma$", at=(8.15, 2.53))
    arrow(ax, mle.n(), mix.s(), "$1 - \\gamma$")
    path(ax, [mix.n(), (mix.x, 4.45), (2.0, 4.45), model.n(-0.5)], "$\\nabla_\\theta L_{MIXED}$: update $p_\\theta$",
         at=(6.0, 4.45), dashed=True)
    legend(ax, ["input", "state", "output", "loss"])
    return ax.figure


LINEAGE = [  # (year, paper, what it solved, notebook, the role its idea plays in the diagrams)
    ("2014", "GRU · Cho et al.", "gates keep a memory", "01", "state"),
    ("2015", "attention · Bahdanau et al.", "no fixed-length bottleneck", "02", "attention"),
    ("2016", "DMN · Kumar et al.\n(DMN+ · Xiong et al.)", "reasoning over facts in passes", "03", "state"),
    ("2016", "CopyNet · Gu et al.", "copying unknown words", "04", "copy"),
    ("2017", "pointer-generator · See et al.", "copying, and repetition", "05", "copy"),
    ("2017", "self-critical · Rennie; Paulus", "training on ROUGE itself", "07", "loss"),
    ("2018", "DCA · Celikyilmaz et al.", "long inputs: agents that talk", "06", "attention"),
]


def lineage(ax=None):
    """The course's papers on a timeline, each with what it solved and its notebook."""
    ax = canvas(10.6, 3.9, ax)
    axis, h = 1.95, 1.3
    ax.plot([0.15, 10.45], [axis, axis], color=INK, linewidth=1.5, zorder=1)
    for i, (year, paper, solved, nb, role) in enumerate(LINEAGE):
        x, up = 1.35 + 1.3 * i, i % 2 == 0
        b = box(ax, x, 3.85 - h / 2 if up else 0.05 + h / 2, None, role, w=2.45, h=h)
        ax.text(x, b.y + 0.12, paper, ha="center", va="bottom", fontsize=9.5, fontweight="bold", zorder=3,
                gid="box-label", linespacing=1.3)
        ax.text(x, b.y + 0.06, f"{solved}\nnotebook {nb}", ha="center", va="top", fontsize=9.5, zorder=3,
                gid="box-label", linespacing=1.4)
        ax.plot([x, x], [axis, b.s()[1] if up else b.n()[1]], color=INK, linewidth=1.0, zorder=0.5)
        ax.plot([x], [axis], "o", color=INK, markersize=5, zorder=2)
        ax.text(x + 0.08, axis + (-0.2 if up else 0.2), year, ha="left", va="center", fontsize=10,
                fontweight="bold", gid="note")
    legend(ax, ["state", "attention", "copy", "loss"])
    return ax.figure


DIAGRAMS = {"gru": gru, "seq2seq": seq2seq, "dmn": dmn, "copynet": copynet, "pointer-generator": pointer_generator,
            "dca": dca, "self-critical": self_critical, "lineage": lineage}


def diagram(name: str, *, ax=None):
    """Draw the diagram ``name`` (one of :data:`DIAGRAMS`) and return its figure; prints nothing."""
    if name not in DIAGRAMS:
        raise ValueError(f"unknown diagram {name!r}; choose one of: {', '.join(DIAGRAMS)}")
    return DIAGRAMS[name](ax)
