"""The DMN's word-match read, now the extension :mod:`dca_course.models.extensions.word_match` (the
course's addition, in neither DMN paper).  Kept, re-exporting it, because a stored result names this
path among the code it measured (``results/babi_real_1k.json``)."""
from .extensions.word_match import MATCH_WORDS, match_read, word_match  # noqa: F401
