"""Notebook 07, issue 33 item 4: reward hacking, named and measured; long markdown cells cut into steps.

    python tools/patches/nb07_reward_hacking.py notebooks/07_reinforcement_learning.ipynb

Edits the notebook in place (nbformat), finding every cell by a text anchor, never by its index, so that it
applies on top of other edits of the same notebook. What it does:

* section 2 ("What the reward sees"): after the reading of the candidates' scores ("This is what the model will
  optimise."), a markdown cell that names reward hacking, a code cell that scores word salad built from the same
  reference (deterministic) with the three signs of broken grammar of ``dca_course.metrics``, and a markdown cell
  reading it;
* the long markdown cell that held the end of section 2 and all of section 3 is cut at "## 3.", "**The effective
  weighting.**" and "The DCA paper adds"; the code cell of section 3 is cut in two (reductions and weights; L_SEM
  and eq. 16), and the reading of the weights table ("Reduced alike, ...") moves beside its code, cut from "## 4.";
* the aside "(This notebook did that before, at gamma = 0.97.)" becomes a pointer to exercise 3, and exercise 3
  ("The old mix", "this notebook's earlier loss") says what the loss is instead of when it was used;
* section 7's reading is cut at "Why the greedy summaries gain less" and "## 8."; section 8's at "**RL is
  fragile.**" and "## 9."; after its first paragraph, "Reward hacking, measured": a markdown cell, a code cell
  counting the signs of broken grammar in the test summaries (greedy and sampled, each model, the references as
  the yardstick) with its claims, and a markdown cell on what Paulus et al. and Celikyilmaz et al. did about it;
* the Summary is cut from the Exercises and gains a bullet on reward hacking.

Every anchor must be found (else it stops, naming it, and writes nothing); run twice, the second run changes
nothing. The notebook must then be executed top to bottom again (its new cells have no outputs).
"""
from __future__ import annotations

import hashlib
import sys

import nbformat

# ---------------------------------------------------------------------------------------------------------------
# New cells
# ---------------------------------------------------------------------------------------------------------------
HACK_INTRO = r"""**Reward hacking.** A model trained to raise a number learns whatever raises the number, wanted or not: this
is *reward hacking* (also called specification gaming). ROUGE counts shared words and one common subsequence; it
never asks whether the words make a sentence. The cell below scores, against the same reference, summaries no
reader would accept (its content words with the verbs left out, its words shuffled, some words stuttered) beside
the correct paraphrase, and marks each with the three signs of broken grammar that section 8 counts in RL's
output: a bigram written twice (`metrics.has_repeated_ngram`), a word twice in a row (`metrics.has_stutter`),
and a sentence with no verb (`metrics.verbless_sentences` against `VERBS`, the closed list of verb forms that
SynthNews's templates write, from `dca_course.data.synthnews`)."""

HACK_SALAD = r'''import random

from dca_course.data.synthnews import VERBS

shuffled = reference.split()
random.Random(0).shuffle(shuffled)                                      # a fixed shuffle: the same on every seed
salads = {
    "same facts, other words": candidates["same facts, other words"],
    "content words, no verb": "kolvar united trinsby city 3 - 1 saturday . coach ilsa morrow defence .",
    "its words, shuffled": " ".join(shuffled),
    "words stuttered, no verb": "kolvar united united trinsby city 3 - 1 1 saturday saturday . coach ilsa morrow "
                                "the the defence .",
}
print(f"{'':>24} {'ROUGE-L':>8} {'ROUGE-1':>8} {'ROUGE-2':>8} | bigram twice  word twice  no verb")
for name, text in salads.items():
    toks = text.split()
    scores = [rouge_reward(toks, reference, kind) for kind in ("rougeL", "rouge1", "rouge2")]
    signs = (metrics.has_repeated_ngram(toks, 2), metrics.has_stutter(toks),
             bool(metrics.verbless_sentences(toks, VERBS)))
    print(f"{name:>24} " + " ".join(f"{s:>8.3f}" for s in scores) + " | "
          + " ".join(f"{str(s):>{w}}" for s, w in zip(signs, (12, 11, 8))))
salad_rl = {name: rouge_reward(text.split(), reference) for name, text in salads.items()}
assert min(salad_rl["content words, no verb"], salad_rl["words stuttered, no verb"]) > \
    salad_rl["same facts, other words"]
assert not metrics.verbless_sentences(reference.split(), VERBS)         # every sentence of the reference has one'''

