"""Metrics: accuracy, exact match, ROUGE (rouge-score), repetition and novelty of n-grams.

ROUGE is computed by Google's ``rouge-score`` package with the Porter stemmer, the
reimplementation most papers since 2019 report.  ROUGE-Lsum treats newlines as sentence
breaks, so summaries are passed as newline-separated sentences.  F1 is reported in
[0, 100], as papers print it; accuracies and rates are fractions in [0, 1].
"""
from __future__ import annotations

from typing import Iterable, Sequence

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def accuracy(predictions: Sequence, references: Sequence) -> float:
    """Share of predictions equal to their reference (sequences compare as a whole)."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not references:
        return 0.0
    return sum(list(p) == list(r) if not isinstance(p, (str, int)) else p == r
               for p, r in zip(predictions, references)) / len(references)


exact_match = accuracy


def token_accuracy(predictions: Sequence[Sequence], references: Sequence[Sequence]) -> float:
    """Share of reference positions whose token the prediction has at the same position."""
    right = total = 0
    for p, r in zip(predictions, references):
        total += len(r)
        right += sum(a == b for a, b in zip(p, r))
    return right / total if total else 0.0


def _scorer(types=ROUGE_TYPES):
    from rouge_score import rouge_scorer
    return rouge_scorer.RougeScorer(list(types), use_stemmer=True)


def rouge(predictions: Sequence[str], references: Sequence[str], types=ROUGE_TYPES) -> dict:
    """Mean ROUGE F1 (x100) over examples.  Texts are strings with sentences on separate lines."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not references:
        return {t: 0.0 for t in types}
    scorer = _scorer(types)
    sums = dict.fromkeys(types, 0.0)
    for pred, ref in zip(predictions, references):
        scores = scorer.score(ref, pred)  # rouge-score takes (target, prediction)
        for t in types:
            sums[t] += scores[t].fmeasure
    return {t: 100.0 * s / len(references) for t, s in sums.items()}


def ngrams(tokens: Sequence[str], n: int) -> list[tuple]:
    return [tuple(tokens[i: i + n]) for i in range(len(tokens) - n + 1)]


def repeated_ngram_rate(tokens: Sequence[str], n: int = 3) -> float:
    """Share of a text's n-grams that repeat an n-gram seen earlier in the same text."""
    grams = ngrams(tokens, n)
    if not grams:
        return 0.0
    return (len(grams) - len(set(grams))) / len(grams)


def has_repeated_ngram(tokens: Sequence[str], n: int = 2) -> bool:
    """True if some n-gram occurs twice or more in ``tokens`` (overlaps count: "a a a" repeats "a a")."""
    grams = ngrams(tokens, n)
    return len(set(grams)) < len(grams)


def has_stutter(tokens: Sequence[str]) -> bool:
    """True if a token comes twice in a row ("59 59", "the the", ". ."): no English sentence does that."""
    return any(a == b for a, b in zip(tokens, tokens[1:]))


def verbless_sentences(tokens: Sequence[str], verbs: Iterable[str]) -> list[list[str]]:
    """The sentences of ``tokens`` (cut after ".", "!" or "?"; an unfinished last one counts) that hold
    no word of ``verbs``, a closed list of verb forms (SynthNews's: ``data.synthnews.VERBS``).
    A word of the list used as a noun ("the find") counts as a verb, so this undercounts."""
    verbs = set(verbs)
    return [s for s in _sentences(list(tokens)) if not verbs.intersection(s)]


def ungrammatical_rates(predictions: Sequence[Sequence[str]], verbs: Iterable[str]) -> dict:
    """Shares of summaries (token lists) with each mark of broken grammar: ``repeated_bigram`` (a bigram
    twice, :func:`has_repeated_ngram`), ``stutter`` (a word twice in a row), ``no_verb`` (a sentence
    with no verb of ``verbs``, :func:`verbless_sentences`; an empty summary counts) and ``any`` (one of
    the three).  Fractions in [0, 1]; all 0 for no predictions."""
    verbs = set(verbs)
    marks = [(has_repeated_ngram(p, 2), has_stutter(p), not p or bool(verbless_sentences(p, verbs)))
             for p in predictions]
    n = len(marks) or 1
    return {"repeated_bigram": sum(m[0] for m in marks) / n, "stutter": sum(m[1] for m in marks) / n,
            "no_verb": sum(m[2] for m in marks) / n, "any": sum(any(m) for m in marks) / n}


