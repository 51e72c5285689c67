"""Toy source -> target tasks, generated on the spot: date normalisation and string reversal.

``dates``: a date written the way people write it -> ISO 8601, one character a token::

    "march 3rd 2021"  -> "2021-03-03"
    "3 mar, 2021"     -> "2021-03-03"
    "wednesday, 3 march 2021" -> "2021-03-03"

Attention shines here: each output digit comes from a few source characters (the year from
the year, the month from the month's name), which a heatmap shows at a glance.

``reverse``: a random string of letters -> the same string backwards; the ideal alignment is
the anti-diagonal.
"""
from __future__ import annotations

import datetime as dt
import random

from .examples import Example

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


# Each format takes a date and returns how a person might write it.
DATE_FORMATS = [
    lambda d: f"{MONTHS[d.month - 1]} {ordinal(d.day)} {d.year}",
    lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}",
    lambda d: f"{MONTHS[d.month - 1][:3]} {d.day}, {d.year}",
    lambda d: f"the {ordinal(d.day)} of {MONTHS[d.month - 1]} {d.year}",
    lambda d: f"{WEEKDAYS[d.weekday()]}, {d.day} {MONTHS[d.month - 1]} {d.year}",
    lambda d: f"{d.day}.{d.month:02d}.{d.year}",
    lambda d: f"{d.year}/{d.month}/{d.day}",
    lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}",
]


def dates(n: int, seed: int = 0, start: int = 1950, end: int = 2049) -> list[Example]:
    """``n`` (human date, ISO date) pairs as character lists, drawn with ``random.Random(seed)``."""
    rng = random.Random(seed)
    first = dt.date(start, 1, 1).toordinal()
    last = dt.date(end, 12, 31).toordinal()
    out = []
    for i in range(n):
        d = dt.date.fromordinal(rng.randint(first, last))
        fmt = rng.randrange(len(DATE_FORMATS))
        text = DATE_FORMATS[fmt](d)
        out.append(Example(list(text), list(d.isoformat()), id=f"dates-{seed}-{i}", meta={"format": fmt}))
    return out


def reverse(n: int, seed: int = 0, min_len: int = 4, max_len: int = 12,
            alphabet: str = "abcdefghijklmnopqrstuvwxyz") -> list[Example]:
    """``n`` (string, reversed string) pairs of letters."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        s = [rng.choice(alphabet) for _ in range(rng.randint(min_len, max_len))]
        out.append(Example(s, s[::-1], id=f"reverse-{seed}-{i}"))
    return out


TASKS = {"dates": dates, "reverse": reverse}


def load_toy(name: str, n_train: int, n_valid: int, n_test: int, seed: int = 0):
    """Train/valid/test splits drawn from separate seeds; test pairs never occur in training."""
    if name not in TASKS:
        raise ValueError(f"unknown toy task {name!r}; choose from {sorted(TASKS)}")
    make = TASKS[name]
    train = make(n_train, seed=seed * 3 + 1)
    seen = {tuple(ex.source) for ex in train}
    held_out = [ex for ex in make(3 * (n_valid + n_test) + 10, seed=seed * 3 + 2) if tuple(ex.source) not in seen]
    if len(held_out) < n_valid + n_test:
        raise ValueError(f"toy:{name} cannot draw {n_valid + n_test} held-out pairs unseen in training")
    return train, held_out[:n_valid], held_out[n_valid: n_valid + n_test]
