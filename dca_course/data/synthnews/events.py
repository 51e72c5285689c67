"""The ten event kinds of SynthNews and the facts each one draws.

An event is a set of *slots* (who, whom, where, when, how much), each a :class:`Val`.  A fact
builder draws one event's slots from the :class:`~.world.World`; :data:`EVENTS` is the table
of every kind: its name, its fact builder and its compiled templates (:mod:`.phrases`).  The
generator draws a kind from :data:`EVENT_KINDS`, the table's keys in order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from .phrases import PHRASINGS
from .templates import (ANIMALS, CASES, EARNINGS_DIRS, ELECTION_WORDS, FIELDS, FIRST_ENDINGS, HABITAT_FORMS,
                        ISSUES, JOURNALS, MONTHS, ORDINALS, PARTIES, POSITIONS, PREV_JOBS, PRODUCT_SUFFIXES,
                        PRODUCT_TYPES, QUARTERS, STORM_TYPES, WEEKDAYS, WORD_NUMBERS)
from .world import World, make_name, pick, randint, randrange, sample


# --------------------------------------------------------------------------------------
# Slot values
# --------------------------------------------------------------------------------------
class Val(NamedTuple):
    """A slot value: its tokens, its type and the entity name tokens among them.

    Types: ``ent`` (a named entity), ``num`` (a number or amount), ``date``, ``word`` (a
    closed-class description such as a sector) and ``role`` (a phrase such as "the chief
    executive of orvena labs").  Only ``ent``, ``num`` and ``date`` values are facts.
    """

    toks: tuple
    typ: str
    ents: tuple = ()


FACT_TYPES = ("ent", "num", "date")


def _w(text: str) -> Val:
    return Val(tuple(text.split()), "word")


def _a(text: str) -> Val:
    """A word value with its indefinite article: 'an electric car', 'a laptop'."""
    return _w(("an " if text[0] in "aeiou" else "a ") + text)


def _n(text: str) -> Val:
    return Val(tuple(text.split()), "num")


def _d(text: str) -> Val:
    return Val(tuple(text.split()), "date")


def _role(*parts) -> Val:
    """A phrase built from words and values, e.g. ``_role("the boss of", company)``."""
    toks, ents = [], []
    for p in parts:
        if isinstance(p, Val):
            toks.extend(p.toks)
            ents.extend(p.ents)
        else:
            toks.extend(p.split())
    return Val(tuple(toks), "role", tuple(ents))


def _ent(rec) -> Val:
    return Val(rec["toks"], "ent", rec["ents"])
# --------------------------------------------------------------------------------------
# Number helpers
# --------------------------------------------------------------------------------------
def _money(rng, lo: float, hi: float, cur: str = "$") -> Val:
    """An amount in millions between lo and hi millions: ``$ 850 million``/``$ 4.2 billion``."""
    m = rng.uniform(lo, hi)
    if m >= 1000:
        b = round(m / 1000, 1)
        text = f"{b:.1f}".rstrip("0").rstrip(".")
        return _n(f"{cur} {text} billion")
    if m >= 20:
        return _n(f"{cur} {int(round(m / 5) * 5)} million")
    return _n(f"{cur} {round(m, 1):.1f} million")


def _count(rng, lo: int, hi: int, step: int = 1) -> Val:
    return _n(f"{randrange(rng, lo, hi, step):,}")


def _pct(rng, lo: float, hi: float, decimals: int = 1) -> Val:
    return _n(f"{rng.uniform(lo, hi):.{decimals}f}")


def _year(rng, lo: int, hi: int) -> Val:
    return _n(str(randint(rng, lo, hi)))


def _common(rng, taken) -> dict:
    """Slots every event has: the weekday it happened."""
    return {"day": _d(pick(rng, WEEKDAYS))}


def _org_slots(rec: dict) -> dict:
    return {"org": _ent(rec), "org_founded": _n(str(rec["founded"])),
            "org_city": Val((rec["city"],), "ent", (rec["city"],)),
            "org_country": Val((rec["country"]["name"],), "ent", (rec["country"]["name"],)),
            "org_staff": _n(f"{rec['staff']:,}")}


def _place(name: str) -> Val:
    return Val((name,), "ent", (name,))


def _take(taken: set, rec: dict) -> dict:
    taken.update(rec["ents"])
    return rec


# --------------------------------------------------------------------------------------
# Facts of each event kind: slot name -> Val
# --------------------------------------------------------------------------------------
def acquisition_facts(rng, w: World, taken: set) -> dict:
    buyer = _take(taken, w.company(rng, taken))
    target = _take(taken, w.company(rng, taken))
    ceo = buyer["ceo"]
    s = _common(rng, taken)
    s.update(_org_slots(target))
    price = _money(rng, 150, 40_000)
    s.update(
        buyer=_ent(buyer), target=_ent(target), price=price,
        sector=_w(target["sector"][0]), a_sector=_a(target["sector"][0]),
        products=_w(target["sector"][1]),
        city=_place(target["city"]), country=_place(target["country"]["name"]),
        home_market=_place(target["country"]["name"]),  # the same country, said in another relation
        ceo=_ent(ceo), ceo_year=_year(rng, 2005, 2021),
        n_deals=_w(pick(rng, WORD_NUMBERS[1:6])),
        per_share=_n(f"$ {rng.uniform(5, 180):.2f}"), premium=_n(str(randint(rng, 12, 65))),
        revenue=_money(rng, 40, 9_000), savings=_money(rng, 15, 900),
        save_year=_year(rng, 2026, 2030), save_year_words=_w(pick(rng, WORD_NUMBERS[:4])),
        quarter=_w(pick(rng, QUARTERS)[0]), talks_month=_d(pick(rng, MONTHS)),
        speaker=_ent(ceo), speaker_last=_place(ceo["toks"][-1]),
        speaker_role=_role("chief executive of", _ent(buyer)),
    )
    return s


def match_result_facts(rng, w: World, taken: set) -> dict:
    winner = _take(taken, w.club(rng, taken))
    loser = _take(taken, w.club(rng, taken))
    next_opp = _take(taken, w.club(rng, taken))
    scorer = _take(taken, w.person(rng, taken))
    coach, lcoach = winner["coach"], loser["coach"]
    if set(coach["ents"]) & set(lcoach["ents"]) or set(scorer["ents"]) & (coach["all"] | lcoach["all"]):
        return match_result_facts(rng, w, taken)
    goals_w = randint(rng, 1, 5)
    goals_l = randint(rng, 0, goals_w - 1)
    home = winner if rng.random() < 0.5 else loser
    s = _common(rng, taken)
    games = randint(rng, 8, 36)
    coach_country = w.country(rng, taken | {home["country"]["name"]})
    scorer_country = w.country(rng, taken)
    s.update(
        winner=_ent(winner), loser=_ent(loser), score=_n(f"{goals_w}-{goals_l}"),
        league=_w(winner["league"]), scorer=_ent(scorer), scorer_last=_place(scorer["toks"][-1]),
        venue=Val(home["venue"], "ent", home["venue_ents"]), city=_place(home["city"]),
        streak=_w(pick(rng, ORDINALS[1:])), title_year=_year(rng, 1960, 2020),
        coach=_ent(coach), coach_year=_year(rng, 2012, 2023), coach_country=_place(coach_country["name"]),
        scorer_country=_place(scorer_country["name"]), scorer_year=_year(rng, 2015, 2023),
        attendance=_count(rng, 8_000, 75_000), goals=_n(str(randint(rng, 3, 28))),
        points=_n(str(randint(rng, games, games * 3))), games=_n(str(games)),
        next_opp=_ent(next_opp), next_day=_d(pick(rng, WEEKDAYS)), loser_coach=_ent(lcoach),
        loser_run=_n(str(randint(rng, 3, 15))),
        speaker=_ent(coach), speaker_last=_place(coach["toks"][-1]),
        speaker_role=_role("the", _ent(winner), "coach"),
    )
    return s


def election_facts(rng, w: World, taken: set) -> dict:
    winner = _take(taken, w.person(rng, taken))
    rival = _take(taken, w.person(rng, taken))
    country = w.country(rng, taken)
    taken.add(country["name"])
    office = pick(rng, ("president", "prime minister", "mayor"))
    home_city, _ = w.city(rng, taken, country)
    taken.add(home_city)
    if office == "mayor":
        city, _ = w.city(rng, taken, country)
        taken.add(city)
        office_full = _role("mayor of", _place(city))
        region, capital = _place(city), _place(city)
    else:
        office_full = _role(f"{office} of", _place(country["name"]))
        cap, _ = w.city(rng, taken, country)
        taken.add(cap)
        region, capital = _place(country["name"]), _place(cap)
    party, rival_party = sample(rng, PARTIES, 2)
    prev_job = pick(rng, PREV_JOBS)
    win = rng.uniform(40, 68)
    riv = rng.uniform(max(15.0, 100 - win - 30), min(win - 0.5, 100 - win))
    month = pick(rng, MONTHS)
    s = _common(rng, taken)
    s.update(
        winner=_ent(winner), rival=_ent(rival), office=_w(office), office_full=office_full,
        country=_place(country["name"]), region=region, capital=capital,
        party=_w(party), rival_party=_w(rival_party), last_winner=_w(rival_party), election_word=_w(pick(rng, ELECTION_WORDS)),
        last_year=_year(rng, 2010, 2020), years_word=_w(pick(rng, WORD_NUMBERS[2:])),
        age=_n(str(randint(rng, 38, 71))), prev_job=_w(prev_job), a_prev_job=_a(prev_job),
        entry_year=_year(rng, 1990, 2016), home_city=_place(home_city),
        issue=_w(pick(rng, ISSUES)), win_share=_n(f"{win:.1f}"), rival_share=_n(f"{riv:.1f}"),
        turnout=_pct(rng, 38, 82), margin=_count(rng, 1_200, 900_000, 7),
        inaug_date=_d(f"{month} {randint(rng, 1, 28)}"),
        speaker=_ent(winner), speaker_last=_place(winner["toks"][-1]),
        speaker_role=_w("the winning candidate"),
    )
    return s


def storm_facts(rng, w: World, taken: set) -> dict:
    storm = _take(taken, w.name_rec(rng, taken, before=(pick(rng, STORM_TYPES),), n_min=1,
                                    n_max=2, endings=FIRST_ENDINGS))
    city, country = w.city(rng, taken)
    taken.update((city, country["name"]))
    official = _take(taken, w.person(rng, taken))
    day_i = randint(rng, 0, 6)
    s = {"day": _d(WEEKDAYS[day_i]), "prev_day": _d(WEEKDAYS[(day_i - randint(rng, 1, 3)) % 7])}
    s.update(
        storm=_ent(storm), city=_place(city), country=_place(country["name"]),
        dead=_n(str(randint(rng, 2, 60))), last_storm_year=_year(rng, 1950, 2015),
        city_pop=_count(rng, 40_000, 2_500_000, 1_000), official=_ent(official),
        wind=_n(str(randrange(rng, 90, 260, 5))), homes=_count(rng, 5_000, 400_000, 100),
        evacuated=_count(rng, 1_000, 250_000, 100), rain=_n(str(randint(rng, 80, 450))),
        hours=_n(str(pick(rng, (6, 12, 18, 24, 36, 48)))), form_days=_w(pick(rng, WORD_NUMBERS[1:6])),
        speaker=_ent(official), speaker_last=_place(official["toks"][-1]),
        speaker_role=_role("head of the disaster agency in", _place(country["name"])),
    )
    return s


def court_ruling_facts(rng, w: World, taken: set) -> dict:
    plaintiff = _take(taken, w.company(rng, taken))
    defendant = _take(taken, w.company(rng, taken))
    country = defendant["country"]
    city, _ = w.city(rng, taken, country)
    taken.add(city)
    if rng.random() < 0.5:
        court = Val(("the", "supreme", "court", "of", country["name"]), "ent", (country["name"],))
    else:
        court = Val(("the", "high", "court", "in", city), "ent", (city,))
    judge = _take(taken, w.person(rng, taken))
    lawyer = _take(taken, w.person(rng, taken))
    subject, accusation = pick(rng, CASES)
    j_for = randint(rng, 3, 7)
    start = randint(rng, 2008, 2021)
    s = _common(rng, taken)
    s.update(_org_slots(defendant))
    s.update(
        court=court, plaintiff=_ent(plaintiff), defendant=_ent(defendant), city=_place(city),
        country=_place(country["name"]), case_subject=_w(subject), accusation=_w(accusation),
        case_start=_n(str(start)), judge=_ent(judge), judge_year=_year(rng, 1995, 2018),
        damages=_money(rng, 2, 3_000), vote=_n(f"{j_for}-{randint(rng, 0, j_for - 1)}"),
        case_years=_n(str(randint(rng, 2, 9))), pages=_n(str(randrange(rng, 40, 600, 2))),
        pay_days=_n(str(pick(rng, (14, 28, 30, 60, 90)))), lawyer=_ent(lawyer),
        speaker=_ent(lawyer), speaker_last=_place(lawyer["toks"][-1]),
        speaker_role=_role("a lawyer for", _ent(plaintiff)),
    )
    return s


def product_launch_facts(rng, w: World, taken: set) -> dict:
    company = _take(taken, w.company(rng, taken))
    rival = _take(taken, w.company(rng, taken))
    suffix = pick(rng, PRODUCT_SUFFIXES)
    product = _take(taken, w.name_rec(rng, taken, after=(suffix,) if suffix else (), n_min=2, n_max=3))
    ptype, ptypes = pick(rng, PRODUCT_TYPES)
    city, _ = w.city(rng, taken)
    taken.add(city)
    ceo = company["ceo"]
    price = randrange(rng, 149, 2_999, 50)
    s = _common(rng, taken)
    s.update(_org_slots(company))
    s.update(
        company=_ent(company), product=_ent(product), ptype=_w(ptype), ptypes=_w(ptypes),
        a_ptype=_a(ptype),
        city=_place(city), rival=_ent(rival), ceo=_ent(ceo), ceo_year=_year(rng, 2008, 2022),
        price=_n(f"$ {price:,}"), battery=_n(str(randint(rng, 8, 60))),
        preorders=_count(rng, 5_000, 900_000, 500), n_countries=_n(str(randint(rng, 3, 40))),
        release_date=_d(f"{pick(rng, MONTHS)} {randint(rng, 1, 28)}"),
        share_rise=_pct(rng, 0.5, 9), sector=_w(company["sector"][0]),
        speaker=_ent(ceo), speaker_last=_place(ceo["toks"][-1]),
        speaker_role=_role("chief executive of", _ent(company)),
    )
    return s


def player_transfer_facts(rng, w: World, taken: set) -> dict:
    player = _take(taken, w.person(rng, taken))
    from_club = _take(taken, w.club(rng, taken))
    to_club = _take(taken, w.club(rng, taken))
    next_opp = _take(taken, w.club(rng, taken))
    coach = to_club["coach"]
    if set(coach["ents"]) & set(player["ents"]):
        return player_transfer_facts(rng, w, taken)
    country = w.country(rng, taken)
    taken.add(country["name"])
    position, positions = pick(rng, POSITIONS)
    s = _common(rng, taken)
    s.update(
        player=_ent(player), player_last=_place(player["toks"][-1]),
        from_club=_ent(from_club), to_club=_ent(to_club), next_opp=_ent(next_opp),
        position=_w(position), positions=_w(positions), shirt=_n(str(randint(rng, 2, 40))),
        age=_n(str(randint(rng, 19, 33))), joined_year=_year(rng, 2012, 2022),
        caps=_n(str(randint(rng, 3, 90))), player_country=_place(country["name"]),
        to_coach=_ent(coach), coach_year=_year(rng, 2015, 2023),
        fee=_money(rng, 2, 120, cur="£"), contract=_n(pick(rng, ("two-year", "three-year",
                                                                 "four-year", "five-year"))),
        goals=_n(str(randint(rng, 2, 30))), next_day=_d(pick(rng, WEEKDAYS)),
        award_year=_year(rng, 2014, 2023),
        city=_place(to_club["city"]),
        speaker=_ent(coach), speaker_last=_place(coach["toks"][-1]),
        speaker_role=_role("the", _ent(to_club), "coach"),
    )
    return s


def scientific_discovery_facts(rng, w: World, taken: set) -> dict:
    uni = _take(taken, w.university(rng, taken))
    dname = _take(taken, w.name_rec(rng, taken, n_min=2, n_max=3, endings=("a", "is", "us", "ia", "")))
    scientist = _take(taken, w.person(rng, taken))
    country = uni["country"]
    place_name = make_name(rng, 2, 3)
    while place_name in taken:
        place_name = make_name(rng, 2, 3)
    taken.add(place_name)
    place = Val(("the", place_name) + tuple(pick(rng, HABITAT_FORMS).split()), "ent", (place_name,))
    funder = _take(taken, w.name_rec(rng, taken, before=("the",), after=("foundation",)))
    title = pick(rng, ("dr", "professor"))
    sci = Val((title,) + scientist["toks"], "ent", scientist["ents"])
    s = _common(rng, taken)
    s.update(
        university=_ent(uni), dname=_ent(dname), animal=_w(pick(rng, ANIMALS)),
        journal=_w(pick(rng, JOURNALS)), place=place, country=_place(country["name"]),
        scientist=sci, sci_year=_year(rng, 1995, 2020), field=_w(pick(rng, FIELDS)),
        uni_founded=_n(str(uni["founded"])), students=_n(f"{uni['students']:,}"),
        funder=_ent(funder), size=_n(f"{rng.uniform(0.4, 40):.1f}"),
        n_samples=_n(str(randint(rng, 6, 400))), study_years=_n(str(randint(rng, 2, 12))),
        population=_count(rng, 50, 5_000, 50), trip_weeks=_n(str(randint(rng, 2, 14))),
        speaker=sci, speaker_last=_place(scientist["toks"][-1]),
        speaker_role=_role("who led the study at", _ent(uni)),
    )
    return s


def labour_strike_facts(rng, w: World, taken: set) -> dict:
    employer = _take(taken, w.company(rng, taken))
    union = _take(taken, w.name_rec(rng, taken, before=("the",), after=("union",)))
    leader = _take(taken, w.person(rng, taken))
    demand = randint(rng, 6, 20)
    s = _common(rng, taken)
    s.update(_org_slots(employer))
    s.update(
        employer=_ent(employer), union=_ent(union), leader=_ent(leader),
        leader_year=_year(rng, 2008, 2022), city=_place(employer["city"]),
        country=_place(employer["country"]["name"]), last_strike=_year(rng, 1985, 2020),
        strikers=_count(rng, 300, 60_000, 50), demand=_n(str(demand)),
        offer=_n(str(randint(rng, 1, demand - 2))), cost=_money(rng, 0.5, 90),
        strike_days=_n(str(randint(rng, 2, 14))),
        speaker=_ent(leader), speaker_last=_place(leader["toks"][-1]),
        speaker_role=_role("head of", _ent(union)),
    )
    return s


def earnings_facts(rng, w: World, taken: set) -> dict:
    company = _take(taken, w.company(rng, taken))
    city2, _ = w.city(rng, taken | company["all"])
    taken.add(city2)
    d = pick(rng, EARNINGS_DIRS)
    quarter, quarter_end = pick(rng, QUARTERS)
    ceo = company["ceo"]
    s = _common(rng, taken)
    s.update(_org_slots(company))
    s.update(
        company=_ent(company), dir_verb=_w(d["verb"]), dir_past=_w(d["past"]), dir_adj=_w(d["adj"]),
        dir_comp=_w(d["comp"]), dir_move=_w(d["move"]), reason=_w(pick(rng, d["reasons"])),
        quarter=_w(quarter), quarter_end=_w(quarter_end), city=_place(company["city"]),
        ceo=_ent(ceo), ceo_year=_year(rng, 2006, 2022), profit=_money(rng, 3, 4_000),
        change=_n(str(randint(rng, 2, 45))), revenue=_money(rng, 60, 30_000),
        customers=_count(rng, 20_000, 30_000_000, 1_000), results_month=_w(pick(rng, MONTHS)),
        sector=_w(company["sector"][0]), products=_w(company["sector"][1]), city2=_place(city2),
        n_markets=_n(str(randint(rng, 4, 90))),
        speaker=_ent(ceo), speaker_last=_place(ceo["toks"][-1]),
        speaker_role=_role("chief executive of", _ent(company)),
    )
    return s


def observer_slots(rng, world: World, avoid: set) -> dict:
    """The outside observer quoted in a long article's comment paragraph."""
    person = world.person(rng, avoid)
    return {"observer": _ent(person), "observer_last": _place(person["toks"][-1])}


# --------------------------------------------------------------------------------------
# The table of event kinds
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EventKind:
    """One kind of event: ``facts(rng, world, taken)`` draws its slots (slot name -> :class:`Val`;
    the entity tokens it uses join ``taken``), ``templates`` are its compiled phrasings."""

    name: str
    facts: Callable[..., dict]
    templates: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "templates", PHRASINGS[self.name])


# The order is the order of templates.EVENT_TEMPLATES: the generator draws kinds by position,
# so reordering this table would change every generated article.
EVENTS: dict[str, EventKind] = {
    "acquisition": EventKind("acquisition", acquisition_facts),
    "match_result": EventKind("match_result", match_result_facts),
    "election": EventKind("election", election_facts),
    "storm": EventKind("storm", storm_facts),
    "court_ruling": EventKind("court_ruling", court_ruling_facts),
    "product_launch": EventKind("product_launch", product_launch_facts),
    "player_transfer": EventKind("player_transfer", player_transfer_facts),
    "scientific_discovery": EventKind("scientific_discovery", scientific_discovery_facts),
    "labour_strike": EventKind("labour_strike", labour_strike_facts),
    "earnings": EventKind("earnings", earnings_facts),
}
if tuple(EVENTS) != tuple(PHRASINGS):
    raise RuntimeError(f"the event table {tuple(EVENTS)} and the templates {tuple(PHRASINGS)} disagree")

EVENT_KINDS: tuple = tuple(EVENTS)