def novel_ngram_rate(summary: Sequence[str], source: Sequence[str], n: int = 2) -> float:
    """Share of a summary's n-grams that do not occur in the source (how abstractive it is)."""
    grams = ngrams(summary, n)
    if not grams:
        return 0.0
    seen = set(ngrams(source, n))
    return sum(g not in seen for g in grams) / len(grams)


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def summary_metrics(predictions: Sequence[Sequence[str]], references: Sequence[str],
                    sources: Sequence[Sequence[str]]) -> dict:
    """ROUGE-1/2/L/Lsum, repeated trigrams and novel bigrams for token-list predictions.

    ``references`` are newline-separated sentence strings; predictions are split into
    sentences at ``.`` so that ROUGE-Lsum sees sentence breaks on both sides.
    """
    texts = [sentences_to_text(p) for p in predictions]
    out = rouge(texts, references)
    out["repeated_trigrams"] = mean(repeated_ngram_rate(p, 3) for p in predictions)
    out["novel_bigrams"] = mean(novel_ngram_rate(p, s, 2) for p, s in zip(predictions, sources))
    return out


def sentences_to_text(tokens: Sequence[str], enders: tuple = (".", "!", "?")) -> str:
    """Tokens -> text with one sentence per line (for ROUGE-Lsum)."""
    lines, cur = [], []
    for tok in tokens:
        cur.append(tok)
        if tok in enders:
            lines.append(" ".join(cur))
            cur = []
    if cur:
        lines.append(" ".join(cur))
    return "\n".join(lines)



# -- facts (SynthNews) ---------------------------------------------------------------------------
# A SynthNews example knows its facts (see dca_course.data.synthnews): ``key_facts`` are the
# space-joined token strings a good summary states (names, numbers, dates), and
# ``all_entity_tokens`` the name tokens of every entity the article or its summary names.
# These are the only fact metrics of the course; the data set itself keeps only the facts.


def contains(tokens: Sequence[str], fact) -> bool:
    """True if the fact's tokens (a string or a token sequence) occur contiguously in ``tokens``:
    what "the text states the fact" means for every fact metric."""
    f = fact.split() if isinstance(fact, str) else list(fact)
    n = len(f)
    if n == 0:
        return True
    first = f[0]
    return any(tokens[i] == first and list(tokens[i: i + n]) == f for i in range(len(tokens) - n + 1))


def fact_recall(pred_tokens: Sequence[str], facts: dict) -> float:
    """Share of ``facts["key_facts"]`` that the prediction states word for word (0 if none)."""
    keys = facts.get("key_facts") or []
    return sum(contains(pred_tokens, f) for f in keys) / len(keys) if keys else 0.0


def late_facts(source_tokens: Sequence[str], facts: dict, first: int = 400) -> list:
    """The key facts that the first ``first`` source tokens do not state: what a reader of only
    those tokens (See et al.'s pointer-generator reads 400) can never copy."""
    head = list(source_tokens[:first])
    return [f for f in facts.get("key_facts") or () if not contains(head, f)]


def hallucinated_entities(pred_tokens: Sequence[str], source_tokens: Sequence[str], facts: dict,
                          entity_tokens: Iterable[str] = ()) -> list[str]:
    """Entity name tokens in the prediction that its source does not contain (in order, repeats kept).

    An entity token is one of this example's ``facts["all_entity_tokens"]``, or of
    ``entity_tokens``: pass the name tokens of other articles too (:func:`fact_metrics` passes
    those of every article it scores), so that a name the model brings in from *another*
    article (the typical hallucination of a model that cannot copy and falls back on names it
    saw in training) counts.
    """
    names = set(facts.get("all_entity_tokens") or ()) | set(entity_tokens)
    src = set(source_tokens)
    return [t for t in pred_tokens if t in names and t not in src]


