"""One home for speed: the course's models computed faster, with the same values.

:mod:`dca_course.nn` and :mod:`dca_course.models` hold each paper's code as written, the one
definition of every model.  This package holds faster forms of the same computations, and nothing
else: hand-written backward passes (:mod:`~dca_course.fast.attention`, :mod:`~dca_course.fast.copying`)
and teacher forcing with the recurrence fused and the output layers run once for all steps
(:mod:`~dca_course.fast.models`).  ``tests/test_fast_paths.py`` holds each to its definition,
values and gradients.

A model is made fast explicitly, once, after it is built (its weights are untouched)::

    model = accelerate(PointerGenerator(V, 128, 256))

The recipes do it when their configuration's ``fast_path`` knob is on (the default;
``--no-fast-path`` trains and decodes with the paper's code).
"""
from __future__ import annotations

from torch import nn

from ..models.copynet import CopyNet
from ..models.dca import DCA
from ..models.extensions import ExtendedDCA
from ..models.pointer_generator import PointerGenerator
from ..nn.attention import AdditiveAttention
from .attention import FastAdditiveAttention, attention_over_steps, step_keys
from .copying import log_final_distribution, log_gen_copy, log_mixed_distribution
from .models import FastCopyNet, FastDCA, FastExtendedDCA, FastPointerGenerator, teacher_forcing

__all__ = ["accelerate", "paper_code", "FAST_FORMS", "FastAdditiveAttention", "FastCopyNet", "FastDCA", "FastExtendedDCA",
           "FastPointerGenerator", "attention_over_steps", "log_final_distribution", "log_gen_copy",
           "log_mixed_distribution", "step_keys", "teacher_forcing"]

#: The paper's class -> its fast form, a subclass with the same parameters and a few methods replaced.
FAST_FORMS: dict[type, type] = {
    AdditiveAttention: FastAdditiveAttention,
    CopyNet: FastCopyNet,
    PointerGenerator: FastPointerGenerator,
    DCA: FastDCA,
    ExtendedDCA: FastExtendedDCA,
}


def accelerate(model: nn.Module) -> nn.Module:
    """Make ``model`` and every module in it of a class in :data:`FAST_FORMS` its fast form, in place,
    and return it.  Parameters, buffers, the state dict and the random state stay as they are: where
    a model is accelerated (right after it is built, or later) changes no number.  A module of another
    class (a GRU, a subclass of its own) is left as it is; accelerating twice changes nothing."""
    for module in model.modules():
        fast = FAST_FORMS.get(type(module))
        if fast is not None:
            module.__class__ = fast
    return model


def paper_code(model: nn.Module) -> nn.Module:
    """The inverse of :func:`accelerate`: every fast form in ``model`` back to its paper's class, in
    place (a benchmark times both on one model and one optimizer)."""
    paper = {fast: cls for cls, fast in FAST_FORMS.items()}
    for module in model.modules():
        cls = paper.get(type(module))
        if cls is not None:
            module.__class__ = cls
    return model
