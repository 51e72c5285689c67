"""The course guide (notebooks/course_guide.md): its notation table covers every symbol that an
equation of notebooks 01-07 uses, and every notebook links to it.

The rule that finds "a symbol" is deliberately simple, and the same for the notebooks and for the
guide's table:

* the math of a markdown cell is everything between ``$...$`` or ``$$...$$`` (code spans and fenced
  code are dropped first);
* ``\\text{..}``, ``\\mathrm{..}``, ``\\operatorname{..}`` (function names such as softmax, GRU),
  ``\\tag{..}`` and ``\\begin{..}``/``\\end{..}`` are dropped, except as a sub- or superscript;
* a symbol is one Latin letter or one Greek letter (``\\alpha``), or a letter in a font
  (``\\mathcal{V}``, ``\\mathbf{W}``, ``\\mathbb{E}``), with its decoration (``\\tilde``, ``\\hat``,
  ``\\bar``, ``\\overrightarrow``, ``\\overleftarrow``, a prime ``'``, a star ``^*``) and a *named*
  sub- or superscript (a word: ``p_{gen}``, ``P^{voc}``, ``L_{RL}``, ``W_{\\text{init}}``);
* any other sub- or superscript is a set of indices, and each of its letters is a symbol in its
  own right (``h^{(k)}_{m,I}`` gives h, k, m and I).

The guide's table lists, in its first column, the symbols as the course writes them; what that
column yields under the same rule must include every notebook symbol.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
GUIDE = NOTEBOOKS / "course_guide.md"
GUIDE_LINK = "[Course guide](course_guide.md)"

GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "iota", "kappa",
         "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "varphi", "chi", "psi",
         "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega"}
DECORATIONS = {"tilde", "hat", "bar", "overrightarrow", "overleftarrow", "vec"}
FONTS = {"mathcal", "mathbf", "mathbb"}
DROPPED = {"text", "mathrm", "operatorname", "tag", "begin", "end", "mathit"}


def _group(s: str, i: int) -> tuple[str, int]:
    """The argument at s[i]: a {...} group (balanced), a command, or one character."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return "", i
    if s[i] == "{":
        depth, j = 0, i
        while j < len(s):
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            if depth == 0:
                return s[i + 1: j], j + 1
            j += 1
        return s[i + 1:], len(s)
    if s[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", s[i:])
        return m.group(0), i + m.end()
    return s[i], i + 1


def _named(content: str) -> str | None:
    """The word of a named sub/superscript (gen, vocab, RL, init), else None (indices)."""
    inner = re.fullmatch(r"\s*\\(?:text|mathrm)\{([^{}]*)\}\s*", content)
    if inner:
        return inner.group(1).strip()
    word = content.strip()
    if re.fullmatch(r"[A-Za-z]{3,}|[A-Z]{2,}", word):              # gen, vocab, RL; not ij, in, T
        return word
    if re.fullmatch(r"[A-Z]{2,}\\text\{-\}[A-Z]{2,}", word):          # MLE\text{-}SEM
        return word.replace("\\text{-}", "-")
    return None


def symbols(math: str) -> set[str]:
    """The symbols of one piece of LaTeX math, by the rule of this module's docstring."""
    found: set[str] = set()
    s, i = math, 0
    while i < len(s):
        ch, base = s[i], None
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+)", s[i:])
            if not m:
                i += 2
                continue
            name, i = m.group(1), i + m.end()
            if name in GREEK:
                base = "\\" + name
            elif name in DECORATIONS:
                arg, i = _group(s, i)
                inner = sorted(symbols(arg))
                base = f"\\{name} {inner[0]}" if len(inner) == 1 else None
                if base is None:
                    found |= set(inner)
            elif name in FONTS:
                arg, i = _group(s, i)
                base = f"\\{name}{{{arg.strip()}}}"
            elif name in DROPPED:
                _, i = _group(s, i)
                continue
            else:
                continue
        elif ch.isascii() and ch.isalpha():
            base, i = ch, i + 1
        elif ch in "_^":
            arg, i = _group(s, i + 1)            # an index with nothing before it (\sum_{i}, \nabla_\theta)
            found |= symbols(arg)
            continue
        else:
            i += 1
            continue
        # what is attached to the base: primes, a star, sub- and superscripts
        while i < len(s):
            if s[i] == "'":
                base, i = base + "'", i + 1
            elif s[i] in "_^":
                mark = s[i]
                arg, i = _group(s, i + 1)
                if arg.strip() == "*":
                    base += "^*"
                elif (word := _named(arg)) is not None:
                    base += f"{mark}{{{word}}}"
                else:
                    found |= symbols(arg)
            else:
                break
        found.add(base)
    return found


