"""The course's additions by name: the names a checkpoint's ``model_config`` records, and
:func:`make_extensions`, which turns names (or modules) into a model's ``extensions``."""
from __future__ import annotations

from collections.abc import Iterable

from torch import nn

from .answer_hidden import AnswerHidden
from .hooks import DMNExtension
from .intervening_facts import InterveningFacts
from .own_question_gru import OwnQuestionGRU
from .sentence_episodes import SentenceEpisodes
from .time_features import TimeFeatures
from .vocab_tanh import VocabTanh
from .word_match import WordMatch

#: name -> class, the names a checkpoint's ``model_config`` records
DMN_EXTENSIONS = {cls.name: cls for cls in (TimeFeatures, SentenceEpisodes, WordMatch, InterveningFacts,
                                                   OwnQuestionGRU, AnswerHidden)}
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
