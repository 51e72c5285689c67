"""The simulated world of SynthNews: made-up names, countries, cities and recurring entities.

Also the few random draws every part of the generator uses (:func:`pick`, :func:`sample`,
:func:`randint`, :func:`randrange`): each takes a ``random.Random`` and calls only its
``random()``, so that a seed gives the same data on every Python version.
"""
from __future__ import annotations

import random

from .phrases import CLOSED_WORDS
from .templates import (CLUB_SUFFIXES, CODAS, COMPANY_SUFFIXES, COUNTRY_ENDINGS, FIRST_ENDINGS, LEAGUES,
                        ONSETS, PLACE_ENDINGS, SECTORS, VENUE_FORMS, VOWELS)

SYLLABLES = tuple(o + v + c for o in ONSETS for v in VOWELS for c in CODAS)


def pick(rng, seq):
    """Like ``rng.choice``, with one call to ``random()`` (faster; deterministic for a seed)."""
    return seq[int(rng.random() * len(seq))]


def sample(rng, seq, k: int) -> list:
    """Like ``rng.sample(seq, k)``: k distinct items in random order (partial shuffle)."""
    pool = list(seq)
    n = len(pool)
    if not 0 <= k <= n:
        raise ValueError(f"cannot take {k} of {n} items")
    for i in range(k):
        j = i + int(rng.random() * (n - i))
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def randint(rng, a: int, b: int) -> int:
    """Like ``rng.randint(a, b)``: a <= n <= b."""
    return a + int(rng.random() * (b - a + 1))


