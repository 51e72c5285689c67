"""The templates of :mod:`.templates`, compiled once for fast filling, and the closed word list.

A compiled :class:`Template` knows the slot names it uses, so the generator can tell before
filling it whether a sentence would state something the article does not.  The closed word
list (every literal word of every template and word list) is what a made-up name may never be.
"""
from __future__ import annotations

import functools

from .templates import (ANIMALS, CASES, CLUB_SUFFIXES, COMPANY_SUFFIXES, EARNINGS_DIRS, ELECTION_WORDS,
                        EVENT_TEMPLATES, FIELDS, HABITAT_FORMS, ISSUES, JOURNALS, LEAGUES,
                        LONG_EVENT_TEMPLATES, MONTHS, OBSERVER_FIRST, OBSERVER_SECOND, ORDINALS, PARTIES,
                        POSITIONS, PREV_JOBS, PRODUCT_SUFFIXES, PRODUCT_TYPES, QUARTERS, QUOTE_FIRST,
                        QUOTE_SECOND, SECTORS, STORM_TYPES, VENUE_FORMS, WEEKDAYS, WORD_NUMBERS)


class Template(tuple):
    """A compiled template: ((is_slot, text), ...) with ``slots``, the slot names it uses, and
    ``parts``: runs of literal tokens (tuples) and slot names (strings), for fast filling."""

    slots: frozenset = frozenset()
    parts: tuple = ()


def compile_template(text: str) -> Template:
    """'a {x} b' -> ((False, 'a'), (True, 'x'), (False, 'b'))."""
    out = []
    for tok in text.split():
        if len(tok) > 2 and tok[0] == "{" and tok[-1] == "}":
            out.append((True, tok[1:-1]))
        else:
            out.append((False, tok))
    tmpl = Template(out)
    tmpl.slots = frozenset(name for is_slot, name in out if is_slot)
    parts, run = [], []
    for is_slot, name in out:
        if is_slot:
            if run:
                parts.append(tuple(run))
                run = []
            parts.append(name)
        else:
            run.append(name)
    if run:
        parts.append(tuple(run))
    tmpl.parts = tuple(parts)
    return tmpl


def fill(tmpl: Template, slots: dict, used: set, q=None) -> list:
    """The template's tokens with slots filled in; adds the slot names to ``used``."""
    out = []
    for part in tmpl.parts:
        if part.__class__ is tuple:
            out.extend(part)
        elif part == "q":
            out.extend(q)
        else:
            out.extend(slots[part].toks)
            used.add(part)
    return out


# The keys of an event's phrasings: lists of sentences, groups of lists (one sentence is taken
# from each group used), and the lists only long articles use.
ROLE_LISTS = ("lead", "context", "outlook", "reaction", "sum_main", "sum_figure", "sum_extra")
ROLE_GROUPS = ("background", "figures")
LONG_ROLE_LISTS = ("wider", "analysis", "history", "observer_quotes", "observer_first")


def compile_phrasings(short: dict, long: dict) -> dict:
    """One event kind's templates, compiled: its short-article templates (``short``) plus the
    long-only ones (``long``), whose observer roles are written into the first quote line."""
    spec = {"core": short["core"]}
    for key in ROLE_LISTS:
        spec[key] = tuple(compile_template(t) for t in short[key])
    for key in ROLE_GROUPS:
        spec[key] = tuple(tuple(compile_template(t) for t in group) for group in short[key])
    spec["quotes"] = tuple(compile_template(t) for t in short["quotes"])
    spec["tails"] = tuple(tuple(t.split()) for t in short["tails"])
    observer_first = tuple(f.replace("{observer_role}", r) for r in long["observer_roles"] for f in OBSERVER_FIRST)
    for key, texts in (("wider", long["wider"]), ("analysis", long["analysis"]), ("history", long["history"]),
                       ("observer_quotes", long["observer_quotes"]), ("observer_first", observer_first)):
        spec[key] = tuple(compile_template(t) for t in texts)
    return spec


# Event kind -> its compiled templates, in the order of EVENT_TEMPLATES.
PHRASINGS: dict = {kind: compile_phrasings(EVENT_TEMPLATES[kind], LONG_EVENT_TEMPLATES[kind])
                   for kind in EVENT_TEMPLATES}
QUOTE_FIRST_COMPILED = tuple(compile_template(t) for t in QUOTE_FIRST)
QUOTE_SECOND_COMPILED = tuple(compile_template(t) for t in QUOTE_SECOND)
OBSERVER_SECOND_COMPILED = tuple(compile_template(t) for t in OBSERVER_SECOND)


