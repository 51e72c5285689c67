"""SynthNews: a seeded generator of news-like articles with reference summaries.

Real news data (CNN/DailyMail) is large, slow to train on and has no ground truth beyond
the highlights.  SynthNews is small, fast, and *knows what is true*: every article is
written from a record of facts about a simulated world, so fact recall and hallucinated
entities can be counted exactly.

The world
    People, companies, football clubs, universities, places and countries.  Their names
    are made of syllables ("velorik", "tamsa", "orvena labs"), so most names are rare and
    fall outside a vocabulary of the 2,000 most frequent training words, just as names do
    in CNN/DailyMail.  A pool of "famous" entities recurs across articles (these names do
    make it into the vocabulary); most entities are made fresh for one article.  Common
    words (verbs, function words, titles such as "minister" or "coach", sectors, months)
    come from a closed set and are always in the vocabulary.

Events
    Ten kinds: acquisition, match result, election, storm, court ruling, product launch,
    player transfer, scientific discovery, labour strike, quarterly earnings.  Each event
    is a set of *slots* (who, whom, where, when, how much).

Articles
    "synthnews": 3 to 6 paragraphs, about 200 tokens (90 to 380): a lead paragraph, then in
    a random order a figures paragraph, a distractor paragraph about an unrelated event with
    different entities (always from 4 paragraphs on), and some of background, quote, outlook
    and reaction paragraphs.  Every sentence role has at least three phrasings.

    "synthnews-long" (``long=True``), the setting of Deep Communicating Agents (Celikyilmaz
    et al. 2018, articles cut at 800 tokens where See et al. 2017 cut at 400): 12 paragraphs
    and about 53 sentences, 800 tokens on average (about 650 to 1,000; a longer draw is made
    again).  After a 4-sentence lead come, in a random order, fuller figures, background,
    quote, outlook and reaction paragraphs, two distractor paragraphs (two unrelated events),
    and four kinds of paragraph only long articles have: ``analysis`` (what the event means),
    ``history`` (how it came about), ``wider`` (the industry, league or country around it)
    and ``comment`` (an outside observer, a person made for the article, is quoted).  Those
    four state no number or date and name only the event's own entities (and the observer):
    the facts a summary needs sit in the figures and background paragraphs, wherever they
    fall, so they are spread through the whole article.

Summaries
    2 or 3 sentences in different words from the article (headline style, other verbs), that
    name the key entities and always use a fact found only outside the lead paragraph (a
    figure, a background fact).  They never mention the distractor's entities, and they state
    only what the article states.  In a long article, each summary sentence after the first
    uses, three times in four when it can, a *late* fact: one that the first 400 tokens do
    not state.  So the whole article states every key fact, but its first 400 tokens do not:

    =================================  ==========  ========================
    share of key facts stated by       synthnews   synthnews-long
    =================================  ==========  ========================
    the first 3 sentences (lead-3)     0.57        0.50 (0.49 to 0.51)
    the first 400 tokens               1.00        0.67 (0.66 to 0.68)
    the first 800 tokens               1.00        0.985 (0.985 to 0.986)
    the whole article                  1.00        1.00
    =================================  ==========  ========================

    (test split of ``load_synthnews(2000, 200, 500, seed=s, long=...)``, mean over seeds 0,
    1 and 2, the range over the seeds in brackets; 82 to 86 % of long articles hold a key fact
    only after token 400).

Each :class:`~dca_course.data.examples.Example` carries ``facts``:

============================  ============================================================
key                           value
============================  ============================================================
``event``                     the event kind, e.g. ``"acquisition"``
``distractor_event``          the distractor paragraph's event kind (``None`` if none)
``distractor_events``         long articles only: the event kind of each distractor
                              paragraph, in order (``distractor_event`` is the first)
``entities``                  key entity names the reference names (``"orvena labs"``)
``entity_tokens``             the name tokens of those entities (``"orvena"``)
``numbers``                   every number of the main event that the article states
``key_facts``                 facts a good summary states, as space-joined token strings
                              (``"orvena labs"``, ``"$ 4.2 billion"``, ``"tuesday"``); the
                              reference states all of them
``outside_lead_facts``        the key facts that do not occur in the lead paragraph
``fact_paragraphs``           key fact -> indices of the paragraphs that state it
``distractor_entities``       entity names in the distractor paragraph(s)
``distractor_entity_tokens``  their name tokens (never in the reference)
``all_entity_tokens``         every entity name token anywhere (source and summary)
``paragraph_roles``           each paragraph's role: ``lead``, ``figures``, ``distractor``,
                              ``background``, ``quote``, ``outlook``, ``reaction`` (long
                              articles also: ``analysis``, ``history``, ``wider``,
                              ``comment``)
``slots``                     slot -> value (string) of every main-event slot the text uses
============================  ============================================================

"Entity tokens" are the name tokens of people, companies, clubs, places, products etc.;
generic parts of names ("labs", "united", "university", "of") are ordinary words and are
not entity tokens.  A fact ``f`` is *stated* by a token list when ``f.split()`` occurs in it
as a contiguous run (:func:`dca_course.metrics.contains`).  The data set keeps the facts; the
metrics that count them live in :mod:`dca_course.metrics`::

    from dca_course.metrics import fact_recall, hallucinated_entities, misattributed_facts
    fact_recall(output, ex.facts)                         # share of key facts stated
    hallucinated_entities(output, ex.source, ex.facts)    # entity tokens not in the source
    set(output) & set(ex.facts["distractor_entity_tokens"])   # distractor leaks
    misattributed_facts(output, ex.facts, slot_contexts(ex.facts["event"]))   # facts in another's place

Typical use::

    train, valid, test = load_synthnews(2000, 200, 500, seed=0)          # about 1 s
    long = load_synthnews(2000, 200, 500, seed=0, long=True)             # about 4 s
    print(dataset_stats(train, test))

The package
    :mod:`.templates` (data only: word lists and sentence templates), :mod:`.phrases` (the
    templates compiled, the closed word list), :mod:`.world` (names, places, recurring
    entities), :mod:`.events` (the table of event kinds and their fact builders),
    :mod:`.articles` (paragraphs, summaries, facts; :func:`generate`, :func:`load_synthnews`)
    and :mod:`.io` (JSON lines, :func:`dataset_stats`).
"""
from .articles import (LATE_FROM, LATE_SHARE, LONG_MAX_TOKENS, LONG_PARAGRAPHS, MAX_LONG_PARAGRAPHS,
                       MAX_PARAGRAPHS, generate, load_synthnews)
from .events import EVENT_KINDS, EVENTS, FACT_TYPES, EventKind, Val
from .io import dataset_stats, frequent_facts, lead_sentences, read_jsonl, write_jsonl
from .phrases import CLOSED_WORDS, slot_contexts
from .templates import ALIASES, QUOTE_FIRST, QUOTE_SECOND, SUMMARY_VERBS, VERBS
from .world import World

__all__ = [
    "EVENT_KINDS", "EVENTS", "EventKind", "World", "generate", "load_synthnews", "write_jsonl", "read_jsonl",
    "dataset_stats", "frequent_facts", "lead_sentences", "Val", "FACT_TYPES", "CLOSED_WORDS", "ALIASES", "QUOTE_FIRST",
    "QUOTE_SECOND", "LATE_FROM", "LATE_SHARE", "LONG_MAX_TOKENS", "LONG_PARAGRAPHS", "MAX_LONG_PARAGRAPHS",
    "MAX_PARAGRAPHS", "slot_contexts", "SUMMARY_VERBS", "VERBS",
]
