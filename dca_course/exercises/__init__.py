"""Self-checks for the notebooks' exercises, and their solutions on request.

Each ``check_*`` function takes what a learner wrote (a class or a function), runs it next to
the library's own version on random inputs, prints one PASS or FAIL line (naming the likely
mistake when it can guess one) and returns ``True`` or ``False``.  The checks draw their random
numbers from a private generator, so calling one leaves the notebook's random state alone.

The solutions live in ``dca_course/exercises/answers/NN_*.py``, away from the notebooks, so that a
learner opens them on purpose: ``solution("05.1")`` prints one.  They are package data (not modules
of the package), so an installed wheel carries them.
``show_source(obj)`` prints the library code a notebook uses without building it.
"""
from __future__ import annotations

from .early import check_copy_scores, check_episode, check_perplexity, check_selective_read, check_teacher_forcing
from .foundations import check_attention, check_dmn_features, check_gru_cell
from .late import (check_agent_distribution, check_agent_messages, check_coverage_loss, check_final_distribution,
                   check_leave_one_out, check_rouge_l, check_seed_spread, check_self_critical_loss)
from .solutions import load_solution, show_source, solution, solution_keys
from .training import check_attention_trains

__all__ = ["check_gru_cell", "check_attention", "check_dmn_features", "check_perplexity", "check_teacher_forcing",
           "check_episode", "check_copy_scores", "check_selective_read",
           "check_final_distribution", "check_coverage_loss", "check_agent_messages", "check_agent_distribution",
           "check_self_critical_loss", "check_leave_one_out", "check_seed_spread", "check_rouge_l",
           "check_attention_trains",
           "solution", "solution_keys", "load_solution", "show_source"]