def markdown_math(text: str) -> list[str]:
    """The pieces of math ($...$ and $$...$$) of a markdown text, code spans and fences dropped."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [a or b for a, b in re.findall(r"\$\$(.+?)\$\$|\$(.+?)\$", text, flags=re.S)]


def notebook_symbols(path: Path) -> dict[str, str]:
    """symbol -> the first piece of math of the notebook that uses it."""
    out: dict[str, str] = {}
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            for math in markdown_math("".join(cell["source"])):
                for sym in symbols(math):
                    out.setdefault(sym, math.strip()[:80])
    return out


def guide_table_symbols(text: str) -> set[str]:
    """The symbols of the first column of every table row in the guide's notation section."""
    section = re.search(r"^## 1\. Notation.*?(?=^## )", text, flags=re.S | re.M)
    assert section, "the guide has no '## 1. Notation' section"
    found: set[str] = set()
    for line in section.group(0).splitlines():
        if line.startswith("|") and not re.match(r"\|\s*-", line):
            first = line.split("|")[1]
            for math in markdown_math(first):
                found |= symbols(math)
    return found


def test_the_rule_on_examples():
    assert symbols(r"h^{(k)}_{m,I}") == {"h", "k", "m", "I"}
    assert symbols(r"p_{gen} = \sigma(w_{h^*}^\top h^*_t)") == {"p_{gen}", "\\sigma", "w", "h^*", "t"}
    assert symbols(r"W_{\text{init}} \overleftarrow{h}_1 + \tilde h_t") == {"W_{init}", "\\overleftarrow h", "\\tilde h", "t"}
    assert symbols(r"\operatorname{softmax}(e^t) \tag{8'}") == {"e", "t"}
    assert symbols(r"\alpha_{ij} = \mathcal{V} \cup L_{MLE\text{-}SEM}") == {"\\alpha", "i", "j", "\\mathcal{V}", "L_{MLE-SEM}"}
    assert symbols(r"s'_q, c^*_{t-1}") == {"s'", "q", "c^*", "t"}


def test_the_notation_table_covers_every_symbol_of_notebooks_01_to_07():
    covered = guide_table_symbols(GUIDE.read_text())
    missing = {}
    for path in sorted(NOTEBOOKS.glob("0[1-7]*_*.ipynb")):          # 02b_ too
        for sym, where in notebook_symbols(path).items():
            if sym not in covered:
                missing.setdefault(sym, f"{path.name[:2]}: ${where}$")
    assert not missing, ("symbols used in notebook equations but not in the first column of the guide's notation "
                         "tables:\n" + "\n".join(f"  {sym!r:28} e.g. {where}" for sym, where in sorted(missing.items())))


@pytest.mark.parametrize("name", [f"{n:02d}" for n in range(9)] + ["02b"])
def test_every_notebook_links_the_guide(name):
    path = next(NOTEBOOKS.glob(f"{name}_*.ipynb"))
    cells = json.loads(path.read_text())["cells"]
    markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    where = "".join(markdown) if name == "00" else markdown[0]      # 00: where it lists the notebooks
    assert GUIDE_LINK in where, f"{path.name} does not link the course guide {GUIDE_LINK} in its first cell"


def test_the_guide_has_its_sections():
    text = GUIDE.read_text()
    for heading in ("## 1. Notation", "## 2. Shapes", "## 3. Glossary", "## 4. Read next"):
        assert heading in text, heading
