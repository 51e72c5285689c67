"""A model a learner can try on their own text: summarise any news article with a trained pointer-generator
or Deep Communicating Agents model, and look at each summary word: copied or generated (p_gen), and where in
the article the decoder was reading when it wrote that word.

    recipe, model, vocab, _ = load_run(checkpoint_folder("pg400-synthnews-long"), device)
    result = summarise_text(recipe, model, vocab, "")      # "": the course's example article
    display(article_explorer(recipe, model, vocab))         # paste an article, choose a word

The text is read as the CNN/DailyMail ``.story`` reader reads an article (:mod:`dca_course.data.cnndm`):
paragraphs at blank lines, every line tokenized like the training data (lower case, punctuation split off) and
ended with a full stop if it has none (a headline).  The model reads the first ``max_src`` tokens, as its
recipe trains and evaluates; the rest are shown, greyed out, as not read.

The summary is the recipe's own: the same beam search (or greedy search) with the same settings as
:meth:`~dca_course.recipes.SummarizerRecipe.predict`, so that what a learner sees is what evaluation scores.
The search records each step's p_gen and attention along the hypothesis it returns (``return_info``), so no
second pass is needed.  What is shown per summary word:

* **pointer-generator**: p_gen (eq. 8) and the attention a^t over the article (eq. 2), the distribution the
  copy mass is spread with;
* **DCA**: sum_a g_a p_a, the share of eq. (15)'s probability that comes from generating (each agent has its
  own p_a, eq. 13, and the agent attention g mixes them), and sum_a g_a l_{a,i}, each agent's word attention
  weighted by the agent attention and laid back on the article's positions (the agents read contiguous
  chunks, in order): a distribution over the article, as the pointer-generator's is.

Colours are plain HTML spans (no JavaScript), so the picture shows wherever HTML does.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from importlib import resources

import numpy as np
import torch

from .data.cnndm import fix_missing_period, split_sentences, tokenize
from .data.examples import Example
from .decoding import beam_search, greedy
from .diagrams import PALETTE
from .errors import InputError
from .outputs import trained_text

__all__ = ["ArticleTextError", "TextSummary", "article_explorer", "error_line", "example_article",
           "summarise_text", "summary_html", "text_example"]

ERROR_PREFIX = "dca-course: error: "
EXAMPLE_FILE = "example_article.txt"
MODELS = ("pointer-generator", "dca")          # the runs whose steps report p_gen and attention


class ArticleTextError(InputError):
    """Text that cannot be summarised: it holds no word (only punctuation or symbols)."""


def error_line(exc: Exception) -> str:
    """The one line the command line would print for ``exc``: ``dca-course: error: ...``."""
    return ERROR_PREFIX + str(exc).splitlines()[0]


def example_article() -> str:
    """The course's stored example article (fictional, written for the course: see the file's header)."""
    text = resources.files("dca_course.data").joinpath(EXAMPLE_FILE).read_text(encoding="utf-8")
    lines = text.split("\n")
    while lines and (lines[0].startswith("#") or not lines[0].strip()):   # the header is not the article
        lines.pop(0)
    return "\n".join(lines)


def text_example(text: str) -> Example:
    """``text`` as an :class:`Example` with no reference summary, paragraphs at blank lines, each line
    tokenized as the ``.story`` reader does; empty text (or only spaces) is the stored example article."""
    stored = not text.strip()
    paragraphs, para = [], []
    for line in (example_article() if stored else text).splitlines() + [""]:
        if not line.strip():
            if para:
                paragraphs.append(split_sentences(para))
                para = []
            continue
        para.extend(fix_missing_period(tokenize(line)))       # a headline gets its full stop, as in training
    tokens = [t for p in paragraphs for s in p for t in s]
    if not any(re.search(r"[a-z0-9]", t) for t in tokens):
        raise ArticleTextError("the text holds no words to summarise (only punctuation or symbols): paste a "
                               "news article, or leave it empty for the course's example article")
    return Example.from_document(paragraphs, [], id="example-article" if stored else "your-text",
                                 meta={"dataset": "text", "stored_example": stored})


@dataclass
class TextSummary:
    """What :func:`summarise_text` found: the article, the summary, and per summary word p_gen and attention."""

    example: Example          # the article as read: ``example.source`` holds all its tokens
    read: int                 # the model reads the first ``read`` tokens (its recipe's max_src)
    words: list               # the summary, one entry per decoding step (an OOV word copied from the article too)
    p_gen: np.ndarray         # (len(words),) probability of generating (1) rather than copying (0)
    attention: np.ndarray     # (len(words), len(tokens)): each row sums to 1 over the tokens read, 0 after them
    model: str                # the recipe's name: "pointer-generator", "dca"

    @property
    def tokens(self) -> list:
        return self.example.source

    @property
    def stored_example(self) -> bool:
        return bool(self.example.meta.get("stored_example"))

    def describe(self) -> str:
        """A few lines for the notebook's text output: the reading (the same everywhere) and the summary in
        the trained form (the masked ``≈`` lines)."""
        what = "the course's example article" if self.stored_example else "your text"
        return (f"{what}: {len(self.tokens)} tokens, the {self.model} reads the first {self.read}\n"
                + trained_text(f"summary ({len(self.words)} words, mean p_gen {self.p_gen.mean():.2f}): "
                               + " ".join(self.words)))


def summarise_text(recipe, model, vocab, text: str = "", *, device=None, beam_size: int | None = None,
                   max_words: int | None = None, block_ngram_repeat: int = 0) -> TextSummary:
    """Summarise ``text`` (empty: the stored example article) as ``recipe`` evaluates, with what to look inside.

    ``recipe``, ``model``, ``vocab``: a pointer-generator or DCA run (``load_run(...)[:3]``); ``device``: the one
    the model is on (default: its parameters'); ``beam_size`` and ``max_words`` default to the recipe's (its
    ``beam_size``; the longest summary it decodes); ``block_ngram_repeat=n`` > 0: no n-gram said twice (beam
    search, as ``recipe.predict``'s).  Text with no word raises :class:`ArticleTextError`.
    """
    if recipe.name not in MODELS:
        raise InputError(f"summarise_text reads a pointer-generator or dca run, not a {recipe.name} run")
    example = text_example(text)
    device = device if device is not None else next(model.parameters()).device
    longest, shortest = recipe.decode_lengths()
    longest = longest if max_words is None else max_words
    k = recipe.config.beam_size if beam_size is None else beam_size
    model.eval()
    batch = recipe.make_batch([example], vocab).to(device)
    # predict()'s search, with each step's info kept along the returned hypothesis
    if k > 1 or block_ngram_repeat:
        decoded = beam_search(model, batch, k, max_len=longest, min_len=min(shortest, longest),
                              length_penalty=recipe.config.length_penalty, block_ngram_repeat=block_ngram_repeat,
                              return_info=True)
    else:
        decoded = greedy(model, batch, longest)
    ids = decoded.ids[0]
    info = {name: v[0, : len(ids)].float().cpu() for name, v in decoded.info.items()}
    read = min(len(example.source), recipe.config.max_src or len(example.source))
    p_gen, attention = _per_word(info, batch, read)
    full = np.zeros((len(ids), len(example.source)), dtype=np.float64)
    full[:, :read] = attention
    return TextSummary(example, read, vocab.decode(ids, batch.oovs[0], strip=False), p_gen, full, recipe.name)


def _per_word(info: dict, batch, read: int) -> tuple[np.ndarray, np.ndarray]:
    """(p_gen (T,), attention (T, read)) from a search's step info, for one article."""
    if "word_attn" in info:                          # DCA: the agents' chunks are the article, in order
        g, lw, p = info["agent_attn"], info["word_attn"], info["p_gen"]            # (T, M), (T, M, L), (T, M)
        parts = [g[:, a:a + 1] * lw[:, a, : len(chunk)] for a, chunk in enumerate(batch.chunks[0])]
        attention = torch.cat(parts, dim=1)                                        # sum_a g_a l_{a,i}
        p_gen = (g * p).sum(-1)                                                    # the generated share of eq. 15
    else:
        attention = info["attn"]
        p_gen = info.get("p_gen", torch.ones(attention.size(0)))    # --no-pointer: every word generated
    return p_gen.double().numpy(), attention[:, :read].double().numpy()


# -- HTML ---------------------------------------------------------------------------------------------------

def _rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i: i + 2], 16) for i in (1, 3, 5)], dtype=float)


