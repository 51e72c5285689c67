"""What a notebook prints, and which of it ``pytest --nbval`` compares.

A notebook prints two kinds of output:

* **Deterministic** output (shapes, equivalence checks, hand-computed values, data, generated
  examples) is the same on every machine and every seed. It is printed plainly, and nbval
  compares it exactly.
* **Trained** output (losses, accuracies, ROUGE, rewards, a trained model's attention weights
  and decoded text) depends on the order in which the processor adds floats and on the seed.
  It is printed through :func:`trained` or :func:`trained_text`, which put a ``≈`` in front of
  it. The one rule in ``notebooks/sanitize.cfg`` masks a ``≈`` followed by a number or a word,
  or ``≈`` and a space followed by the rest of the line, and nothing else.

What the text says about a trained model is checked with :func:`claim`: an ``assert`` with a
margin that held on seeds 0, 1 and 2 (``make claims`` measures them; the worst case seen is
written beside each claim in the notebook).

The "On a GPU / at full size" sections use :func:`full_requested` and :func:`on_this_machine`,
so that the cell prints the same words on a laptop and on a GPU machine.

Progress bars come from :func:`tqdm` (``tqdm.auto``'s, whose saved output reads as finished).
"""
from __future__ import annotations

import json
import os
from numbers import Real

__all__ = ["TRAINED", "trained", "trained_text", "claim", "full_requested", "on_this_machine", "tqdm"]

TRAINED = "\u2248"  # ≈: "about this much here; another machine or seed gives another value"

# The regular expression notebooks/sanitize.cfg uses (a test keeps the two equal).  Spaces
# around the mark are swallowed too, so that right-aligned columns of different widths
# compare equal; a run of consecutive "≈ " lines is masked as one block, so that a trained
# text (a summary, an alignment) may have another number of lines on another machine.
SANITIZE_REGEX = r"[ ]*\u2248(?: [^\n]*(?:\n[ ]*\u2248 [^\n]*)*|\S*)[ ]*"


def trained(value, fmt: str = ".3f") -> str:
    """A trained number (or one-word string) in the masked form: ``trained(0.2541) == '≈0.254'``.

    ``fmt`` is a format spec for numbers (``".1f"``, ``".2%"``, ``"d"``).  Use it inside
    f-strings and tables; pad with ``f"{trained(x):>8}"`` as usual.
    """
    if isinstance(value, Real) and not isinstance(value, bool):
        return TRAINED + format(value, fmt)
    text = str(value)
    if any(ch.isspace() for ch in text):
        raise ValueError(f"trained({text!r}): a string with spaces must go through trained_text(), "
                         "which masks the rest of its line")
    return TRAINED + text


def trained_text(text: str) -> str:
    """Lines a trained model wrote (a summary, an answer), each shown as ``≈ line``.

    The mark and a space mask the rest of the line, and the lines that follow it as long as
    each starts with the mark: put it last on a line, and print the whole trained text with
    one call, so that nbval sees one masked block however many lines training produced.
    """
    return "\n".join(f"{TRAINED} {line}" for line in str(text).split("\n"))


def claim(statement: str, value: float, *, at_least: float | None = None, at_most: float | None = None,
          fmt: str = ".3f") -> float:
    """Assert something the notebook says about a trained model, with a margin.

    ``value`` is the measured quantity (e.g. a difference of two ROUGE scores) and the bound
    ``at_least`` (or ``at_most``) is chosen below the worst case seen over seeds 0, 1 and 2.
    Prints one line whose words are compared by nbval and whose measured value is masked:

        claim: coverage cuts repeated trigrams by half or more: holds (≈0.710 >= 0.5)

    When ``$DCA_CLAIMS_LOG`` names a file, a JSON line with the value, the bound and the seed is
    appended to it; ``tools/notebook_claims.py`` turns those lines into the table of worst
    cases over seeds.
    """
    if (at_least is None) == (at_most is None):
        raise ValueError("claim() needs exactly one of at_least= or at_most=")
    value = float(value)
    bound, op = (at_least, ">=") if at_least is not None else (at_most, "<=")
    holds = value >= bound if op == ">=" else value <= bound
    _log_claim(statement, value, op, bound)
    if not holds:
        raise AssertionError(f"claim failed: {statement}: measured {value:{fmt}}, needs {op} {bound}")
    print(f"claim: {statement}: holds ({trained(value, fmt)} {op} {bound})")
    return value


def _log_claim(statement: str, value: float, op: str, bound: float) -> None:
    path = os.environ.get("DCA_CLAIMS_LOG")
    if not path:
        return
    from . import run_seed

    record = {"claim": statement, "value": value, "op": op, "bound": bound, "seed": run_seed(),
              "cpu_capability": os.environ.get("ATEN_CPU_CAPABILITY", "")}
    with open(path, "a", encoding="utf-8") as f:   # one short line per append: no torn records
        f.write(json.dumps(record) + "\n")


def full_requested() -> bool:
    """True when the learner asked for the full-size runs with ``DCA_FULL=1``.

    A GPU alone never starts them: on a Colab GPU, Run All would otherwise wait for hours.
    """
    return os.environ.get("DCA_FULL", "").strip().lower() in ("1", "true", "yes")


def on_this_machine(device) -> str:
    """``"this machine: device='cuda'"``: where a GPU cell ran, in a form the sanitize file masks."""
    return f"this machine: device='{getattr(device, 'type', device)}'"


_FINISHED_TQDM = None


def _finished_tqdm_class():
    """``tqdm.auto.tqdm`` in a terminal; in a notebook, its widget bar, shown with a display id so
    that closing it replaces the output with the bar's final text."""
    global _FINISHED_TQDM
    if _FINISHED_TQDM is None:
        from tqdm.auto import tqdm as auto_tqdm
        from tqdm.notebook import tqdm as notebook_tqdm

        if not issubclass(auto_tqdm, notebook_tqdm):
            _FINISHED_TQDM = auto_tqdm
        else:
            from IPython.display import display

            class FinishedTqdm(auto_tqdm):
                """A saved notebook keeps a widget's text form from when it was first shown ("0%| 0/94"),
                and a viewer without the widget's state (GitHub, nbviewer) shows that. On close this bar
                replaces its output with the final text ("100%| 94/94 ..."), which the sanitize file's
                progress-bar rule masks like any other bar."""

                def __init__(self, *args, **kwargs):
                    self._handle = None
                    show = kwargs.pop("display", True)
                    super().__init__(*args, display=False, **kwargs)
                    if show and not self.disable and self.delay <= 0 and hasattr(self, "container"):
                        self._handle = display(self.container, display_id=True)
                        self.displayed = True

                def close(self):
                    handle, self._handle = getattr(self, "_handle", None), None
                    super().close()
                    if handle is not None:
                        handle.update({"text/plain": repr(self.container)}, raw=True)

            _FINISHED_TQDM = FinishedTqdm
    return _FINISHED_TQDM


def tqdm(*args, **kwargs):
    """A progress bar as ``tqdm.auto.tqdm(*args, **kwargs)``; in a notebook, its saved output is the
    finished bar's text ("epoch 4/4: 100%|##########| 94/94 [...]"), not the widget's first state."""
    return _finished_tqdm_class()(*args, **kwargs)
