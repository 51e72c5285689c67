"""SynthNews articles and summaries: paragraphs by role, summaries that state only what the
article states, the facts each example keeps, and :func:`generate` / :func:`load_synthnews`.
"""
from __future__ import annotations

import random

from ..examples import Example
from .events import EVENT_KINDS, EVENTS, FACT_TYPES, observer_slots
from .phrases import OBSERVER_SECOND_COMPILED, QUOTE_FIRST_COMPILED, QUOTE_SECOND_COMPILED, fill
from .templates import ALIASES, DISTRACTOR_PREFIXES
from .world import World, pick, randint, sample


# --------------------------------------------------------------------------------------
# Articles and summaries
# --------------------------------------------------------------------------------------
_OPTIONAL_ROLES = ("background", "quote", "outlook", "reaction")


def _paragraph_roles(rng, n: int) -> list:
    """Lead first; then figures, a distractor (n >= 4, or half the time at n == 3) and others."""
    rest = ["figures"]
    if n >= 4 or (n == 3 and rng.random() < 0.5):
        rest.append("distractor")
    rest += sample(rng, _OPTIONAL_ROLES, n - 1 - len(rest))
    rest = sample(rng, rest, len(rest))
    return ["lead"] + rest


def _pick_groups(rng, groups, k: int):
    """k of the role groups in their order, one phrasing each."""
    idx = sorted(sample(rng, range(len(groups)), min(k, len(groups))))
    return [pick(rng, groups[i]) for i in idx]


_ATTRIBUTION_WORDS = frozenset(("said", "says", "according", "reported", "estimate", "reports"))


def _tail(rng, spec, sent: list, p: float = 0.3) -> list:
    """Sometimes add an attribution before the full stop: '..., the companies said .'"""
    if rng.random() < p and sent and sent[-1] == "." and _ATTRIBUTION_WORDS.isdisjoint(sent):
        return sent[:-1] + list(pick(rng, spec["tails"])) + ["."]
    return sent


def _build_paragraph(rng, role, spec, slots, used, dspec, dslots, dused, long):
    """The sentences of one paragraph.  ``long`` articles get more sentences per paragraph."""
    if role == "lead":
        sents = [fill(pick(rng, spec["lead"]), slots, used)]
        k = 2 if long else (0 if rng.random() < 0.15 else 1) + (rng.random() < 0.3)
        for t in sample(rng, spec["context"], k):
            sents.append(fill(t, slots, used))
        return sents
    if role == "background":
        k = 5 if long else randint(rng, 3, 4)
        return [_tail(rng, spec, fill(t, slots, used)) for t in _pick_groups(rng, spec["background"], k)]
    if role == "figures":
        n = len(spec["figures"])
        k = n if long or rng.random() < 0.6 else n - 1
        return [_tail(rng, spec, fill(t, slots, used)) for t in _pick_groups(rng, spec["figures"], k)]
    if role == "quote":
        k = 4 if long else (3 if rng.random() < 0.7 else 2)
        lines = sample(rng, spec["quotes"], k)
        sents = [fill(pick(rng, QUOTE_FIRST_COMPILED), slots, used, q=fill(lines[0], slots, used))]
        for second in sample(rng, QUOTE_SECOND_COMPILED, k - 1):
            sents.append(fill(second, slots, used, q=fill(lines[len(sents)], slots, used)))
        return sents
    if role in ("outlook", "reaction"):
        k = 4 if long else randint(rng, 2, 3)
        return [_tail(rng, spec, fill(t, slots, used)) for t in sample(rng, spec[role], k)]
    if role == "distractor":
        first = list(pick(rng, DISTRACTOR_PREFIXES)) + fill(pick(rng, dspec["lead"]), dslots, dused)
        sents = [first]
        if long or rng.random() < 0.5:
            sents.append(fill(pick(rng, dspec["context"]), dslots, dused))
        n_bg = 2 if long else randint(rng, 0, 1)
        for t in _pick_groups(rng, dspec["background"], n_bg):
            sents.append(_tail(rng, dspec, fill(t, dslots, dused)))
        n_fig = randint(rng, 2, 3) if long else randint(rng, 1, 2)
        for t in _pick_groups(rng, dspec["figures"], n_fig):
            sents.append(_tail(rng, dspec, fill(t, dslots, dused)))
        return sents
    raise ValueError(role)


