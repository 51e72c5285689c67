"""Run a learner's code while watching for the library's answer.

A check compares a learner's function with the library's, so handing it the library's own function
(or a function that calls it) would pass without any work.  :func:`watched` runs the learner's code
under a profiler hook (``sys.setprofile``, the hook ``cProfile`` uses) that records, without changing
any result, the first call of

* a Python function or method that *is* the answer (matched by its code object, so a notebook's own
  ``from dca_course.models.dmn_gate import dmn_features`` is seen as well as the module attribute),
* a built-in operation that the exercise asks the learner to do without (``scatter_add``,
  ``cumsum``, ``torch._VF.gru_cell``: matched by the name PyTorch gives it),
* any function of a package or module that computes the answer (``rouge_score``, ``statistics``).

The check then fails with a hint that names what was seen.  The hook is the caller thread's only: it
sees the forward pass the learner's function runs, not autograd's backward threads.
"""
from __future__ import annotations

import inspect
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

__all__ = ["Answers", "AnswerCalled", "guarded", "watching", "LIBRARY", "NO_WRITE"]

LIBRARY = "the library's answer: write it yourself"
NO_WRITE = "which this exercise asks you to do without"


def _name(obj) -> str:
    module = getattr(obj, "__module__", None) or ""
    return f"{module}.{getattr(obj, '__qualname__', getattr(obj, '__name__', repr(obj)))}".lstrip(".")


@dataclass
class Answers:
    """What a learner's code must not call: ``functions`` (functions, methods or classes: a class stands
    for its ``forward``), ``ops`` ({built-in name: why}), ``modules`` (modules or packages)."""

    functions: tuple = ()
    ops: dict = field(default_factory=dict)
    modules: tuple = ()

    def __post_init__(self):
        self._codes: dict = {}
        for obj in self.functions:
            if isinstance(obj, type):
                for attr in ("forward", "__call__"):
                    fn = obj.__dict__.get(attr)
                    if fn is not None and hasattr(fn, "__code__"):
                        self._codes[fn.__code__] = f"{_name(obj)} (its {attr})"
                continue
            fn = inspect.unwrap(obj)
            code = getattr(fn, "__code__", None)
            if code is None:
                raise TypeError(f"{obj!r} has no Python code to watch for")
            self._codes[code] = _name(fn)
        self._files: list[tuple[str, str]] = []
        for module in self.modules:
            if not isinstance(module, ModuleType):
                raise TypeError(f"{module!r} is not a module")
            path = Path(module.__file__).resolve()
            where = str(path.parent) if path.name == "__init__.py" else str(path)
            self._files.append((where, module.__name__))

    def seen(self, frame, event, arg) -> str | None:
        """The hint for one profiler event, or None."""
        if event == "call":
            name = self._codes.get(frame.f_code)
            if name is not None:
                return f"it calls {name}, {LIBRARY}"
            if self._files:
                filename = str(Path(frame.f_code.co_filename).resolve())
                for where, module in self._files:
                    if filename == where or filename.startswith(where + "/"):
                        return f"it calls the {module} module ({frame.f_code.co_name}), {LIBRARY}"
        elif event == "c_call" and self.ops:
            op = getattr(arg, "__name__", None)
            if op in self.ops:
                return f"it calls {op}, {self.ops[op]}"
        return None


@contextmanager
def watching(answers: Answers | None):
    """Within the block, calls of ``answers`` are recorded in the list it yields (the first only)."""
    found: list[str] = []
    if answers is None:
        yield found
        return

    def profile(frame, event, arg):
        if not found:
            hint = answers.seen(frame, event, arg)
            if hint:
                found.append(hint)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield found
    finally:
        sys.setprofile(previous)


class AnswerCalled(Exception):
    """Raised by :func:`guarded` when the learner's code called one of the answers; its text is the hint."""


def guarded(answers: Answers | None, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, raising :class:`AnswerCalled` (also in place of fn's own exception) when
    it called one of ``answers``."""
    with watching(answers) as found:
        try:
            result = fn(*args, **kwargs)
        except Exception:
            if found:
                raise AnswerCalled(found[0]) from None
            raise
    if found:
        raise AnswerCalled(found[0])
    return result