def all_templates(long: bool = True):
    """Every article and summary template (``long=False``: without the long-only ones)."""
    yield from QUOTE_FIRST_COMPILED
    yield from QUOTE_SECOND_COMPILED
    for spec in PHRASINGS.values():
        for key in ROLE_LISTS:
            yield from spec[key]
        for key in ROLE_GROUPS:
            for group in spec[key]:
                yield from group
        yield from spec["quotes"]
        yield from (compile_template(" ".join(t)) for t in spec["tails"])
        if long:
            for key in LONG_ROLE_LISTS:
                yield from spec[key]
    if long:
        yield from OBSERVER_SECOND_COMPILED


def closed_words(long: bool = True) -> frozenset:
    """The closed word list.  The long-only templates add words, none of which can be a made-up
    name (tests/test_synthnews.py checks), so that they change no name and no short article."""
    words = set()
    for tmpl in all_templates(long):
        words.update(name for is_slot, name in tmpl if not is_slot)
    lists = (WEEKDAYS, MONTHS, WORD_NUMBERS, ORDINALS, COMPANY_SUFFIXES, CLUB_SUFFIXES,
             STORM_TYPES, PRODUCT_SUFFIXES, FIELDS, ANIMALS, HABITAT_FORMS)
    for lst in lists:
        for item in lst:
            words.update(item.split())
    for lst in (SECTORS, PRODUCT_TYPES, POSITIONS, CASES, QUARTERS, VENUE_FORMS):
        for item in lst:
            for part in item:
                words.update(part.split())
    for lst in (PARTIES, ISSUES, PREV_JOBS, ELECTION_WORDS, LEAGUES, JOURNALS):
        for item in lst:
            words.update(item.split())
    for d in EARNINGS_DIRS:
        for v in d.values():
            for item in (v if isinstance(v, tuple) else (v,)):
                words.update(item.split())
    words.update(("the", "of", "university", "institute", "foundation", "union", "workers",
                  "dr", "professor", "mayor", "president", "prime", "minister"))
    return frozenset(words)


CLOSED_WORDS = closed_words()


@functools.lru_cache(maxsize=None)
def slot_contexts(kind: str, width: int = 2) -> dict:
    """Where each slot of event ``kind`` stands in its templates (article, quote and summary), for
    :func:`dca_course.metrics.misattributed_facts`: a dict from a context to the slot names that
    templates put there.  A context is ``(left, right)``: the ``k`` words before a slot and the ``m``
    after it, for every ``k, m`` in ``1..width``; a word that is another slot is ``"*"`` (a slot
    with its indefinite article, ``{a_sector}``, is ``"a" "*"`` or ``"an" "*"``), ``"<s>"``/``"</s>"``
    pad a sentence's ends, a sentence may also end in one of the event's tails (", the league
    said ."), and a quote's line stands between quotation marks as the quote templates put it."""
    spec = PHRASINGS[kind]
    sentences = [t for key in ("lead", "context", "outlook", "reaction", "sum_main", "sum_figure", "sum_extra")
                 + ("wider", "analysis", "history", "observer_first") for t in spec[key]]
    sentences += [t for key in ROLE_GROUPS for group in spec[key] for t in group]
    sentences += [*QUOTE_FIRST_COMPILED, *QUOTE_SECOND_COMPILED, *OBSERVER_SECOND_COMPILED]
    tails = [[",", *tail.split()[1:], "."] if tail.startswith(",") else [*tail.split(), "."] for tail in
             (" ".join(t) for t in spec["tails"])]
    wrapped = [(t, [], []) for t in sentences]                        # (template, words before, words after)
    wrapped += [(t[:-1], [], tail) for t in sentences if t and t[-1] == (False, ".") for tail in tails]
    quote_lines = [*spec["quotes"], *spec["observer_quotes"]]
    wrapped += [(t, before, after) for t in quote_lines for before in (['"'], [":", '"'])
                for after in ([",", '"'], [".", '"'])]
    out: dict = {}
    for tmpl, before, after in wrapped:
        variants = [[(w, None) for w in before]]                   # (word, slot name or None) lists
        for is_slot, text in tmpl:
            if is_slot and text.startswith("a_"):                   # "{a_sector}" -> "an" "*" (or "a" "*")
                variants = [v + [(art, None), ("*", None)] for v in variants for art in ("a", "an")]
            else:
                variants = [v + [("*" if is_slot else text, text if is_slot else None)] for v in variants]
        for variant in variants:
            variant = variant + [(w, None) for w in after]
            words = ["<s>"] * width + [w for w, _ in variant] + ["</s>"] * width
            for i, (_, name) in enumerate(variant):
                if name is None or name == "q":
                    continue
                j = i + width                                       # the slot's place in `words`
                for k in range(1, width + 1):
                    for m in range(1, width + 1):
                        key = (tuple(words[j - k: j]), tuple(words[j + 1: j + 1 + m]))
                        out.setdefault(key, set()).add(name)
    return {key: frozenset(names) for key, names in out.items()}
