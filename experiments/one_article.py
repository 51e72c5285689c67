"""One long test article through the capstone (issue 45, part 5), each model with where it reads.

    python experiments/one_article.py     # writes results/one_article/*.png and results/one_article.json, .md

The article is notebook 06's: the first SynthNews-long test article (seed 0) that states a key fact only after
word 400.  Three models summarise it greedily, each trained on the same 2,000 articles by the command line:

* notebook 05's model, the pointer-generator + coverage reading the first 400 words
  (data/checkpoints/pg400-synthnews-long): its word attention a^t;
* notebook 06's trained DCA, 3 agents reading 800 words (data/checkpoints/dca3-synthnews-long): its agent
  attention g^t and each agent's word attention;
* notebook 07's step, that DCA after 50 steps of mixed RL at the recipe's defaults (runs/rl_dca/rl-s0, made by
  ``python experiments/rl_dca.py run``): the same two.

Each figure is a PNG; the JSON keeps the summaries, which key facts each states (attributed), and where each
late fact sits in the article.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import RESULTS, ROOT, command_line, write_report  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from dca_course import configure_process, viz  # noqa: E402
from dca_course.data.synthnews import load_synthnews, slot_contexts  # noqa: E402
from dca_course.decoding import greedy  # noqa: E402
from dca_course.metrics import attributed_facts, contains, late_facts  # noqa: E402
from dca_course.recipes import load_run  # noqa: E402

MODELS = {"05_pointer_generator_400": "data/checkpoints/pg400-synthnews-long",
          "06_dca_trained": "data/checkpoints/dca3-synthnews-long",
          "07_dca_after_rl": "runs/rl_dca/rl-s0"}
TITLES = {"05_pointer_generator_400": "05 · pointer-generator + coverage, first 400 words",
          "06_dca_trained": "06 · the trained DCA, 3 agents, 800 words",
          "07_dca_after_rl": "07 · the same DCA after 50 steps of mixed RL"}
OUT = RESULTS / "one_article"


def the_article():
    """Notebook 06's article: the first test article with a key fact only after word 400."""
    test = load_synthnews(0, 0, 60, seed=0, long=True)[2]
    i = next(i for i, e in enumerate(test) if any(not contains(e.source[:400], f) for f in e.facts["key_facts"]))
    return i, test[i]


@torch.no_grad()
def summarise(folder: Path, example):
    recipe, model, vocab, _ = load_run(folder, "cpu")
    model.eval()
    batch = recipe.make_batch([example], vocab)
    out = greedy(model, batch, max_len=recipe.decode_lengths()[0])
    words = vocab.decode(out.ids[0], batch.oovs[0])
    return recipe, batch, words, {k: v[0] for k, v in out.info.items()}


def draw(name: str, batch, words, info, example) -> str:
    """The figure of one model, saved as OUT/name.png; returns viz's one-line-per-part summary."""
    T = len(words)
    if "agent_attn" in info:
        fig, axes = plt.subplots(1, 2, figsize=(16, min(0.3 * T + 2.0, 12)), gridspec_kw={"width_ratios": [1, 5]})
        text = viz.agent_attention_heatmaps(info["agent_attn"][:T], info["word_attn"][:T], batch.chunks[0], words,
                                            axes=axes, trained_model=False)
    else:
        src = example.source[: batch.src.size(1)]
        weights = info["attn"][:T, : len(src)]
        start, end = viz.attended_window(weights, width=40)
        fig, ax = plt.subplots(figsize=(16, min(0.3 * T + 2.0, 12)))
        text = viz.attention_heatmap(weights[:, start:end], src[start:end], words, ax=ax, first_position=start,
                                    trained_model=False)
    fig.suptitle(TITLES[name])
    fig.tight_layout()
    OUT.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT / f"{name}.png", dpi=80)
    plt.close(fig)
    return text


def main() -> int:
    configure_process()
    index, example = the_article()
    late = late_facts(example.source, example.facts)
    rows, md = {}, [f"# One article through the capstone: test article {index} of SynthNews-long (seed 0)", "",
                    "Reference: " + example.summary_text().replace("\n", " "), "",
                    "Late facts (only after word 400): " + (", ".join(late) or "none"), ""]
    for name, folder in MODELS.items():
        path = ROOT / folder
        if not (path / "last.pt").is_file():
            raise SystemExit(f"dca-course: error: {folder}: no last.pt (see this script's docstring)")
        _, batch, words, info = summarise(path, example)
        stated = sorted(attributed_facts(words, example.facts, slot_contexts(example.facts["event"])))
        summary = draw(name, batch, words, info, example)
        rows[name] = {"model": folder, "summary": " ".join(words), "facts_stated": stated,
                      "late_facts_stated": [f for f in stated if f in late], "figure": f"one_article/{name}.png",
                      "where_it_reads": summary}
        md += [f"## {TITLES[name]}", "", f"![{name}](one_article/{name}.png)", "", "Summary: " + " ".join(words), "",
               f"Key facts stated with what they are about: {', '.join(stated) or 'none'}; late ones: "
               f"{', '.join(rows[name]['late_facts_stated']) or 'none'}.", "", "```", summary, "```", ""]
    data = {"article": index, "reference": example.summary_text(), "key_facts": list(example.facts["key_facts"]),
            "late_facts": late, "models": rows}
    write_report(RESULTS, "one_article", data, "\n".join(md), command=command_line(__file__),
                 config={"models": MODELS, "article": index},
                 measures=["dca_course/models/dca.py", "dca_course/models/pointer_generator.py", "dca_course/viz.py",
                           "dca_course/decoding.py", "experiments/one_article.py"])
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