HACK_SALAD_READ = r"""The reference's content words with no verb score a ROUGE-L of 0.846, the same words with four of them written
twice 0.774, and the correct paraphrase 0.552: the salad keeps the reference's words in the reference's order and
drops only what a reader needs to make sense of them. Shuffled, the words keep every unigram (ROUGE-1 1.000) and
lose most of the subsequence (ROUGE-L 0.467): the order is the one thing about a sentence that ROUGE-L sees. The
model trained below has no reader in its loop, only this reward, so nothing but the MLE term holds it back from
such strings; section 8 measures how often it writes them, and says what the papers did about it."""

HACK_MEASURE_MD = r"""### Reward hacking, measured

Section 2 showed that ROUGE-L pays for word salad. Does RL find it? The cell below counts the three signs of
broken grammar in each model's greedy summaries of the 100 test articles, and in the 2 summaries per article
*sampled* from each model for section 7's sampled reward (the same generator seed, so the same samples), with
the references as the yardstick (`metrics.ungrammatical_rates`): a bigram written twice, a word twice in a row,
a sentence with no verb of SynthNews's templates. A verb the list does not know counts as none; the references
never lack one, and about 1% of the articles' sentences do. """

HACK_MEASURE = r'''def sampled_summaries(model, examples, k=2, seed=0):
    # the k summaries per article that sampled_rewards scored: the same seed, so the same words
    model.eval()
    bk = make(list(examples) * k)
    with torch.no_grad():
        drawn = sample(model, bk, MAX_LEN, generator=torch.Generator(device=device).manual_seed(seed))
    return words(drawn, bk)


signs = {"references": metrics.ungrammatical_rates([ex.target for ex in test], VERBS)}
for name, model in models.items():
    signs[f"{name}, greedy"] = metrics.ungrammatical_rates(outputs[name], VERBS)
    signs[f"{name}, sampled"] = metrics.ungrammatical_rates(sampled_summaries(model, test), VERBS)
cols = [("repeated_bigram", "bigram twice"), ("stutter", "word twice"), ("no_verb", "verbless sentence")]
print(f"{'share of summaries with':>24}" + "".join(f"{label:>19}" for _, label in cols))
for name, row in signs.items():
    show = (lambda x: f"{x:.2f}") if name == "references" else (lambda x: trained(x, ".2f"))   # noqa: E731
    print(f"{name:>24}" + "".join(f"{show(row[key]):>19}" for key, _ in cols))
assert signs["references"]["stutter"] == signs["references"]["no_verb"] == 0     # the yardstick (deterministic)
rl, ctl = signs["mixed RL, sampled"], signs[f"{control_name}, sampled"]
@CLAIMS@'''

HACK_PAPERS = r"""**What the papers did about it.** Paulus et al. (2017) met this at full size: trained on ROUGE-L alone
($\gamma = 1$), their model had its highest ROUGE and, judged by people, its least readable summaries. The mixed
objective of eq. (16), with $\gamma = 0.9984$, keeps the likelihood of the reference's wording in the loss, a
language model that pays for grammar, and people rated its summaries more readable at a ROUGE close to RL's. They
also never let the decoder repeat a trigram at test time (exercise 6). Celikyilmaz et al. (2018) kept the mixed
loss and changed the reward itself: *intermediate rewards*, one per sentence, the gain in ROUGE that sentence $q$
brings, $r(\tilde y_{1..q}) - r(\tilde y_{1..q-1})$, so that a sentence that says again what came before earns
nothing (`sentence_advantages`, `--intermediate-rewards`, exercise 5); the cohesion loss of section 3 pushes
consecutive sentences apart in the same spirit. Neither removes the hack: ROUGE still pays for salad. Both make
a fluent summary that does not repeat itself the cheaper way to raise it. Here the MLE term is only a few percent
of the gradient (section 5)."""