# Long articles ("synthnews-long") -------------------------------------------------------
_LONG_OPTIONAL_ROLES = ("background", "quote", "outlook", "reaction", "analysis", "history",
                        "comment", "wider")
# lead, figures, two distractors and the optional roles
MAX_LONG_PARAGRAPHS = 4 + len(_LONG_OPTIONAL_ROLES)
LONG_PARAGRAPHS = (12, 12)   # paragraphs of a "synthnews-long" article
LONG_MAX_TOKENS = 1000      # a longer long article is drawn again
LATE_FROM = 400             # a fact first stated from this token on is "late"
LATE_SHARE = 0.75           # how often a long summary's 2nd (3rd) sentence is made to use one


def _long_paragraph_roles(rng, n: int) -> list:
    """Lead first; then figures, a distractor (n >= 4), a second distractor (n >= 8) and others."""
    rest = ["figures"]
    if n >= 4:
        rest.append("distractor")
    if n >= 8:
        rest.append("distractor")
    rest += sample(rng, _LONG_OPTIONAL_ROLES, n - 1 - len(rest))
    rest = sample(rng, rest, len(rest))
    return ["lead"] + rest


def _build_long_paragraph(rng, role, spec, slots, used):
    """A long article's paragraph about the main event (the distractors: :func:`_long_distractor`)."""
    if role == "lead":
        sents = [fill(pick(rng, spec["lead"]), slots, used)]
        return sents + [fill(t, slots, used) for t in sample(rng, spec["context"], 3)]
    if role in ("analysis", "wider"):
        return [fill(t, slots, used) for t in sample(rng, spec[role], randint(rng, 4, 5))]
    if role == "history":
        k = randint(rng, 4, 5)
        return [_tail(rng, spec, fill(t, slots, used)) for t in sample(rng, spec["history"], k)]
    if role == "comment":
        lines = sample(rng, spec["observer_quotes"], randint(rng, 3, 4))
        sents = [fill(pick(rng, spec["observer_first"]), slots, used, q=fill(lines[0], slots, used))]
        for second in sample(rng, OBSERVER_SECOND_COMPILED, len(lines) - 1):
            sents.append(fill(second, slots, used, q=fill(lines[len(sents)], slots, used)))
        return sents
    return _build_paragraph(rng, role, spec, slots, used, None, None, None, True)


def _long_distractor(rng, prefix, dspec, dslots, dused):
    """A distractor paragraph of a long article: lead, context, 2 background and 2-3 figures."""
    sents = [list(prefix) + fill(pick(rng, dspec["lead"]), dslots, dused),
             fill(pick(rng, dspec["context"]), dslots, dused)]
    for t in _pick_groups(rng, dspec["background"], 2):
        sents.append(_tail(rng, dspec, fill(t, dslots, dused)))
    for t in _pick_groups(rng, dspec["figures"], randint(rng, 2, 3)):
        sents.append(_tail(rng, dspec, fill(t, dslots, dused)))
    return sents


def _spaced(tokens) -> str:
    """' a b c ': a fact ``f`` occurs in the tokens iff ' f ' is a substring (no token has a space)."""
    return " " + " ".join(tokens) + " "


def _choose(rng, templates, ok):
    """A random template that passes ``ok``; of two random candidates, the longer (so that
    summaries are not dominated by the short fall-back phrasings)."""
    cands = [t for t in templates if ok(t)]
    if not cands:
        return None
    a, b = pick(rng, cands), pick(rng, cands)
    return a if len(a) >= len(b) else b


def _texts_of(values, typ: str) -> list:
    """The texts of the slot values of one type, in order, each once."""
    out = []
    for v in values:
        text = " ".join(v.toks)
        if v.typ == typ and text not in out:
            out.append(text)
    return out