# The course's roles (diagrams.PALETTE): copy/pointer purple for copied words, output red for generated ones,
# lightened halfway to white so that black text stays readable; white in between (p_gen 0.5: undecided).
_COPIED = (_rgb(PALETTE["copy"][1]) + 255) / 2
_GENERATED = (_rgb(PALETTE["output"][1]) + 255) / 2
_ATTENTION = _rgb(PALETTE["attention"][1])


def _p_gen_colour(p: float) -> str:
    end, t = (_COPIED, 1 - 2 * p) if p < 0.5 else (_GENERATED, 2 * p - 1)
    r, g, b = (255 + (end - 255) * t).round().astype(int)
    return f"rgb({r},{g},{b})"


def _swatch(colour: str, label: str) -> str:
    return (f'<span style="background:{colour};padding:0 6px;margin:0 2px;border:1px solid #aaa">&nbsp;</span>'
            f"{html.escape(label)}")


def _legend() -> str:
    a = ",".join(str(int(c)) for c in _ATTENTION)
    items = [_swatch(_p_gen_colour(0.0), "copied (p_gen 0)"), _swatch(_p_gen_colour(0.5), "p_gen 0.5"),
             _swatch(_p_gen_colour(1.0), "generated (p_gen 1)"), " &nbsp; article: ",
             _swatch(f"rgba({a},0.15)", "little attention"), _swatch(f"rgba({a},1)", "the most"),
             ' &nbsp; <span style="color:#999">grey: not read</span>']
    return f'<div class="dca-legend" style="font-size:90%;margin:4px 0">{"".join(items)}</div>'


