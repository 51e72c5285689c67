"""Generating bAbI tasks from a small simulated world (tasks 1, 2, 3, 6, 7, 8, 11 and 15), so
that the course runs with no download and every answer is right by construction.
"""
from __future__ import annotations

import random

from .story import BabiExample, Story, stories_to_examples

# --------------------------------------------------------------------------------------------
# Generating: a small simulated world
# --------------------------------------------------------------------------------------------
#
# Each story is simulated: the world keeps the true state (who is where, who holds what) and
# every sentence is written *from* that state, so each answer is read off the state and each
# supporting fact is the line that set the part of the state the answer depends on.

PEOPLE = ("Mary", "John", "Sandra", "Daniel")
PRONOUN = {"Mary": "she", "Sandra": "she", "John": "he", "Daniel": "he"}
PLACES = ("bathroom", "hallway", "garden", "office", "kitchen", "bedroom")
OBJECTS = ("football", "apple", "milk")
MOVE_VERBS = ("moved to", "went to", "journeyed to", "travelled to", "went back to")
GET_VERBS = ("got", "grabbed", "picked up", "took")
DROP_VERBS = ("dropped", "put down", "discarded", "left")
GIVE_VERBS = ("gave", "handed", "passed")
THEN = ("Then", "After that", "Afterwards", "Following that")
ANIMALS = {"mouse": "mice", "sheep": "sheep", "wolf": "wolves", "cat": "cats"}  # singular -> plural
ANIMAL_NAMES = ("Gertrude", "Winona", "Emily", "Jessica")
COUNT_WORDS = ("none", "one", "two", "three", "four", "five")

#: The tasks :func:`generate_task` can simulate, with what each one tests.
GENERATED_TASKS = {
    1: "single supporting fact: where is a person (one move)",
    2: "two supporting facts: where is an object (who took it, where they went)",
    3: "three supporting facts: where was an object before a place",
    6: "yes/no questions: is a person in a place",
    7: "counting: how many objects a person carries",
    8: "lists/sets: which objects a person carries",
    11: "basic coreference: he/she refers to the person of the previous sentence",
    15: "basic deduction: a member of a species fears what the species fears",
}

_QUESTIONS_PER_STORY = {15: 4}  # the release: 4 per story in task 15, 5 in the others
_MAX_BLOCKS = 60  # statement pairs to wait for an askable question before starting over