SUMMARY_BULLET = r"""* **Reward hacking.** ROUGE-L pays for word salad: the reference's content words with no verb beat a correct
  paraphrase (section 2). At this size every model stutters; on every run RL's samples had a sentence with no
  verb more often than the control's, while its greedy summaries stuttered less (a repeated word costs ROUGE-L
  precision). Paulus et al. kept an MLE term in the loss against it (eq. 16) and blocked repeated trigrams at
  test time; Celikyilmaz et al. rewarded each sentence for what it adds."""

# Claims and the sentences that report them: filled from the measurements over seeds 0/1/2 + ATEN default
CLAIMS = r'''# seeds 0/1/2 + ATEN default: worst 0.12 (ATEN default); bound 0.05
_ = claim("mixed RL's samples have a sentence with no verb more often than the control's (share of summaries, "
          "RL minus the control)", rl["no_verb"] - ctl["no_verb"], at_least=0.05, fmt=".2f")
# seeds 0/1/2 + ATEN default: worst 0.08 (seed 2); bound 0.03
_ = claim("mixed RL's greedy summaries write a word twice in a row less often than the control's (share of "
          "summaries, the control minus RL)",
          signs[f"{control_name}, greedy"]["stutter"] - signs["mixed RL, greedy"]["stutter"], at_least=0.03, fmt=".2f")
# seeds 0/1/2 + ATEN default: worst 0.79 (seed 1); bound 0.6
_ = claim("at this size most greedy summaries of every model write a word twice in a row (share, the lowest of "
          "the three models)", min(signs[f"{name}, greedy"]["stutter"] for name in models), at_least=0.6, fmt=".2f")'''
HACK_RESULT = r"""**What the counts say** (seeds 0, 1 and 2 and the scalar kernels; the claims above hold on each run):

* **At this size every model's grammar is broken.** The references never write a word twice in a row nor a
  sentence without a verb; on every run 79% or more of each model's greedy summaries write a word twice in a row,
  and 46% to 94% have a sentence with no verb. A bigram written twice is no sign here: 74% of the references
  repeat one (names recur, and so do phrases like "of the").
* **RL's samples lose their verbs.** On every run a larger share of mixed RL's sampled summaries than of the
  control's had a sentence with no verb, by 0.12 to 0.18. That is section 2's hack, found by the policy: ROUGE-L
  pays for the right words in the right order and nothing for the verb between them.
* **RL's greedy summaries stutter less** than the control's, by 0.08 to 0.14 of the summaries on every run: a word
  written a second time matches nothing the second time and lowers ROUGE-L's precision, so here the reward and
  grammar agree. Whether the greedy summaries also lose their verbs changes between runs (more often than the
  control's on three runs, less on seed 2).

What ROUGE-L optimises is not what a reader wants; where the two differ, the policy follows ROUGE-L."""

HACK_MEASURE = HACK_MEASURE.replace("@CLAIMS@", CLAIMS)
HACK_MEASURE_READ = HACK_RESULT