def _make_example(rng, world: World, n_par: int, ex_id: str, long: bool):
    kind = pick(rng, EVENT_KINDS)
    spec = EVENTS[kind].templates
    slots = EVENTS[kind].facts(rng, world, set())
    main_ents = set()
    for v in slots.values():
        main_ents.update(v.ents)

    if long:
        slots.update(observer_slots(rng, world, set(main_ents)))
        main_ents.update(slots["observer"].ents)
        roles = _long_paragraph_roles(rng, n_par)
    else:
        roles = _paragraph_roles(rng, n_par)
    distractors = []  # (kind, spec, slots, used slot names) of each distractor paragraph
    avoid = set(main_ents)
    for _ in range(roles.count("distractor")):
        dkind = pick(rng, EVENT_KINDS)
        dspec = EVENTS[dkind].templates
        dslots = EVENTS[dkind].facts(rng, world, set(avoid))
        for v in dslots.values():
            avoid.update(v.ents)
        distractors.append((dkind, dspec, dslots, set()))

    used_per_par = []
    paragraphs = []
    if long:
        prefixes = sample(rng, DISTRACTOR_PREFIXES, len(distractors))
        for role in roles:
            used = set()
            if role == "distractor":
                i = sum(r == "distractor" for r in roles[:len(paragraphs)])
                _, dspec, dslots, dused = distractors[i]
                paragraphs.append(_long_distractor(rng, prefixes[i], dspec, dslots, dused))
            else:
                paragraphs.append(_build_long_paragraph(rng, role, spec, slots, used))
            used_per_par.append(used)
        if sum(len(s) for p in paragraphs for s in p) > LONG_MAX_TOKENS:
            return None
    else:
        _, dspec, dslots, dused = distractors[0] if distractors else (None, None, {}, set())
        full = n_par <= 3  # short articles get fuller paragraphs
        for role in roles:
            used = set()
            paragraphs.append(_build_paragraph(rng, role, spec, slots, used, dspec, dslots, dused,
                                               full and role != "lead"))
            used_per_par.append(used)
    used_all = set().union(*used_per_par)
    par_text = [_spaced([t for s in p for t in s]) for p in paragraphs]
    lead_text = par_text[0]

    said_in_article = {ALIASES.get(n, n) for n in used_all}

    def available(t):
        """The template states only what the article states."""
        return all(ALIASES.get(n, n) in said_in_article for n in t.slots)

    in_lead: dict = {}

    def outside_lead(t):
        for n in t.slots:
            if slots[n].typ in FACT_TYPES:
                if n not in in_lead:
                    in_lead[n] = _spaced(slots[n].toks) in lead_text
                if not in_lead[n]:
                    return True
        return False

    if long:
        early_text = _spaced([t for p in paragraphs for s in p for t in s][:LATE_FROM])

        def late(t):
            """States a fact that the article's first LATE_FROM tokens do not state."""
            return any(slots[n].typ in FACT_TYPES and _spaced(slots[n].toks) not in early_text
                       for n in t.slots)

    main = _choose(rng, spec["sum_main"], available)
    fig = None
    if long and rng.random() < LATE_SHARE:
        fig = _choose(rng, spec["sum_figure"], lambda t: available(t) and outside_lead(t) and late(t))
    if fig is None:
        fig = _choose(rng, spec["sum_figure"], lambda t: available(t) and outside_lead(t))
    if main is None or fig is None:
        return None
    chosen = [main, fig]
    short = len(main) + len(fig) < 24  # template lengths: about 30 tokens once filled
    if short or rng.random() < 0.85:
        said = main.slots | fig.slots
        core = set(spec["core"])

        def adds_news(t):
            """Says a new fact and repeats nothing but the main entities."""
            return (t not in chosen and available(t)
                    and any(slots[n].typ in FACT_TYPES for n in t.slots - said)
                    and all(n in core or slots[n].typ == "ent" for n in t.slots & said))

        extra = None
        if long and rng.random() < LATE_SHARE:
            def late_news(t):
                return adds_news(t) and late(t)

            extra = (_choose(rng, spec["sum_extra"], late_news)
                     or _choose(rng, spec["sum_figure"], late_news))
        if extra is None:
            extra = _choose(rng, spec["sum_extra"], adds_news)
        if extra is None:  # a second figure sentence instead
            extra = _choose(rng, spec["sum_figure"], adds_news)
        if extra is not None:
            chosen.insert(randint(rng, 1, 2), extra)
    sum_used = set()
    summary = [fill(t, slots, sum_used) for t in chosen]

    # Facts --------------------------------------------------------------------------
    target = [t for s in summary for t in s]
    key_facts, entities, entity_tokens = [], [], []
    for t in chosen:
        for is_slot, name in t:
            if not is_slot:
                continue
            v = slots[name]
            if v.typ not in FACT_TYPES:
                continue
            text = " ".join(v.toks)
            if text not in key_facts:
                key_facts.append(text)
            if v.typ == "ent" and text not in entities:
                entities.append(text)
                entity_tokens.extend(e for e in v.ents if e not in entity_tokens)
    fact_pars = {f: [i for i, p in enumerate(par_text) if f" {f} " in p] for f in key_facts}
    outside = [f for f in key_facts if 0 not in fact_pars[f] and fact_pars[f]]
    d_used_ents = sorted({e for _, _, ds, du in distractors for n in du for e in ds[n].ents})
    if not outside or set(d_used_ents) & set(target) or set(d_used_ents) & main_ents:
        return None
    if any(not fact_pars[f] for f in key_facts):
        return None
    all_ents = {e for n in used_all | sum_used for e in slots[n].ents} | set(d_used_ents)
    d_entities = _texts_of([ds[n] for _, _, ds, du in distractors for n in sorted(du)], "ent")
    numbers = _texts_of([slots[n] for n in sorted(used_all)], "num")
    facts = {
        "event": kind,
        "distractor_event": distractors[0][0] if distractors else None,
        "entities": entities,
        "entity_tokens": entity_tokens,
        "numbers": numbers,
        "key_facts": key_facts,
        "outside_lead_facts": outside,
        "fact_paragraphs": fact_pars,
        "distractor_entities": d_entities,
        "distractor_entity_tokens": d_used_ents,
        "all_entity_tokens": sorted(all_ents),
        "paragraph_roles": roles,
        "slots": {n: " ".join(slots[n].toks) for n in sorted(used_all)},
    }
    if long:
        facts["distractor_events"] = [d[0] for d in distractors]
    return Example.from_document(paragraphs, summary, facts=facts, id=ex_id,
                                 meta={"dataset": "synthnews-long" if long else "synthnews"})