def randrange(rng, start: int, stop: int, step: int = 1) -> int:
    """Like ``rng.randrange(start, stop, step)``."""
    return start + step * int(rng.random() * ((stop - start + step - 1) // step))


def make_name(rng, n_min: int, n_max: int, endings=("",)) -> str:
    """A pronounceable made-up name that is not one of the course's common words."""
    syl = SYLLABLES
    k = len(syl)
    while True:
        n = n_min + int(rng.random() * (n_max - n_min + 1))
        name = "".join([syl[int(rng.random() * k)] for _ in range(n)])
        name += endings[int(rng.random() * len(endings))]
        if 5 <= len(name) <= 10 and name not in CLOSED_WORDS and name.isalpha():
            return name


class World:
    """The simulated world of one seed: countries, cities and recurring entities.

    Pickers (:meth:`person`, :meth:`company`, ...) return a record dict with at least
    ``toks`` (the name's tokens), ``ents`` (its entity name tokens) and ``all`` (every entity
    token of the record, attributes included).  A record is never returned if any token of
    ``all`` is in ``avoid``: that is how a distractor paragraph is kept apart from the main
    event.  ``famous`` is the chance of reusing a recurring entity instead of making one.
    """

    def __init__(self, seed: int = 0, *, famous: float = 0.35, n_countries: int = 24,
                 n_cities: int = 160, n_people: int = 300, n_companies: int = 160,
                 n_clubs: int = 48, n_universities: int = 30):
        self.seed = seed
        self.famous = famous
        rng = random.Random(f"synthnews-world/{seed}")
        self._used_names: set = set()
        self.countries = []
        while len(self.countries) < n_countries:
            name = self._fresh(rng, 2, 2, COUNTRY_ENDINGS)
            self.countries.append({"name": name, "cities": []})
        self.cities = []
        for _ in range(n_cities):
            country = pick(rng, self.countries)
            city = self._fresh(rng, 1, 3, PLACE_ENDINGS)
            country["cities"].append(city)
            self.cities.append((city, country))
        self.people = [self._new_person(rng) for _ in range(n_people)]
        self.companies = [self._new_company(rng, set(), famous_only=True) for _ in range(n_companies)]
        self.clubs = [self._new_club(rng, set(), famous_only=True) for _ in range(n_clubs)]
        self.universities = [self._new_university(rng, set(), famous_only=True)
                             for _ in range(n_universities)]

    # -- names -----------------------------------------------------------------------
    def _fresh(self, rng, n_min, n_max, endings=("",)) -> str:
        while True:
            name = make_name(rng, n_min, n_max, endings)
            if name not in self._used_names:
                self._used_names.add(name)
                return name

    def _new_person(self, rng) -> dict:
        first = make_name(rng, 1, 2, FIRST_ENDINGS)
        last = make_name(rng, 2, 3)
        while last == first:
            last = make_name(rng, 2, 3)
        return {"toks": (first, last), "ents": (first, last), "all": {first, last}}

    # -- pickers ---------------------------------------------------------------------
    def _from_pool(self, rng, pool, avoid, tries: int = 8):
        if pool and rng.random() < self.famous:
            for _ in range(tries):
                rec = pick(rng, pool)
                if not (rec["all"] & avoid):
                    return rec
        return None

    def country(self, rng, avoid) -> dict:
        """Countries are few: nearly always one of the world's countries."""
        for _ in range(20):
            c = pick(rng, self.countries)
            if c["name"] not in avoid:
                return c
        while True:
            name = make_name(rng, 2, 2, COUNTRY_ENDINGS)
            if name not in avoid:
                return {"name": name, "cities": []}

    def city(self, rng, avoid, country=None) -> tuple:
        """(city name, country record); a famous city w.p. 2 x ``famous``."""
        if country is None:
            if rng.random() < min(1.0, 2 * self.famous):
                for _ in range(8):
                    city, c = pick(rng, self.cities)
                    if city not in avoid and c["name"] not in avoid:
                        return city, c
            country = self.country(rng, avoid)
        elif country["cities"] and rng.random() < min(1.0, 2 * self.famous):
            city = pick(rng, country["cities"])
            if city not in avoid:
                return city, country
        while True:
            city = make_name(rng, 1, 3, PLACE_ENDINGS)
            if city not in avoid:
                return city, country

    def person(self, rng, avoid) -> dict:
        rec = self._from_pool(rng, self.people, avoid)
        while rec is None or rec["all"] & avoid:
            rec = self._new_person(rng)
        return rec

    def _new_company(self, rng, avoid, famous_only=False) -> dict:
        while True:
            core = self._fresh(rng, 2, 3) if famous_only else make_name(rng, 2, 3)
            if core not in avoid:
                break
        suffix = pick(rng, COMPANY_SUFFIXES)
        city, country = self.city(rng, avoid) if not famous_only else pick(rng, self.cities)
        ceo = self.person(rng, avoid | {core, city, country["name"]}) if not famous_only \
            else pick(rng, self.people)
        rec = {"toks": (core, suffix), "ents": (core,), "sector": pick(rng, SECTORS),
               "city": city, "country": country, "founded": randint(rng, 1890, 2015),
               "ceo": ceo, "staff": pick(rng, (120, 300, 800, 2_000, 5_000, 12_000, 40_000))}
        rec["all"] = {core, city, country["name"]} | ceo["all"]
        return rec

    def company(self, rng, avoid) -> dict:
        rec = self._from_pool(rng, self.companies, avoid)
        return rec if rec is not None else self._new_company(rng, avoid)

    def _new_club(self, rng, avoid, famous_only=False) -> dict:
        if famous_only:
            city, country = pick(rng, self.cities)
            coach = pick(rng, self.people)
        else:
            city, country = self.city(rng, avoid)
            coach = self.person(rng, avoid | {city, country["name"]})
        suffix = pick(rng, CLUB_SUFFIXES)
        venue_name = self._fresh(rng, 2, 2) if famous_only else make_name(rng, 2, 2)
        article, noun = pick(rng, VENUE_FORMS)
        venue = tuple(t for t in (article, venue_name, noun) if t)
        rec = {"toks": (city, suffix), "ents": (city,), "city": city, "country": country,
               "coach": coach, "venue": venue, "venue_ents": (venue_name,),
               "league": pick(rng, LEAGUES)}
        rec["all"] = {city, country["name"], venue_name} | coach["all"]
        if rec["all"] & avoid:
            return self._new_club(rng, avoid, famous_only)
        return rec

    def club(self, rng, avoid) -> dict:
        rec = self._from_pool(rng, self.clubs, avoid)
        return rec if rec is not None else self._new_club(rng, avoid)

    def _new_university(self, rng, avoid, famous_only=False) -> dict:
        if famous_only:
            city, country = pick(rng, self.cities)
        else:
            city, country = self.city(rng, avoid)
        if rng.random() < 0.6:
            toks, ents = ("the", "university", "of", city), (city,)
        else:
            core = self._fresh(rng, 2, 3) if famous_only else make_name(rng, 2, 3)
            toks, ents = ("the", core, "institute"), (core,)
        rec = {"toks": toks, "ents": ents, "city": city, "country": country,
               "founded": randint(rng, 1800, 1990),
               "students": pick(rng, (4_000, 9_000, 15_000, 22_000, 31_000, 45_000))}
        rec["all"] = set(ents) | {city, country["name"]}
        if rec["all"] & avoid:
            return self._new_university(rng, avoid, famous_only)
        return rec

    def university(self, rng, avoid) -> dict:
        rec = self._from_pool(rng, self.universities, avoid)
        return rec if rec is not None else self._new_university(rng, avoid)

    def name_rec(self, rng, avoid, before=(), after=(), n_min=2, n_max=3, endings=("",)) -> dict:
        """A fresh one-token name inside fixed words, e.g. ``storm kalia``, ``tovra union``."""
        while True:
            core = make_name(rng, n_min, n_max, endings)
            if core not in avoid:
                break
        return {"toks": tuple(before) + (core,) + tuple(after), "ents": (core,), "all": {core}}