def fact_metrics(predictions: Sequence[Sequence[str]], examples: Sequence, entity_tokens: Iterable[str] = (),
                 contexts_of=None) -> dict:
    """``fact_recall`` (mean share of key facts stated) and ``hallucinated_entities`` (mean number
    of entity tokens per summary that its source does not contain) over examples with ``facts``;
    an empty dict when no example has facts.  Where some articles hold key facts beyond their
    first 400 tokens (SynthNews-long), also ``late_fact_recall``: the mean share of those
    :func:`late_facts` stated, over the articles that have any.  The entity tokens are those of all the scored
    examples (names recur across articles: a generator that cannot copy tends to write the
    frequent names it saw in training) plus ``entity_tokens``.

    Where every article names its ``event``, with ``contexts_of(event)``
    (:func:`dca_course.data.synthnews.slot_contexts`) also ``attributed_fact_recall``
    (:func:`attributed_fact_recall`: each fact stated with what it is about) and, on long articles,
    ``attributed_late_fact_recall``: the measures that a fixed list of frequent words cannot game."""
    pairs = [(p, ex) for p, ex in zip(predictions, examples) if getattr(ex, "facts", None)]
    if not pairs:
        return {}
    names = set(entity_tokens)
    for _, ex in pairs:
        names.update(ex.facts.get("all_entity_tokens") or ())
    out = {"fact_recall": mean(fact_recall(p, ex.facts) for p, ex in pairs),
           "hallucinated_entities": mean(len(hallucinated_entities(p, ex.source, ex.facts, names))
                                         for p, ex in pairs)}
    late = [(p, ex, facts) for p, ex in pairs if (facts := late_facts(ex.source, ex.facts))]
    if late:     # long articles: the key facts beyond token 400, stated (over the articles that have some)
        out["late_fact_recall"] = mean(sum(contains(p, f) for f in facts) / len(facts) for p, _, facts in late)
    if contexts_of is not None and all("event" in ex.facts for _, ex in pairs):   # SynthNews: templates known
        out["attributed_fact_recall"] = mean(attributed_fact_recall(p, ex.facts, contexts_of(ex.facts["event"]))
                                             for p, ex in pairs)
        if late:
            def stated(p, ex, facts):
                said = attributed_facts(p, ex.facts, contexts_of(ex.facts["event"]))
                return sum(f in said for f in facts) / len(facts)
            out["attributed_late_fact_recall"] = mean(stated(p, ex, facts) for p, ex, facts in late)
    return out


def oov_entity_recall(pred_tokens: Sequence[str], facts: dict, vocab) -> float | None:
    """Share of the reference's key entity tokens that are out of ``vocab`` (any container of
    words) and that the prediction names: what only a copying model can get (None if the
    reference has no such token)."""
    oov = [t for t in facts.get("entity_tokens") or () if t not in vocab]
    if not oov:
        return None
    pred = set(pred_tokens)
    return sum(t in pred for t in oov) / len(oov)


def _sentences(tokens: Sequence[str], enders: tuple = (".", "!", "?")) -> list[list[str]]:
    """Token lists cut after each sentence end; a closing quotation mark stays with its sentence."""
    out, cur = [], []
    for tok in tokens:
        if tok == '"' and not cur and out and out[-1].count('"') % 2:     # it closes a quote
            out[-1].append(tok)
            continue
        cur.append(tok)
        if tok in enders:
            out.append(cur)
            cur = []
    return out + [cur] if cur else out


def placed_facts(pred_tokens: Sequence[str], facts: dict, contexts: dict) -> list[tuple[str, frozenset]]:
    """The article's facts that the prediction states in a context its templates know, in order:
    ``(fact, places)`` pairs, ``places`` being the slots that such a context holds.

    A SynthNews article fills its templates' slots (``facts["slots"]``: slot -> value) and
    ``contexts`` (:func:`dca_course.data.synthnews.slot_contexts` of the article's event) says
    which slots its templates put between which words.  In each sentence of the prediction the
    article's facts are found (its slot values that are numbers, names or key facts, and the
    distractor's names; the longest first, not overlapping; any other slot value found beside a
    fact reads ``"*"``, as a slot does in ``contexts``); for each, the most specific known context
    (up to two words each side; all contexts with that many words, together) gives the slots it
    may stand for.  A fact in no known context (a garbled sentence, a list of words) is left out.
    """
    slots = facts.get("slots") or {}
    names = set(facts.get("all_entity_tokens") or ())
    known = {v for v in slots.values() if v in (facts.get("numbers") or ()) or v in (facts.get("key_facts") or ())
             or any(t in names for t in v.split())}
    known |= set(facts.get("distractor_entities") or ())
    words = set(slots.values()) | {v.split(" ", 1)[1] for k, v in slots.items() if k.startswith("a_")}
    by_length = sorted(known | words, key=lambda v: (-len(v.split()), v))   # word slots too: "*"
    width = max((len(side) for key in contexts for side in key), default=1)
    found: list[tuple[str, frozenset]] = []
    for sent in _sentences(list(pred_tokens)):
        spans = {}                                                   # start -> (end, value)
        taken = [False] * len(sent)
        for value in by_length:
            f = value.split()
            for i in range(len(sent) - len(f) + 1):
                if sent[i: i + len(f)] == f and not any(taken[i: i + len(f)]):
                    taken[i: i + len(f)] = [True] * len(f)
                    spans[i] = (i + len(f), value)
        padded = ["<s>"] * width + ["*" if t else w for t, w in zip(taken, sent)] + ["</s>"] * width
        for start, (end, value) in sorted(spans.items()):
            if value not in known:                                   # a word slot ("an insurance"): no fact
                continue
            j, e = start + width, end + width                        # the fact's place in `padded`
            for n in range(2 * width, 1, -1):                        # words of context: the most first
                places = set().union(*(contexts.get((tuple(padded[j - k: j]), tuple(padded[e: e + n - k])), ())
                                       for k in range(max(1, n - width), min(width, n - 1) + 1)))
                if places:
                    found.append((value, frozenset(places)))
                    break
    return found


