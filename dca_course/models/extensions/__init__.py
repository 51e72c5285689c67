"""The course's additions to the paper models, each in its own module, plugged in by name or as a
module: ``DMN(..., extensions=["time_features", "word_match"])``, ``DCA(..., extensions=[VocabTanh()])``.

The paper models (:mod:`dca_course.models.dmn`, :mod:`dca_course.models.dca`) hold their papers'
code; what neither paper has lives here and composes with them at the hooks of
:mod:`~dca_course.models.extensions.hooks`:

==========================  =======================================  ===========================
extension                   hook                                     command line
==========================  =======================================  ===========================
``time_features``           DMN: extra gate features                 ``--time-features``
``word_match``              DMN: extra memory-update input           ``--word-match``
``sentence_episodes``       DMN: what the episode reads              ``--dmn-episode-reads sentences``
``intervening_facts``       DMN: a second look of the gate           ``--intervening-facts``
``vocab_tanh``              DCA: the vocabulary MLP's hidden layer   ``--vocab-mlp tanh``
==========================  =======================================  ===========================

A control is a subclass rather than an extension: :class:`FixedContextSeq2Seq` is ``Seq2Seq`` with its
attention taken out (the decoder reads one fixed context, as in Cho et al. 2014), the baseline that shows
what attention buys in notebook 02.
"""
from __future__ import annotations

from collections.abc import Iterable

from torch import nn

from .fixed_context import FixedContextSeq2Seq
from .hooks import DCAExtension, DMNExtension
from .intervening_facts import InterveningFacts
from .sentence_episodes import SentenceEpisodes
from .time_features import TimeFeatures
from .vocab_tanh import VocabTanh
from .word_match import WordMatch

__all__ = ["DCAExtension", "DMNExtension", "DCA_EXTENSIONS", "DMN_EXTENSIONS", "FixedContextSeq2Seq", "InterveningFacts",
           "SentenceEpisodes", "TimeFeatures", "VocabTanh", "WordMatch", "make_extensions"]

#: name -> class, the names a checkpoint's ``model_config`` records
DMN_EXTENSIONS = {cls.name: cls for cls in (TimeFeatures, SentenceEpisodes, WordMatch, InterveningFacts)}
DCA_EXTENSIONS = {cls.name: cls for cls in (VocabTanh,)}


def make_extensions(extensions: Iterable, base: type) -> nn.ModuleDict:
    """``extensions`` (modules of class ``base``, or their names) as a ModuleDict keyed by name, in
    the order given; an unknown name, another model's extension or one given twice is an error."""
    table = DMN_EXTENSIONS if base is DMNExtension else DCA_EXTENSIONS
    made = nn.ModuleDict()
    for ext in extensions:
        if isinstance(ext, str):
            if ext not in table:
                raise ValueError(f"unknown extension {ext!r}; this model's are {', '.join(table)}")
            ext = table[ext]()
        if not isinstance(ext, base):
            raise TypeError(f"{ext!r} is not a {base.__name__}")
        if ext.name in made:
            raise ValueError(f"extension {ext.name!r} given twice")
        made[ext.name] = ext
    return made