# ---------------------------------------------------------------------------------------------------------------
# Text replaced: history asides that become teaching
# ---------------------------------------------------------------------------------------------------------------
REPLACEMENTS = [
    ("(This notebook did that before, at $\\gamma = 0.97$.)",
     "(Exercise 3 measures what that does at $\\gamma = 0.97$.)"),
    ("3. **The old mix.** Take $L_{RL}$ summed over words (`reduction=\"sequence\"`) with a per-token $L_{MLE}$ and\n"
     "   $\\gamma = 0.97$: this notebook's earlier loss (`--loss-reduction legacy` in `DCARecipe`).",
     "3. **The summed mix.** Take $L_{RL}$ summed over words (`reduction=\"sequence\"`) with a per-token $L_{MLE}$ and\n"
     "   $\\gamma = 0.97$ (`--loss-reduction legacy` in `DCARecipe` trains with it)."),
    ("Below: the two reductions by hand against `reduce_tokens`; the total weight of each term,\n"
     "read off autograd, as the summaries get longer; $L_{SEM}$ by hand (a loop over each summary's sentence ends)\n"
     "against `semantic_cohesion`; and eq. (16) against `mixed_loss`.",
     "Below: $L_{SEM}$ by hand (a loop over each summary's sentence ends) against `semantic_cohesion`, and eq. (16)\n"
     "against `mixed_loss`."),
    ("and $\\lVert g_{RL} \\rVert$ is small: advantages are a few hundredths of ROUGE and the gradients of different\n"
     "samples partly cancel. Section 5 measures it on the trained model.",
     "and $\\lVert g_{RL} \\rVert$ is small: advantages are a few hundredths of ROUGE and the gradients of different\n"
     "samples partly cancel. Section 5 measures it on the trained model.\n\n"
     "Below: the two reductions by hand against `reduce_tokens`, and the total weight of each term, read off\n"
     "autograd, as the summaries get longer."),
]

# Markdown cells cut into steps: each marker starts a cell of its own (cut at a heading or a paragraph)
MARKDOWN_CUTS = [
    "## 3. The mixed loss: two terms, reduced alike",
    "**The effective weighting.**",
    "The DCA paper adds, in its MLE phase, a **semantic cohesion** loss",
    "## 4. A small DCA trained with maximum likelihood",
    "Why the greedy summaries gain less than the samples",
    "## 8. What RL changed in the outputs",
    "**RL is fragile.**",
    "## 9. On a GPU / at full size",
    "## Exercises",
]

# The code cell of section 3, cut in two: (marker of the second part, line moved from the second to the first)
CODE_CUT = ("torch.manual_seed(0)\nstates = torch.randn(3, 8, 6)",
            'assert torch.allclose(per_token, reduce_tokens(values, lengths_to_mask([6, 2, 4], 6), "token"))')


class AnchorError(SystemExit):
    pass


def cell_id(text: str) -> str:
    return "nb07-" + hashlib.sha1(text.encode()).hexdigest()[:10]


def flat(text: str) -> str:
    return " ".join(text.split())                                  # anchors match across line wraps


def where(nb, text: str, cell_type: str | None = None) -> list[int]:
    return [i for i, c in enumerate(nb.cells)
            if flat(text) in flat(c.source) and (cell_type is None or c.cell_type == cell_type)]


def one(nb, text: str, cell_type: str | None = None) -> int:
    found = where(nb, text, cell_type)
    if len(found) != 1:
        raise AnchorError(f"nb07_reward_hacking: anchor {text[:70]!r} is in {len(found)} {cell_type or ''} cells, "
                          "not exactly one: the notebook changed; update the anchor")
    return found[0]


def replace_text(nb, old: str, new: str) -> None:
    if where(nb, new):
        return                                                     # done before
    i = one(nb, old)
    nb.cells[i].source = nb.cells[i].source.replace(old, new)


def cut_markdown(nb, marker: str) -> None:
    i = one(nb, marker, "markdown")
    cell = nb.cells[i]
    at = cell.source.index(marker)
    if cell.source[:at].strip() == "":
        return                                                     # starts its cell already
    head, tail = cell.source[:at].rstrip(), cell.source[at:]
    cell.source = head
    nb.cells.insert(i + 1, nbformat.v4.new_markdown_cell(tail, id=cell_id(marker)))