def _summary_spans(result: TextSummary, word: int) -> str:
    spans = []
    for i, (w, p) in enumerate(zip(result.words, result.p_gen)):
        mark = "outline:2px solid #333;" if i == word else ""
        spans.append(f'<span class="dca-word" title="word {i}: p_gen {p:.2f}" style="background:'
                     f'{_p_gen_colour(float(p))};{mark}padding:1px 2px">{html.escape(w)}</span>')
    return " ".join(spans)


def _article_spans(result: TextSummary, word: int) -> str:
    weights = result.attention[word] if result.words else np.zeros(len(result.tokens))
    top = max(float(weights.max(initial=0.0)), 1e-12)
    a = ",".join(str(int(c)) for c in _ATTENTION)
    paragraphs, position = [], 0
    for para in result.example.paragraphs:
        spans = []
        for tok in (t for s in para for t in s):
            if position == result.read:
                spans.append('<span class="dca-cut" style="color:#999">[the model reads no further]</span>')
            if position >= result.read:
                spans.append(f'<span style="color:#999">{html.escape(tok)}</span>')
            else:
                w = float(weights[position])
                spans.append(f'<span title="@{position}: {w:.3f}" style="background:rgba({a},{w / top:.3f})">'
                             f"{html.escape(tok)}</span>")
            position += 1
        paragraphs.append(f'<p style="margin:4px 0">{" ".join(spans)}</p>')
    return "".join(paragraphs)


def summary_html(result: TextSummary, word: int = 0) -> str:
    """The summary, each word's background its p_gen, summary word ``word`` outlined; a line on that word; the
    article with that word's attention as background intensity (the most-attended token at full colour)."""
    word = min(max(word, 0), max(len(result.words) - 1, 0))
    if result.words:
        j = int(result.attention[word].argmax())
        about = (f"word {word}: <b>{html.escape(result.words[word])}</b>, p_gen {result.p_gen[word]:.2f}; "
                 f"reads most <b>{html.escape(result.tokens[j])}</b> @{j} ({result.attention[word, j]:.2f})")
    else:
        about = "the summary is empty"
    return (f'<div class="dca-summary-view">{_legend()}'
            f'<div style="margin:6px 0"><b>summary</b> ({html.escape(result.model)}): {_summary_spans(result, word)}</div>'
            f'<div style="margin:6px 0">{about}</div>'
            f'<div style="border-top:1px solid #ccc;line-height:1.7"><b>article</b> ({len(result.tokens)} tokens, '
            f"the first {result.read} read){_article_spans(result, word)}</div></div>")


# -- the explorer -------------------------------------------------------------------------------------------

def _explorer_class():
    import ipywidgets as widgets

    class ArticleExplorer(widgets.VBox):
        """The widgets, and their current picture as ``text/html`` beside the widget view: a front end that
        renders no widgets (nbconvert, a notebook viewer) shows the picture instead of a bare repr."""

        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            data["text/html"] = self.children[-1].value
            return bundle

    return widgets, ArticleExplorer


def article_explorer(recipe, model, vocab, text: str = "", *, device=None, beam_size: int | None = None,
                     max_words: int | None = None, block_ngram_repeat: int = 0, word: int = 0):
    """An ipywidgets explorer: a box to paste an article into (empty: the stored example), a button that
    summarises it (:func:`summarise_text`, with ``beam_size``, ``max_words`` and ``block_ngram_repeat``), a slider
    that chooses a summary word, and :func:`summary_html` of that word.  Text with no word shows one line,
    ``dca-course: error: ...``.  It opens on ``text``, at summary word ``word`` (a new summary starts at word 0)."""
    if isinstance(word, bool) or not isinstance(word, int) or word < 0:
        raise InputError(f"article_explorer: word must be a whole number of 0 or more, not {word!r}")
    widgets, ArticleExplorer = _explorer_class()
    box = widgets.Textarea(value=text, placeholder="Paste a news article here; left empty, the course's example "
                           "article is summarised", layout=widgets.Layout(width="100%", height="120px"))
    button = widgets.Button(description="Summarise", button_style="primary")
    slider = widgets.IntSlider(0, 0, 0, description="word")
    picture = widgets.HTML()
    current: dict = {"first_word": word}

    def show(_=None):
        if current.get("result") is not None:
            picture.value = summary_html(current["result"], slider.value)

    def run(_=None):
        try:
            current["result"] = summarise_text(recipe, model, vocab, box.value, device=device, beam_size=beam_size,
                                               max_words=max_words, block_ngram_repeat=block_ngram_repeat)
        except ArticleTextError as exc:
            current["result"] = None
            slider.max = 0
            picture.value = f'<pre class="dca-error">{html.escape(error_line(exc))}</pre>'
            return
        slider.max = max(len(current["result"].words) - 1, 0)
        chosen = min(current.pop("first_word", 0), slider.max)
        if slider.value == chosen:
            show()
        slider.value = chosen                   # shows it (the slider's observer)

    button.on_click(run)
    slider.observe(show, names="value")
    run()
    return ArticleExplorer([box, widgets.HBox([button, slider]), picture])
