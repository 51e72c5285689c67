r"""bAbI question answering: read, write, generate and download the tasks.

The bAbI tasks (Weston et al. 2015, "Towards AI-Complete Question Answering: A Set of
Prerequisite Toy Tasks", arXiv:1502.05698) are twenty small reading tests.  Each *story* is a
few simple sentences about people, places and objects, with questions asked along the way::

    1 Mary moved to the bathroom.
    2 John went to the hallway.
    3 Where is Mary? \tbathroom\t1
    4 Daniel went back to the hallway.
    5 Sandra moved to the garden.
    6 Where is Daniel? \thallway\t4
    1 Sandra travelled to the office.
    ...

The v1.2 text format, which this module reads and writes:

* every line is ``ID text``; the ids count 1, 2, 3, ... through a story and a new story starts
  when the id goes back to 1;
* a *question* line has three tab-separated fields: the question, the answer and the ids of
  the *supporting facts* (the statements one needs to answer it), separated by spaces.  The
  release writes a space before the first tab (``Where is Mary? \tbathroom\t1``);
* an answer of several words is written with commas (``milk,football``); ``nothing`` and
  ``none`` are ordinary answers (task 8 lists, task 7 counts).

A model does not see the file: it sees one :class:`BabiExample` per *question*, whose story
holds the statements of the story that come before the question (earlier questions are left
out, as in the memory-network papers).  The supporting fact ids become positions in that story,
ready to supervise an attention over sentences.

The package, one file per job:

* :mod:`.story`: :func:`tokenize`, the data types :class:`BabiExample` (what models read) and
  :class:`Story` (a list of :class:`Statement` and :class:`Question` lines, what files hold),
  and :func:`vocabulary`;
* :mod:`.format`: :func:`read_babi` / :func:`parse_babi_lines` (examples) and
  :func:`read_babi_stories` / :func:`parse_babi_stories` (stories), which reject a malformed
  line with a :class:`BabiFormatError` whose message starts with ``FILE:LINE:``; and
  :func:`format_babi` / :func:`write_babi`, the inverse of the readers;
* :mod:`.generate`: :func:`generate_task` / :func:`generate_examples` / :func:`load_generated`:
  tasks 1, 2, 3, 6, 7, 8, 11 and 15 simulated afresh from a small world, so the course runs
  without any download and the answers are right by construction;
* :mod:`.download`: :data:`TASK_NAMES`, :func:`load_task` for the released files, and the
  opt-in :func:`download_babi`;
* :mod:`.batching`: the examples as padded tensors for the Dynamic Memory Network
  (:class:`DMNBatch`, :func:`make_dmn_batch`, :func:`length_buckets`, :func:`babi_vocab`);
* :mod:`.readings`: what the stored results of the real tasks say (``results/babi_real_1k.json``), as text
  for notebook 03b (:func:`gap_to_paper`, :func:`pass_readings`, :func:`seeds_of_task`, ...).

All but :mod:`.batching` are plain Python (no torch).  Every public name is importable from
the package itself: ``from dca_course.data.babi import read_babi, make_dmn_batch``.
"""
from .batching import SENTENCE_END, DMNBatch, babi_vocab, length_buckets, make_dmn_batch
from .download import BABI_SHA256, BABI_URL, PAPER_ACCURACY_1K, TASK_NAMES, ChecksumError, default_cache_dir, download_babi, load_task
from .format import (BabiFormatError, examples_to_stories, format_babi, parse_babi_lines, parse_babi_stories,
                     read_babi, read_babi_stories, story_ids, write_babi)
from .generate import GENERATED_TASKS, generate_examples, generate_task, load_generated
from .readings import first_pass_range, gap_to_paper, pass_readings, row_accuracies, seeds_of_task, tasks_under_paper
from .story import BabiExample, Question, Statement, Story, StoryLine, stories_to_examples, tokenize, vocabulary

__all__ = [
    "BabiExample", "Statement", "Question", "Story", "StoryLine", "BabiFormatError", "ChecksumError",
    "tokenize", "parse_babi_stories", "parse_babi_lines", "read_babi_stories", "read_babi",
    "stories_to_examples", "examples_to_stories", "format_babi", "write_babi", "story_ids",
    "GENERATED_TASKS", "generate_task", "generate_examples", "load_generated",
    "TASK_NAMES", "PAPER_ACCURACY_1K", "load_task", "vocabulary",
    "BABI_URL", "BABI_SHA256", "default_cache_dir", "download_babi",
    "DMNBatch", "make_dmn_batch", "length_buckets", "babi_vocab", "SENTENCE_END",
    "gap_to_paper", "pass_readings", "first_pass_range", "row_accuracies", "seeds_of_task", "tasks_under_paper",
]