class _World:
    """People moving between places and handling objects; the state behind tasks 1-8."""

    def __init__(self, rng: random.Random, story: Story, *, objects: bool, give: bool,
                 p_object: float, p_get_there: float, p_drop_there: float):
        self.rng, self.story = rng, story
        self.objects, self.give = objects, give
        self.p_object, self.p_get_there, self.p_drop_there = p_object, p_get_there, p_drop_there
        self.place: dict[str, str | None] = {p: None for p in PEOPLE}  # None: not yet told
        self.last_move: dict[str, int] = {}  # person -> line id of their latest move
        # objects: a hidden start place each; revealed when first handled
        self.obj_place = {o: rng.choice(PLACES) for o in OBJECTS}
        self.holder: dict[str, str | None] = {o: None for o in OBJECTS}
        self.carrying: dict[str, list[str]] = {p: [] for p in PEOPLE}  # in order taken
        self.last_obj_fact: dict[str, int] = {}  # object -> line of its latest get/drop
        self.drop_move: dict[str, int] = {}  # object -> dropper's move that says where
        self.events: dict[str, list[int]] = {p: [] for p in PEOPLE}  # object lines per person
        # object -> [(place, line id of the move that tells it was there)], consecutive
        # places differ; it starts where the object was first picked up
        self.trajectory: dict[str, list[tuple[str, int]]] = {o: [] for o in OBJECTS}

    # ---- actions --------------------------------------------------------------------------
    def step(self) -> None:
        """One random sentence: a move, or (when possible) taking, dropping or giving."""
        rng, person = self.rng, self.rng.choice(PEOPLE)
        here = self.place[person]
        options = []
        if self.objects and here is not None:
            if any(self.holder[o] is None and self.obj_place[o] == here for o in OBJECTS):
                options.append(self.get)
            if self.carrying[person]:
                options.append(self.drop)
                if self.give and self._others_here(person):
                    options.append(self.pass_on)
        if options and rng.random() < self.p_object:
            rng.choice(options)(person)
        else:
            self.move(person)

    def _others_here(self, person: str) -> list[str]:
        return [q for q in PEOPLE if q != person and self.place[q] == self.place[person]]

    def move(self, person: str, template: str = "{who} {verb} the {place}.") -> int:
        here = self.place[person]
        place = self.rng.choice([p for p in PLACES if p != here])
        line = self.story.add_statement(template.format(
            who=person, verb=self.rng.choice(MOVE_VERBS), place=place,
            pronoun=PRONOUN[person], then=self.rng.choice(THEN)))
        self.place[person], self.last_move[person] = place, line
        for obj in self.carrying[person]:
            self.obj_place[obj] = place
            self.trajectory[obj].append((place, line))
        return line

    def get(self, person: str) -> None:
        here = self.place[person]
        obj = self.rng.choice([o for o in OBJECTS if self.holder[o] is None and self.obj_place[o] == here])
        there = " there" if self.rng.random() < self.p_get_there else ""
        line = self.story.add_statement(f"{person} {self.rng.choice(GET_VERBS)} the {obj}{there}.")
        self.holder[obj] = person
        self.carrying[person].append(obj)
        self.last_obj_fact[obj] = line
        self.events[person].append(line)
        # the taker's latest move is now the fact that says the object was here
        if self.trajectory[obj]:
            assert self.trajectory[obj][-1][0] == here
            self.trajectory[obj][-1] = (here, self.last_move[person])
        else:
            self.trajectory[obj].append((here, self.last_move[person]))

    def drop(self, person: str) -> None:
        obj = self.rng.choice(self.carrying[person])
        there = " there" if self.rng.random() < self.p_drop_there else ""
        line = self.story.add_statement(f"{person} {self.rng.choice(DROP_VERBS)} the {obj}{there}.")
        self.carrying[person].remove(obj)
        self.holder[obj] = None
        self.last_obj_fact[obj] = line
        self.drop_move[obj] = self.last_move[person]
        self.events[person].append(line)

    def pass_on(self, person: str) -> None:
        obj = self.rng.choice(self.carrying[person])
        other = self.rng.choice(self._others_here(person))
        line = self.story.add_statement(f"{person} {self.rng.choice(GIVE_VERBS)} the {obj} to {other}.")
        self.carrying[person].remove(obj)
        self.carrying[other].append(obj)
        self.holder[obj] = other
        self.last_obj_fact[obj] = line
        self.events[person].append(line)
        self.events[other].append(line)

    # ---- questions: each returns (text, answer, supporting line ids) or None -------------
    def known_people(self) -> list[str]:
        return [p for p in PEOPLE if self.place[p] is not None]

    def ask_where_person(self):  # tasks 1 and 11
        people = self.known_people()
        if not people:
            return None
        p = self.rng.choice(people)
        return f"Where is {p}?", [self.place[p]], self.where_support(p)

    def where_support(self, person: str) -> list[int]:
        """The lines that tell where ``person`` is: their latest move."""
        return [self.last_move[person]]

    def ask_yes_no(self):  # task 6
        people = self.known_people()
        if not people:
            return None
        p = self.rng.choice(people)
        if self.rng.random() < 0.5:
            place, answer = self.place[p], "yes"
        else:
            place, answer = self.rng.choice([x for x in PLACES if x != self.place[p]]), "no"
        return f"Is {p} in the {place}?", [answer], [self.last_move[p]]

    def ask_where_object(self):  # task 2
        objs = [o for o in OBJECTS if o in self.last_obj_fact]
        if not objs:
            return None
        obj = self.rng.choice(objs)
        holder = self.holder[obj]
        if holder is not None:  # carried: where the carrier is now
            return f"Where is the {obj}?", [self.place[holder]], [self.last_obj_fact[obj], self.last_move[holder]]
        return f"Where is the {obj}?", [self.obj_place[obj]], [self.last_obj_fact[obj], self.drop_move[obj]]

    def ask_where_before(self):  # task 3
        # only about an object's current place, and only if it has been there once: then
        # "before the kitchen" cannot mean two different moments
        objs = [o for o in OBJECTS if len(self.trajectory[o]) >= 2
                and all(place != self.trajectory[o][-1][0] for place, _ in self.trajectory[o][:-1])]
        if not objs:
            return None
        obj = self.rng.choice(objs)
        (prev, prev_line), (now, now_line) = self.trajectory[obj][-2:]
        return (f"Where was the {obj} before the {now}?", [prev],
                [self.last_obj_fact[obj], now_line, prev_line])

    def ask_count(self):  # task 7
        people = [p for p in PEOPLE if self.events[p]]
        if not people:
            return None
        p = self.rng.choice(people)
        return (f"How many objects is {p} carrying?", [COUNT_WORDS[len(self.carrying[p])]],
                list(self.events[p]))

    def ask_list(self):  # task 8
        people = [p for p in PEOPLE if self.events[p]]
        if not people:
            return None
        p = self.rng.choice(people)
        return f"What is {p} carrying?", list(self.carrying[p]) or ["nothing"], list(self.events[p])


