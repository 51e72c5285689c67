"""The course's additions to the paper models, each in its own module, plugged in by name or as a
module into a subclass of the paper model: ``ExtendedDMN(..., extensions=["time_features", "word_match"])``,
``ExtendedDCA(..., extensions=[VocabTanh()])``.

The paper models (:mod:`dca_course.models.dmn`, :mod:`dca_course.models.dca`) hold their papers'
code and nothing else; :class:`ExtendedDMN` and :class:`ExtendedDCA` override what the additions
change and call them at the hooks of :mod:`~dca_course.models.extensions.hooks`:

==========================  =======================================  ===========================
extension                   hook                                     command line
==========================  =======================================  ===========================
``time_features``           DMN: extra gate features                 ``--time-features``
``word_match``              DMN: extra memory-update input           ``--word-match``
``sentence_episodes``       DMN: what the episode reads              ``--dmn-episode-reads sentences``
``intervening_facts``       DMN: a second look of the gate           ``--intervening-facts``
``own_question_gru``        DMN: the question's reader               ``--dmn-question own``
``answer_hidden``           DMN: the answer's hidden layer           ``--answer-hidden``
``vocab_tanh``              DCA: the vocabulary MLP's hidden layer   ``--vocab-mlp tanh``
==========================  =======================================  ===========================

A control is a subclass too, with no extensions: :class:`FixedContextSeq2Seq` is ``Seq2Seq`` with its
attention taken out (the decoder reads one fixed context, as in Cho et al. 2014), the baseline that shows
what attention buys in notebook 02.
"""
from __future__ import annotations

from .answer_hidden import AnswerHidden
from .extended_dca import ExtendedDCA
from .extended_dmn import ExtendedDMN
from .fixed_context import FixedContextSeq2Seq
from .hooks import DCAExtension, DMNExtension
from .intervening_facts import InterveningFacts
from .named import DCA_EXTENSIONS, DMN_EXTENSIONS, make_extensions
from .own_question_gru import OwnQuestionGRU
from .sentence_episodes import SentenceEpisodes
from .time_features import TimeFeatures
from .vocab_tanh import VocabTanh
from .word_match import WordMatch

__all__ = ["AnswerHidden", "DCAExtension", "DMNExtension", "DCA_EXTENSIONS", "DMN_EXTENSIONS", "ExtendedDCA", "ExtendedDMN",
           "FixedContextSeq2Seq", "InterveningFacts", "OwnQuestionGRU", "SentenceEpisodes", "TimeFeatures", "VocabTanh",
           "WordMatch", "make_extensions"]
