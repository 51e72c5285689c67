"""metrics.misattributed_facts: facts stated in the place of another (a number, a name or a team under
the wrong person or relation), counted by hand on built articles, then on generated SynthNews."""
import pytest

from dca_course.data.synthnews import load_synthnews, slot_contexts
from dca_course.metrics import misattributed_facts, misattribution

# One article, by hand: a transfer. The player has 90 caps and scored 16 goals; he moves from
# rovers city to vale town. A distractor paragraph names kel industries.
FACTS = {
    "event": "hand",
    "slots": {"player": "ana bel", "player_last": "bel", "goals": "16", "caps": "90",
              "from_club": "rovers city", "to_club": "vale town", "position": "midfielder"},
    "numbers": ["16", "90"],
    "key_facts": ["ana bel", "vale town", "rovers city", "16"],
    "all_entity_tokens": ["ana", "bel", "rovers", "vale", "kel"],
    "distractor_entities": ["kel industries"],
}
# Where the hand-made templates put each slot: "{player} joins {to_club} from {from_club} .",
# "{player} hit {goals} goals .", "{player} has {caps} caps ." (one word each side: width 1).
CONTEXTS = {
    (("<s>",), ("joins",)): frozenset({"player"}),
    (("<s>",), ("hit",)): frozenset({"player"}),
    (("<s>",), ("has",)): frozenset({"player"}),
    (("joins",), ("from",)): frozenset({"to_club"}),
    (("from",), (".",)): frozenset({"from_club"}),
    (("hit",), ("goals",)): frozenset({"goals"}),
    (("has",), ("caps",)): frozenset({"caps"}),
}


def judge(text):
    return misattributed_facts(text.split(), FACTS, CONTEXTS)


def test_a_faithful_summary_has_none():
    assert judge("ana bel joins vale town from rovers city . ana bel hit 16 goals . ana bel has 90 caps .") == []


def test_a_number_under_the_wrong_relation():
    assert judge("ana bel joins vale town from rovers city . ana bel hit 90 goals .") == [("90", "goals")]


def test_two_teams_swapped_count_two():
    assert judge("ana bel joins rovers city from vale town .") == [("rovers city", "to_club"), ("vale town", "from_club")]


def test_the_wrong_person():
    # the distractor's company in the player's place: a name under the wrong person
    assert judge("kel industries hit 16 goals .") == [("kel industries", "player")]


def test_each_wrong_fact_counts_once_however_often_repeated():
    assert judge("ana bel hit 90 goals . ana bel hit 90 goals . ana bel hit 90 goals .") == [("90", "goals")]


def test_what_it_does_not_judge():
    assert judge("ana bel hit 55 goals .") == []              # 55: not in the article, a hallucination
    assert judge("ana bel scored 90 goals .") == []           # no template puts a slot after "scored"
    assert judge("") == []


def test_the_mean_over_summaries():
    examples = [type("Ex", (), {"facts": FACTS})() for _ in range(3)]
    preds = [s.split() for s in ("ana bel hit 16 goals .", "ana bel hit 90 goals .",
                                 "ana bel joins rovers city from vale town .")]
    out = misattribution(preds, examples, lambda event: CONTEXTS)
    assert out == {"misattributed_facts": pytest.approx(1.0), "misattributing_summaries": pytest.approx(2 / 3)}
    assert misattribution(preds, [type("Ex", (), {"facts": None})()] * 3, lambda event: CONTEXTS) == {}


# -- on generated SynthNews: the templates' own contexts ------------------------------------------

@pytest.mark.parametrize("long", [False, True])
def test_references_and_article_sentences_score_zero(long):
    _, _, test = load_synthnews(10, 0, 200, seed=5, long=long)
    for ex in test:
        contexts = slot_contexts(ex.facts["event"])
        assert misattributed_facts(ex.target, ex.facts, contexts) == [], " ".join(ex.target)
        own = [t for par, role in zip(ex.paragraphs, ex.facts["paragraph_roles"]) if role != "distractor"
               for sent in par for t in sent]
        assert misattributed_facts(own, ex.facts, contexts) == []


def test_notebook_05s_hit_90_goals():
    """Notebook 05's pointer-generator wrote "hit 90 goals" of test article 0, whose 90 are caps."""
    _, _, test = load_synthnews(1000, 0, 400, seed=0)
    ex = test[0]
    assert ex.facts["slots"]["caps"] == "90" and ex.facts["slots"]["goals"] == "16"
    contexts = slot_contexts(ex.facts["event"])
    said = ("tomiara rokamal joins shiul wanderers from niora wanderers after weeks of speculation . "
            "tomiara rokamal hit 90 goals last season for niora wanderers . tomiara rokamal hit")
    assert misattributed_facts(said.split(), ex.facts, contexts) == [("90", "goals")]
    swapped = "tomiara rokamal joins niora wanderers from shiul wanderers after weeks of speculation ."
    assert misattributed_facts(swapped.split(), ex.facts, contexts) == [("niora wanderers", "to_club"),
                                                                          ("shiul wanderers", "from_club")]