class _CorefWorld(_World):
    """Task 11: every move is a pair, the second sentence naming its person by a pronoun."""

    def __init__(self, rng: random.Random, story: Story):
        super().__init__(rng, story, objects=False, give=False, p_object=0.0,
                         p_get_there=0.0, p_drop_there=0.0)
        self.pair: dict[str, list[int]] = {}

    def step(self) -> None:
        person = self.rng.choice(PEOPLE)
        first = self.move(person)
        second = self.move(person, "{then} {pronoun} {verb} the {place}.")
        self.pair[person] = [first, second]

    def where_support(self, person: str) -> list[int]:
        """Both sentences of the person's latest pair: the name, then the pronoun's move."""
        return list(self.pair[person])


_WORLD_TASKS = {
    # task: (world options, the method that asks the task's question)
    1: (dict(objects=False, give=False, p_object=0.0, p_get_there=0.0, p_drop_there=0.0), "ask_where_person"),
    2: (dict(objects=True, give=False, p_object=0.7, p_get_there=1.0, p_drop_there=0.2), "ask_where_object"),
    3: (dict(objects=True, give=False, p_object=0.6, p_get_there=0.2, p_drop_there=0.2), "ask_where_before"),
    6: (dict(objects=True, give=False, p_object=0.6, p_get_there=1.0, p_drop_there=0.2), "ask_yes_no"),
    7: (dict(objects=True, give=True, p_object=0.7, p_get_there=1.0, p_drop_there=0.2), "ask_count"),
    8: (dict(objects=True, give=False, p_object=0.7, p_get_there=1.0, p_drop_there=0.2), "ask_list"),
}


def _world_story(task: int, n_questions: int, rng: random.Random) -> Story:
    """Statements two at a time; after each pair, a question if one can be asked."""
    while True:  # start over in the (rare) case no question becomes askable for a long time
        story = Story(task=task)
        if task == 11:
            world, ask, per_block = _CorefWorld(rng, story), "ask_where_person", 1
        else:
            options, ask = _WORLD_TASKS[task]
            world, per_block = _World(rng, story, **options), 2
        for _ in range(n_questions):
            for _block in range(_MAX_BLOCKS):
                for _ in range(per_block):
                    world.step()
                question = getattr(world, ask)()
                if question is not None:
                    story.add_question(*question)
                    break
            else:
                break
        else:
            return story