MAX_PARAGRAPHS = 3 + len(_OPTIONAL_ROLES)  # lead, figures, distractor and the optional roles


def _generate(n, rng, world, min_paragraphs, max_paragraphs, prefix, long=False):
    most = MAX_LONG_PARAGRAPHS if long else MAX_PARAGRAPHS
    if not 2 <= min_paragraphs <= max_paragraphs <= most:
        raise ValueError(f"need 2 <= min_paragraphs <= max_paragraphs <= {most}, "
                         f"got {min_paragraphs}, {max_paragraphs}")
    out = []
    for i in range(n):
        n_par = randint(rng, min_paragraphs, max_paragraphs)
        for _ in range(100):  # an example that breaks a promise (rare) is drawn again
            ex = _make_example(rng, world, n_par, f"{prefix}-{i:06d}", long)
            if ex is not None:
                break
        else:
            raise RuntimeError(f"could not make example {i} of {prefix}")
        out.append(ex)
    return out


def generate(n: int, seed: int = 0, min_paragraphs: int | None = None,
             max_paragraphs: int | None = None, *, long: bool = False,
             world: World | None = None) -> list[Example]:
    """``n`` SynthNews examples with ``min_paragraphs`` to ``max_paragraphs`` paragraphs each.

    The same seed gives the same examples (and a longer run starts with the shorter one's);
    the global ``random`` state is neither used nor changed.  ``long`` writes long articles
    (as in "synthnews-long"; the paragraph range defaults to ``LONG_PARAGRAPHS``, otherwise
    to 3-6); ``world`` defaults to ``World(seed)``.
    """
    lo, hi = LONG_PARAGRAPHS if long else (3, 6)
    min_paragraphs = lo if min_paragraphs is None else min_paragraphs
    max_paragraphs = hi if max_paragraphs is None else max_paragraphs
    world = world if world is not None else World(seed)
    rng = random.Random(f"synthnews/{seed}/generate")
    return _generate(n, rng, world, min_paragraphs, max_paragraphs, f"synthnews-s{seed}", long)


def load_synthnews(n_train: int, n_valid: int, n_test: int, seed: int = 0, long: bool = False):
    """(train, valid, test) from one world, each split from its own random stream.

    ``long=True`` gives "synthnews-long": articles of 9-11 paragraphs, about 800 tokens,
    whose key facts are spread through the whole article (see the module docstring).
    """
    world = World(seed)
    name = "synthnews-long" if long else "synthnews"
    lo, hi = LONG_PARAGRAPHS if long else (3, 6)
    splits = []
    for split, n in (("train", n_train), ("valid", n_valid), ("test", n_test)):
        rng = random.Random(f"{name}/{seed}/{split}")
        splits.append(_generate(n, rng, world, lo, hi, f"{name}-s{seed}-{split}", long))
    return tuple(splits)