def cut_code(nb, marker: str, moved_line: str) -> None:
    i = one(nb, marker, "code")
    cell = nb.cells[i]
    at = cell.source.index(marker)
    if cell.source[:at].strip() == "":
        return
    first, second = cell.source[:at].rstrip(), cell.source[at:]
    lines = second.split("\n")
    if moved_line not in lines:
        raise AnchorError(f"nb07_reward_hacking: line {moved_line[:70]!r} not in the code of section 3")
    lines.remove(moved_line)
    cell.source = first + "\n" + moved_line
    cell.outputs, cell.execution_count = [], None
    nb.cells.insert(i + 1, nbformat.v4.new_code_cell("\n".join(lines), id=cell_id(marker)))


def put_after(nb, anchor: str, text: str, kind: str, key: str) -> None:
    """The cell of ``text`` right after the one cell holding ``anchor``; a cell already made (its id) is updated."""
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    ids = [i for i, c in enumerate(nb.cells) if c.get("id") == key]
    if ids:
        cell = nb.cells.pop(ids[0])
        if cell.source != text:
            cell.source = text
            if kind == "code":
                cell.outputs, cell.execution_count = [], None
    else:
        cell = make(text, id=key)
    i = one(nb, anchor)
    nb.cells.insert(i + 1, cell)


def move_after(nb, moved: str, anchor: str) -> None:
    cell = nb.cells.pop(one(nb, moved))
    nb.cells.insert(one(nb, anchor) + 1, cell)


def patch(nb) -> None:
    for old, new in REPLACEMENTS:
        replace_text(nb, old, new)
    for marker in MARKDOWN_CUTS:
        cut_markdown(nb, marker)
    cut_code(nb, *CODE_CUT)
    # the reading of the weights table beside its code: after the reductions' cell, before L_SEM
    move_after(nb, "Reduced alike, the ratio of the two terms' weights", "def term_weights(")
    move_after(nb, "The DCA paper adds, in its MLE phase, a **semantic cohesion** loss",
               "Reduced alike, the ratio of the two terms' weights")
    # section 2: reward hacking named, word salad scored
    put_after(nb, "This is what the model will optimise.", HACK_INTRO, "markdown", "nb07-hack-intro")
    put_after(nb, "**Reward hacking.** A model trained to raise a number", HACK_SALAD, "code", "nb07-hack-salad")
    put_after(nb, "salads = {", HACK_SALAD_READ, "markdown", "nb07-hack-salad-read")
    # section 8: reward hacking measured, and what the papers did
    put_after(nb, "Paulus et al. added trigram blocking at test time", HACK_MEASURE_MD, "markdown",
              "nb07-hack-measure-md")
    put_after(nb, "### Reward hacking, measured", HACK_MEASURE, "code", "nb07-hack-measure")
    anchor = "def sampled_summaries("
    if HACK_MEASURE_READ:
        put_after(nb, anchor, HACK_MEASURE_READ, "markdown", "nb07-hack-measure-read")
        anchor = HACK_MEASURE_READ.split("\n")[0]
    put_after(nb, anchor, HACK_PAPERS, "markdown", "nb07-hack-papers")
    i = one(nb, "## Summary", "markdown")
    if "* **Reward hacking.**" in nb.cells[i].source:
        start = nb.cells[i].source.index("* **Reward hacking.**")
        nb.cells[i].source = nb.cells[i].source[:start].rstrip()
    nb.cells[i].source = nb.cells[i].source.rstrip() + "\n" + SUMMARY_BULLET


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    path = argv[1]
    with open(path, encoding="utf-8") as f:
        before = f.read()
    nb = nbformat.reads(before, as_version=4)
    patch(nb)
    nbformat.validate(nb)
    after = nbformat.writes(nb) + "\n"
    if after == before:
        print(f"{path}: already patched, nothing changed")
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(after)
    print(f"{path}: patched ({len(nb.cells)} cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