def _deduction_story(task: int, n_questions: int, rng: random.Random) -> Story:
    """Task 15: four 'X are afraid of Y.' rules, four 'N is a X.' facts, then questions."""
    story = Story(task=task)
    species = list(ANIMALS)
    fears = {s: rng.choice([t for t in species if t != s]) for s in species}
    kind = {name: rng.choice(species) for name in ANIMAL_NAMES}
    facts = [("rule", s) for s in species] + [("member", n) for n in ANIMAL_NAMES]
    rng.shuffle(facts)
    line_of: dict[tuple[str, str], int] = {}
    for fact in facts:
        what, key = fact
        if what == "rule":
            text = f"{ANIMALS[key].capitalize()} are afraid of {ANIMALS[fears[key]]}."
        else:
            text = f"{key} is a {kind[key]}."
        line_of[fact] = story.add_statement(text)
    for _ in range(n_questions):
        name = rng.choice(ANIMAL_NAMES)
        story.add_question(f"What is {name} afraid of?", [fears[kind[name]]],
                           [line_of[("member", name)], line_of[("rule", kind[name])]])
    return story


def _generate(task: int, n_questions: int, rng: random.Random) -> list[Story]:
    if task not in GENERATED_TASKS:
        raise ValueError(f"task {task!r} cannot be generated; the supported tasks are "
                         f"{sorted(GENERATED_TASKS)}")
    if not isinstance(n_questions, int) or n_questions < 0:
        raise ValueError(f"n_questions must be a non-negative integer, got {n_questions!r}")
    make = _deduction_story if task == 15 else _world_story
    per_story = _QUESTIONS_PER_STORY.get(task, 5)
    stories = []
    remaining = n_questions
    while remaining > 0:
        k = min(per_story, remaining)
        stories.append(make(task, k, rng))
        remaining -= k
    return stories


def generate_task(task: int, n_questions: int, seed: int = 0) -> list[Story]:
    """Simulate ``n_questions`` questions of bAbI task ``task`` as stories, as the release has them.

    Supported: tasks 1, 2, 3, 6, 7, 8, 11 and 15 (see :data:`GENERATED_TASKS`); any other task
    raises ValueError.  A story holds 5 questions (4 in task 15), each after a pair of
    statements, or after more pairs while no question can be asked yet (task 2 needs an object
    that has been handled, for instance); the last story may hold fewer.  The phrasing follows
    the release (Weston et al. 2015): ``Mary journeyed to the office.``, ``John picked up the
    apple there.``, ``Afterwards she went back to the kitchen.``, ``Wolves are afraid of mice.``.

    The answers are computed from the simulated state, never guessed, and the supporting facts
    are the lines that set that state (line ids, in this order):

    ====  ============================================================================
    task  supporting facts
    ====  ============================================================================
    1, 6  the person's latest move
    2     the object's latest take/drop line, then the move that says where its holder was
    3     the object's latest take/drop line, its move into the current place, its move
          into the place before (asked only if it has been in the current place once)
    7, 8  every take/drop/give line of the person so far
    11    the sentence naming the person, then the "then he/she ..." sentence
    15    "Emily is a wolf.", then "Wolves are afraid of mice."
    ====  ============================================================================

    The output depends only on ``seed`` (a private ``random.Random(seed)``; the global random
    state is neither read nor changed).
    """
    return _generate(task, n_questions, random.Random(seed))


def generate_examples(task: int, n: int, seed: int = 0) -> list[BabiExample]:
    """``n`` generated examples of ``task``: :func:`generate_task` expanded per question."""
    return stories_to_examples(generate_task(task, n, seed))


def load_generated(task: int, n_train: int, n_test: int, seed: int = 0) -> tuple[list[BabiExample], list[BabiExample]]:
    """Generated (train, test) examples of ``task``.

    ``train`` is exactly ``generate_examples(task, n_train, seed)``; ``test`` comes from a
    separate random stream (seeded with ``f"{seed}:test"``), so it holds other stories.
    """
    train = generate_examples(task, n_train, seed)
    test = stories_to_examples(_generate(task, n_test, random.Random(f"{seed}:test")))
    return train, test