def misattributed_facts(pred_tokens: Sequence[str], facts: dict, contexts: dict) -> list[tuple[str, str]]:
    """Facts the prediction states in the place of another: a number, a name or a team under the
    wrong person or relation ("tomiara rokamal hit 90 goals" where 90 is his caps, "joins niora
    wanderers from shiul wanderers" with the clubs swapped).  Returns ``(fact, slot)`` pairs, in
    order, each once: the fact as written and the slot whose place it takes.

    The facts and the slots their contexts stand for are :func:`placed_facts`'s.  The fact is
    *misattributed* when none of those slots holds it in this article (the pair names one of
    them).  A fact in no known context (a garbled sentence) is not judged; a word the article never
    states is a hallucination, not counted here; a distractor's sentence copied whole counts (its
    names stand where this event's templates put their own).  The references, and the article's
    own sentences outside its distractors, score 0 (``tests/test_misattribution.py``).
    """
    slots = facts.get("slots") or {}
    found: list[tuple[str, str]] = []
    for value, places in placed_facts(pred_tokens, facts, contexts):
        if all(slots.get(s) != value for s in places):
            pair = (value, min(places))
            if pair not in found:
                found.append(pair)
    return found


def attributed_facts(pred_tokens: Sequence[str], facts: dict, contexts: dict) -> set[str]:
    """The key facts the prediction states *with what they are about*: in a context that the
    article's templates use for a slot that holds this very fact (:func:`placed_facts`).  "59" counts
    in "left 59 people dead" when 59 is the storm's death toll; in a list of frequent words, in a
    garbled sentence, or under the wrong relation it does not."""
    slots = facts.get("slots") or {}
    keys = set(facts.get("key_facts") or ())
    return {value for value, places in placed_facts(pred_tokens, facts, contexts)
            if value in keys and any(slots.get(s) == value for s in places)}


def attributed_fact_recall(pred_tokens: Sequence[str], facts: dict, contexts: dict) -> float:
    """Share of ``facts["key_facts"]`` stated with what they are about (:func:`attributed_facts`);
    0 if there are none.  :func:`fact_recall` counts a fact found anywhere, so a fixed list of
    frequent weekdays and small numbers scores on it; here such a list scores about 0
    (``tests/test_attributed_facts.py``)."""
    keys = facts.get("key_facts") or []
    return len(attributed_facts(pred_tokens, facts, contexts)) / len(keys) if keys else 0.0


def misattribution(predictions: Sequence[Sequence[str]], examples: Sequence, contexts_of) -> dict:
    """Over the examples with facts: ``misattributed_facts``, the mean number of facts per summary
    stated in another's place (:func:`misattributed_facts`), and ``misattributing_summaries``, the
    share of summaries with at least one.  ``contexts_of(event)`` gives an event kind's contexts
    (:func:`dca_course.data.synthnews.slot_contexts`).  An empty dict when no example has facts."""
    counts = [len(misattributed_facts(p, ex.facts, contexts_of(ex.facts["event"])))
              for p, ex in zip(predictions, examples) if getattr(ex, "facts", None)]
    if not counts:
        return {}
    return {"misattributed_facts": mean(counts), "misattributing_summaries": mean(c > 0 for c in counts)}
