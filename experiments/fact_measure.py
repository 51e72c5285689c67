"""Cheaters against the two fact measures: what a fixed list of words scores (issue 45, part 1).

    python experiments/fact_measure.py          # writes results/fact_measure.json and .md

``fact_recall`` counts a key fact stated anywhere; ``attributed_fact_recall`` counts it only where it
is stated with what it is about (``dca_course.metrics.attributed_facts``).  Each summary below is
scored on both, on the articles of notebooks 05 and 06:

* fixed lists, the same for every article: the k most frequent one-token key facts of the
  training articles (weekdays, small numbers, years) and the k most frequent key-fact tokens;
* the 10 most frequent sentences of the training summaries, the same for every article (a fixed
  text whose facts stand in sentences: the floor of the attributed measure);
* the key facts alone, with no sentence around them;
* lead-3, the reference, and the whole article (a faithful text states every fact in its place).

Nothing is trained; the figures are the same on every machine.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root first (CONTRIBUTING.md, "Scripts")
from tools.provenance import RESULTS, command_line, write_report  # noqa: E402

from dca_course.data.synthnews import frequent_facts, lead_sentences, load_synthnews, slot_contexts  # noqa: E402
from dca_course.metrics import fact_metrics  # noqa: E402

SETTINGS = {   # name -> load_synthnews arguments: notebook 05's articles, notebook 06's
    "synthnews (05: 2,000 train, 400 test)": dict(n_train=2000, n_valid=0, n_test=400, seed=0, long=False),
    "synthnews-long (06: 800 train, 60 test)": dict(n_train=800, n_valid=0, n_test=60, seed=0, long=True),
}
SIZES = (20, 40)


def frequent_sentences(train, k) -> list[str]:
    """The k most frequent sentences of the training summaries, one after another: a fixed summary
    whose facts do stand in sentences (those with no name in them: "... leave on tuesday .")."""
    counts = Counter(tuple(s) for ex in train for s in (ex.target_sents or [ex.target]))
    return [t for s, _ in counts.most_common(k) for t in s]


def summarisers(train) -> dict:
    """name -> function from an article to its summary's tokens."""
    out = {}
    for k in SIZES:
        out[f"{k} frequent one-token facts"] = (lambda ex, w=frequent_facts(train, k): w)
        out[f"{k} frequent fact tokens"] = (lambda ex, w=frequent_facts(train, k, single_token=False): w)
    out["10 frequent summary sentences"] = lambda ex, w=frequent_sentences(train, 10): w
    out["the key facts alone"] = lambda ex: [t for f in ex.facts["key_facts"] for t in f.split()]
    out["lead-3"] = lambda ex: [t for s in lead_sentences(ex, 3) for t in s]
    out["reference"] = lambda ex: list(ex.target)
    out["whole article"] = lambda ex: list(ex.source)
    return out


def main() -> None:
    data, lists = {}, {}
    for setting, kw in SETTINGS.items():
        train, _, test = load_synthnews(kw["n_train"], kw["n_valid"], kw["n_test"], seed=kw["seed"], long=kw["long"])
        data[setting] = {name: {k: round(v, 4) for k, v in fact_metrics([f(ex) for ex in test], test,
                                                                        contexts_of=slot_contexts).items()
                                if "fact_recall" in k}
                         for name, f in summarisers(train).items()}
        lists[setting] = {f"{k} frequent one-token facts": frequent_facts(train, k) for k in SIZES}
    cols = ["fact_recall", "attributed_fact_recall", "late_fact_recall", "attributed_late_fact_recall"]
    md = ["# Fact measures against cheaters", "",
          "`fact_recall` counts a key fact stated anywhere; `attributed_fact_recall` only where it is stated with "
          "what it is about. Late: the key facts beyond token 400 (long articles only).", ""]
    for setting, rows in data.items():
        md += [f"## {setting}", "", "| summary | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        md += ["| " + name + " | " + " | ".join(f"{r[c]:.3f}" if c in r else "" for c in cols) + " |"
               for name, r in rows.items()]
        md += ["", "The 20 frequent one-token facts: " + " ".join(lists[setting]["20 frequent one-token facts"]), ""]
    write_report(RESULTS, "fact_measure", {"rows": data, "lists": lists}, "\n".join(md),
                 command=command_line(__file__), config={"settings": SETTINGS, "sizes": list(SIZES)},
                 measures=["dca_course/metrics.py", "dca_course/data/synthnews", "experiments/fact_measure.py"])
    print("\n".join(md))


if __name__ == "__main__":
    main()
