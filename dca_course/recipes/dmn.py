"""Dynamic Memory Networks on bAbI (notebook 03): one model per task; ``babi:all`` trains each
task in turn."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import ClassVar

import torch

from ..data import babi
from ..data.dataset import Dataset, SpecError
from ..data.vocab import Vocab
from ..data.babi import babi_vocab, length_buckets, make_dmn_batch, story_ids
from ..data.babi.rename import EntityRenamer
from ..models.dmn import DMN, dmn_loss, xavier_init
from ..models.dmn_eval import answer_mode_for, evaluate_dmn
from ..models.extensions import (AnswerHidden, ExtendedDMN, InterveningFacts, OwnQuestionGRU, SentenceEpisodes, TimeFeatures,
                                 WordMatch)
from ..train import BestEpoch, dist_info, save_checkpoint, unwrap
from .base import Recipe
from .config import RecipeConfig, knob


#: The three rows of ``results/babi_protocol.md`` (``experiments/babi_rows.py``): the model of each,
#: and nothing else differs between them.
BABI_ROWS = {
    "dmn": dict(dmn_variant="dmn", input_module="gru", gate_features="dmn", memory_update="gru",
                episode_reads="facts", time_features=False, word_match=False),
    "dmn+": dict(dmn_variant="dmn+", input_module="fusion", gate_features="dmn+", memory_update="relu",
                 episode_reads="facts", time_features=False, word_match=False),
    "dmn+ext": dict(dmn_variant="dmn+", input_module="fusion", gate_features="dmn+", memory_update="relu",
                    episode_reads="facts", time_features=True, word_match=True),
}
#: The protocol's settings fixed before any run, the same in every row.
BABI_FIXED = dict(emb_size=80, hidden_size=80, batch_size=32, gate_supervision=True, dmn_passes=0, val_fraction=0.1,
                  epochs=200, patience=50, stop_at_ceiling=True, lr_patience=0, answer="auto")
#: What each row chose on seed 0's held-out stories (``results/babi_selection.json``; a test keeps
#: the two equal).
BABI_CHOSEN = {
    "dmn": dict(lr=3e-3, weight_decay=1e-3, dropout=0.0, max_passes=3, gate_loss="softmax", dmn_init="xavier"),
    "dmn+": dict(lr=1e-3, weight_decay=1e-3, dropout=0.0, max_passes=3),
    "dmn+ext": dict(lr=3e-3, weight_decay=1e-3, dropout=0.0, max_passes=3),
}
#: The cures that joined a row by protocol version 6's held-out rule (``results/babi_cures.json``, ``joined``; a test
#: keeps the two equal): the row's ``final`` and its profile train with them; its search and the cures' own
#: judgement train the row without them.
BABI_JOINED_CURES = {"dmn+ext": dict(rename_entities=True)}
_BABI_ROW_HELP = {"dmn": "the DMN as Kumar et al. describe it", "dmn+": "DMN+ as Xiong et al. describe it",
                  "dmn+ext": "DMN+ with the course's time features and word match, its training stories renamed "
                             "each epoch (the cure that joined it under protocol version 6)"}


def babi_row_profiles() -> dict:
    """``babi-dmn``, ``babi-dmn+``, ``babi-dmn+ext``: one task of a protocol row, as its ``final``
    trains it, from the command line (the row's retry with a smaller L2 below 95% held-out is not
    part of a profile)."""
    return {f"babi-{row}": ("full", {**BABI_FIXED, **BABI_ROWS[row], **BABI_JOINED_CURES.get(row, {}), **chosen},
                            f"{_BABI_ROW_HELP[row]}, the protocol's `{row}` row at its point chosen on held-out "
                            "stories (results/babi_protocol.md), without the row's L2 retry")
            for row, chosen in BABI_CHOSEN.items()}


@dataclass(frozen=True)
class DMNConfig(RecipeConfig):
    emb_size: int = knob(64, "word embedding size", metavar="N")
    hidden_size: int = knob(64, "GRU state size", metavar="N")
    dmn_variant: str = knob("dmn", "sigmoid gates + gated GRU (Kumar et al.) or softmax attention + "
                                   "attention-GRU (DMN+, Xiong et al.)", flags=("--variant",), choices=("dmn", "dmn+"))
    dmn_passes: int = knob(0, "passes of the episodic memory (T_M); 0: one per supporting fact of a training "
                              "question, at most --max-passes", flags=("--passes",), metavar="N")
    max_passes: int = knob(3, "with --passes 0: at most this many passes (bAbI tasks 7 and 8 have questions "
                              "with up to 8 supporting facts)", metavar="N")
    extra_passes: int = knob(0, "with --passes 0: this many passes more than the supporting facts, not supervised "
                                "(Kumar et al. stop at a learned end-of-passes fact; the count is left open)",
                             metavar="N")
    input_module: str = knob("gru", "a GRU over the story's words (Kumar et al.) or DMN+'s positional encoding "
                                    "+ bidirectional fusion GRU", flags=("--dmn-input",), choices=("gru", "fusion"))
    memory_update: str = knob("gru", "m^i = GRU(e^i, m^{i-1}) (Kumar et al.) or ReLU(W^i [m^{i-1}; e^i; q] + b^i), a layer per pass (DMN+)",
                              flags=("--dmn-memory-update",), choices=("gru", "relu"))
    episode_reads: str = knob("facts", "what the episodes read: the facts the gates compare, or each sentence's own "
                                       "positional encoding (the gates still compare the fused facts)",
                              flags=("--dmn-episode-reads",), choices=("facts", "sentences"))
    word_match: bool = knob(False, "each pass also reads which words of its facts are which words of the question "
                                   "(positions of exact matches; bAbI 17-19 turn on which side of a fact a name is)")
    time_features: bool = knob(False, "give the gate each fact's place in time: how recent, how far before or "
                                      "after the fact the previous pass read (bAbI tasks 2 and 3 ask for the latest "
                                      "or the previous move)")
    intervening_facts: bool = knob(False, "the gate looks twice each pass: the second time it also reads how many "
                                          "facts it would pick lie between each fact and where the previous pass "
                                          "read (bAbI task 3: the move just before the one found)")
    answer_hidden: bool = knob(False, "a ReLU layer between the answer GRU's state and W^(a), so the answer can "
                                      "combine what the memory holds (bAbI tasks 7, 17, 18)")
    rename_entities: bool = knob(False, "rename each training question's people, places, objects, shapes and colours "
                                        "consistently, afresh every epoch (never the held-out stories or the test)")
    gate_features: str = knob("dmn", "the gate's features: Kumar et al.'s nine parts [c, m, q, c*q, c*m, |c-q|, "
                                     "|c-m|, cWq, cWm] or DMN+'s four comparisons [c*q, c*m, |c-q|, |c-m|]",
                              choices=("dmn", "dmn+"))
    question_module: str = knob("shared", "the question GRU: the input GRU's weights (shared) or its own (own); the "
                                          "word embeddings are shared either way", flags=("--dmn-question",),
                                choices=("shared", "own"))
    dmn_init: str = knob("pytorch", "initial weights: PyTorch's defaults, or xavier (Xiong et al.: every weight matrix "
                                    "Xavier-uniform, biases 0, embeddings unchanged)", choices=("pytorch", "xavier"))
    gate_supervision: bool = knob(True, "add the cross-entropy of the gates against the supporting facts")
    gate_weight: float = knob(1.0, "weight of the gate supervision loss")
    gate_loss: str = knob("auto", "the gate supervision's form: bce, a binary cross-entropy of each fact's gate "
                                  "against 1 or 0; softmax, a cross-entropy over the pass's facts; auto, the "
                                  "variant's own (bce for dmn, softmax for dmn+)", choices=("auto", "bce", "softmax"))
    answer: str = knob("auto", "the answer module: word, sequence, or auto (sequence exactly when some "
                               "training answer has several words)")
    dropout: float = knob(0.0, "dropout")
    weight_decay: float = knob(0.0, "L2 penalty on the weights (Adam's weight_decay)")
    val_fraction: float = knob(0.0, "hold out this share of the training stories, with all their questions "
                                    "(never the test), to score every epoch, keep the best epoch's weights and "
                                    "stop early")
    patience: int = knob(0, "with --val-fraction: stop after this many epochs without a better held-out "
                            "accuracy (0: train every epoch, still keeping the best)", metavar="N")
    stop_at_ceiling: bool = knob(False, "with --patience: once the held-out accuracy is 100%, stop --patience epochs "
                                        "after it first got there (a tie with 100% still keeps the later weights "
                                        "but no longer restarts the count)")
    ceiling_patience: int | None = knob(None, "with --stop-at-ceiling: stop this many epochs after the held-out "
                                              "accuracy first reaches 100% instead of --patience (0: at that "
                                              "epoch; the best held-out accuracy cannot change after it)",
                                        metavar="N")
    lr_patience: int = knob(0, "with --val-fraction: halve the learning rate after every N epochs without a "
                               "better held-out accuracy (0: a constant learning rate)", metavar="N")
    max_facts: int = knob(50, "the last N sentences of a story are read", metavar="N")
    cpu_threads: int | None = knob(1, "torch threads on a CPU while training (the DMN's many small steps "
                                      "gain little from more); none: leave torch's setting", metavar="N")

    FAST: ClassVar[dict] = dict(epochs=4, batch_size=16, clip=5.0)
    FULL: ClassVar[dict] = dict(emb_size=80, hidden_size=80, dropout=0.1, epochs=30, batch_size=32, lr=2e-3,
                                val_fraction=0.1, patience=20)
    FULL_HELP: ClassVar[str] = ("the DMN as Kumar et al. describe it (GRU input module, nine-part gate features, GRU "
                                "memory update, supervised gates) at size 80 for 30 epochs: a short schedule, far "
                                "from the paper's figures on the real bAbI tasks (see results/babi_protocol.md)")
    #: The headline run, ``train dmn --data babi:PATH:all --profile babi-1k``: the model and training
    #: of ``results/babi_real_1k.md`` (DMN+ with the course's additions, 200 epochs at most).  Only
    #: each training's epoch is chosen on held-out stories (10% of the training stories); its L2 and
    #: 5 passes, the 200 epochs with patience 50 and its features were chosen earlier from test
    #: figures (``results/babi_protocol.md``).  The protocol's rows (``babi-dmn``, ``babi-dmn+``,
    #: ``babi-dmn+ext``) are the settings chosen on held-out stories alone.
    NAMED: ClassVar[dict] = {"babi-1k": ("full", dict(
        dmn_variant="dmn+", input_module="fusion", memory_update="relu", gate_features="dmn+", time_features=True,
        word_match=True, max_passes=5, weight_decay=1e-3, lr=3e-3, epochs=200, patience=50),
        "the real bAbI 1k tasks' settings, results/babi_real_1k.md"), **babi_row_profiles()}


class CeilingBest(BestEpoch):
    """Early stopping with a value nothing can beat (``--stop-at-ceiling``: 1.0, a held-out accuracy
    of 100%).  Once the best reaches ``ceiling``, an epoch that ties it still has its weights kept
    but no longer restarts the patience count, so a run at 100% stops ``patience`` evaluations after
    it first got there; ``ceiling_patience``, when set, replaces ``patience`` there (0: stop at the
    epoch that reaches it; the best value cannot change after that, so a search that reads only the
    best value loses nothing)."""

    def __init__(self, monitor: str, saved: dict | None = None, patience: int = 0, *, ceiling: float = 1.0,
                 ceiling_patience: int | None = None):
        super().__init__(monitor, saved, patience)
        self.ceiling, self.ceiling_patience = ceiling, ceiling_patience

    def update(self, row: dict, model) -> bool:
        if self.monitor not in row:
            return False
        at_ceiling = self.value is not None and self.value >= self.ceiling
        if self.is_best(row):
            self.keep(row, model)
            if not at_ceiling:
                self.waited = 0
                return self.ceiling_patience == 0 and self.value >= self.ceiling
        self.waited += 1
        if at_ceiling and self.ceiling_patience is not None:
            return self.waited >= self.ceiling_patience
        return bool(self.patience) and self.waited >= self.patience


class DMNRecipe(Recipe):
    """Dynamic Memory Network on bAbI (notebook 03): one model per task; ``babi:all`` trains
    each task in turn and reports ``per_task`` accuracies and their ``mean_accuracy``."""

    name = "dmn"
    config_class = DMNConfig
    model_class = DMN
    extended_class = ExtendedDMN
    data_kinds = ("babi",)
    renamer = None          # an EntityRenamer under --rename-entities, made with the model (model_for)

    # -- model -----------------------------------------------------------------------------------
    def build_vocab(self, data):
        return babi_vocab(data.train)

    def build_model(self, vocab, answer: str = "word", passes: int | None = None):
        """The paper's :class:`DMN`; :class:`ExtendedDMN` when a knob asks for one of the course's additions."""
        c = self.config
        extensions = self.extensions()
        cls, more = (ExtendedDMN, dict(extensions=extensions)) if extensions else (DMN, {})
        model = cls(len(vocab), c.emb_size, c.hidden_size, passes=passes or c.dmn_passes or 3,
                    variant=c.dmn_variant, answer=answer, input_module=c.input_module,
                    memory_update=c.memory_update, gate_features=c.gate_features, dropout=c.dropout, **more)
        return xavier_init(model) if c.dmn_init == "xavier" else model

    def extensions(self) -> list:
        """The course's additions the knobs ask for (:mod:`dca_course.models.extensions`)."""
        c = self.config
        return ([TimeFeatures()] if c.time_features else []) + \
            ([SentenceEpisodes()] if c.episode_reads == "sentences" else []) + \
            ([WordMatch()] if c.word_match else []) + \
            ([InterveningFacts()] if c.intervening_facts else []) + \
            ([OwnQuestionGRU()] if c.question_module == "own" else []) + \
            ([AnswerHidden()] if c.answer_hidden else [])

    def answer_mode(self, train) -> str:
        return self.config.answer if self.config.answer != "auto" else answer_mode_for(train)

    def model_for(self, data, vocab):
        # passes 0 = one pass per supporting fact of the most demanding training question, at most max_passes
        # (+ extra_passes, unsupervised: gate_targets has no fact left for them)
        passes = self.config.dmn_passes or (min(self.config.max_passes, max(len(ex.supporting) for ex in data.train))
                                            + self.config.extra_passes)
        # --rename-entities renames the training batches in loss_fn, over this model's vocabulary
        self.renamer = (EntityRenamer(vocab, sorted({ex.task for ex in data.train}))
                        if self.config.rename_entities else None)
        return self.build_model(vocab, self.answer_mode(data.train), passes)

    def make_batch(self, examples, vocab):
        return make_dmn_batch(examples, vocab, max_facts=self.config.max_facts)

    def batch_groups(self, train, seed):
        # buckets of similar-length stories: fit shuffles the buckets every epoch (and shares
        # them out among processes under torchrun)
        return length_buckets(train, self.config.batch_size, max_facts=self.config.max_facts, seed=seed)

    def validation_split(self, train, seed):
        """A seeded ``val_fraction`` of the training *stories*, held out with all their questions
        to pick the epoch.  bAbI asks several questions about one story: held-out questions whose
        story the model also trains on would score how well it remembers that story, not how
        well it reads a new one (task 17: 98% held out, 62% on the test)."""
        story = story_ids(train)
        n_stories = story[-1] + 1 if story else 0
        n = round(n_stories * self.config.val_fraction)
        if n == 0 or n >= n_stories:
            return train, []
        order = torch.randperm(n_stories, generator=torch.Generator().manual_seed(seed)).tolist()
        held = set(order[:n])
        return ([ex for ex, s in zip(train, story) if s not in held],
                [ex for ex, s in zip(train, story) if s in held])

    def validate(self, model, held_out, vocab, device) -> dict:
        return {"val_accuracy": self.score(model, held_out, vocab, device)["accuracy"],
                "val_answer_loss": self.answer_loss(model, held_out, vocab, device)}

    def answer_loss(self, model, examples, vocab, device, batch_size: int = 100) -> float:
        """The answers' mean cross-entropy over ``examples`` (per word for the sequence decoder):
        how sure the model is of the right answers, which still moves when the accuracy is 100%."""
        total = 0.0
        for start in range(0, len(examples), batch_size):
            chunk = examples[start:start + batch_size]
            batch = self.make_batch(chunk, vocab).to(device)
            _, stats = dmn_loss(model, batch, gate_supervision=False)
            total += stats["answer_loss"] * len(chunk)
        return total / max(len(examples), 1)

    def train_config(self, epochs, seed, progress):
        # keep_batches: a bAbI task's padded batches are small, and padding them again every epoch
        # took about 5% of a DMN epoch (one paired 3-epoch run of task 3: 19.0 s against 18.0 s)
        config = replace(super().train_config(epochs, seed, progress), weight_decay=self.config.weight_decay,
                         keep_batches=True)
        if not self.config.val_fraction:
            return config
        return replace(config, eval_every=1, monitor="val_accuracy", patience=self.config.patience,
                       lr_patience=self.config.lr_patience)

    def best_epoch(self):
        if not (self.config.val_fraction and self.config.stop_at_ceiling):
            return None
        return partial(CeilingBest, ceiling=1.0, ceiling_patience=self.config.ceiling_patience)

    def loss_fn(self, model, batch):
        if self.renamer is not None:         # --rename-entities: each training question in new words
            batch = self.renamer(batch)
        return dmn_loss(model, batch, gate_supervision=self.config.gate_supervision,
                        gate_weight=self.config.gate_weight, variant=self.gate_loss_form())

    def gate_loss_form(self) -> str:
        """The form :func:`~dca_course.models.dmn_gate.gate_supervision_loss` takes: ``"dmn"``, a binary
        cross-entropy per fact, or ``"dmn+"``, a cross-entropy over a pass's facts (``--gate-loss``)."""
        return {"auto": self.config.dmn_variant, "bce": "dmn", "softmax": "dmn+"}[self.config.gate_loss]

    def score(self, model, examples, vocab, device, kind="babi") -> dict:
        return evaluate_dmn(model, examples, vocab, max_facts=self.config.max_facts, device=device)

    # -- training --------------------------------------------------------------------------------
    def train(self, data, device, out_dir, *, seed=0, progress=True, resume=True, log=None) -> dict:
        self.check_data(data)
        out_dir = Path(out_dir)
        threads = torch.get_num_threads()
        if torch.device(device).type == "cpu" and self.config.cpu_threads:
            # The DMN takes many small steps (one per fact and pass): a second thread saves
            # little, and on a busy machine waiting for it makes every step many times slower.
            torch.set_num_threads(self.config.cpu_threads)
        try:
            return self._train(data, out_dir, device, seed=seed, progress=progress, resume=resume, log=log)
        finally:
            torch.set_num_threads(threads)

    def train_task(self, data: Dataset, device, out_dir, *, seed, progress, resume, log) -> tuple:
        """Train one task's model on ``data.train`` and score it on ``data.test``: ``(result,
        model, vocab)``, the result empty except on the main process."""
        model, vocab, history, seconds = self.fit_model(data, device, out_dir, seed=seed, progress=progress,
                                                        resume=resume, log=log)
        result = {}
        if dist_info().is_main:
            result = self.score(unwrap(model), data.test, vocab, device)
            result.update(epochs=len(history.epochs), final_loss=history.last("loss"), passes=unwrap(model).passes,
                          best_epoch=history.best.get("epoch"), val_accuracy=history.best.get("val_accuracy"),
                          answer_module=self.answer_mode(data.train), train_seconds=round(seconds, 1))
        return result, model, vocab

    def _train(self, data, out_dir, device, *, seed, progress, resume, log) -> dict:
        c = self.config
        common = dict(model=self.name, data=data.spec, split="test", variant=c.dmn_variant,
                      gate_supervision=c.gate_supervision, input_module=c.input_module, memory_update=c.memory_update)
        tasks = data.meta.get("tasks") or sorted({ex.task for ex in data.train})
        if len(tasks) == 1 and data.meta.get("task") != "all":
            result, _, _ = self.train_task(data, device, out_dir, seed=seed, progress=progress, resume=resume,
                                           log=log)
            if result:
                result.update(common, task=tasks[0])
            return result
        return self._train_all(data, tasks, device, out_dir, common, seed=seed, progress=progress,
                               resume=resume, log=log)

    # -- every task in turn ----------------------------------------------------------------------
    def _train_all(self, data, tasks, device, out_dir, common, *, seed, progress, resume, log) -> dict:
        from tqdm.auto import tqdm

        main = dist_info().is_main
        per_task, saved = {}, {}
        started = time.perf_counter()
        bar = tqdm(tasks, desc="bAbI tasks", disable=not (progress and main))
        for t in bar:
            bar.set_postfix(task=t)
            task_data = replace(data, train=[ex for ex in data.train if ex.task == t],
                                test=[ex for ex in data.test if ex.task == t])
            result, model, vocab = self.train_task(
                task_data, device, out_dir / f"task{t:02d}", seed=seed,
                progress=progress, resume=resume, log=(lambda msg, t=t: log(f"task {t}: {msg}")) if log else None)
            if main:
                per_task[t] = result
                model = unwrap(model)
                saved[t] = {"model": model.state_dict(), "model_config": model.config, "vocab": vocab.to_list()}
        if not main:
            return {}
        seconds = time.perf_counter() - started
        accs = {str(t): round(r["accuracy"], 4) for t, r in per_task.items()}
        mean = sum(r["accuracy"] for r in per_task.values()) / len(per_task)
        lines = [f"{'task':>4}  {'name':<28} {'accuracy':>8}  {'sup. facts':>10}  {'epochs':>6}  {'seconds':>7}"]
        for t, r in per_task.items():
            name = babi.TASK_NAMES.get(t, "").split("_", 1)[-1]
            lines.append(f"{t:>4}  {name:<28} {100 * r['accuracy']:>7.1f}%  "
                         f"{100 * r['supporting_fact_accuracy']:>9.1f}%  {r['epochs']:>6}  {r['train_seconds']:>7.1f}")
        lines.append(f"{'mean':>4}  {'':<28} {100 * mean:>7.1f}%")
        print("\n".join(lines), file=sys.stderr, flush=True)
        # One checkpoint holding every task's model, so that `evaluate DIR` works for the run.
        save_checkpoint(out_dir / "last.pt", {"model": {}, "per_task": saved, "recipe": self.name,
                                             "hparams": self.config.to_dict(), "data": data.spec, "seed": seed})
        result = dict(common, per_task=accs, mean_accuracy=round(mean, 4),
                      failed_tasks=[t for t, r in per_task.items() if r["accuracy"] < 0.95],
                      supporting_fact_accuracy={str(t): round(r["supporting_fact_accuracy"], 4)
                                                for t, r in per_task.items()},
                      train_seconds=round(seconds, 1))
        return result

    # -- evaluate DIR ----------------------------------------------------------------------------
    @classmethod
    def restore(cls, state, device):
        recipe = cls(cls.config_class.from_dict(state["hparams"]))
        if "per_task" not in state:
            return super().restore(state, device)
        models, vocabs = torch.nn.ModuleDict(), {}
        for t, saved in state["per_task"].items():
            model = recipe.model_from_config(saved["model_config"]).to(device)
            model.load_state_dict(saved["model"])
            models[str(t)], vocabs[int(t)] = model, Vocab.from_list(saved["vocab"])
        return recipe, models, vocabs

    def evaluate(self, model, vocab, data, split, device) -> dict:
        examples = data.split(split)
        if not examples:
            raise SpecError(f"{data.spec} has no {split!r} split (the bAbI release has train and test only)")
        result = dict(model=self.name, data=data.spec, split=split)
        if isinstance(model, torch.nn.ModuleDict):
            per_task = {}
            for t in sorted({ex.task for ex in examples}):
                if str(t) not in model:
                    raise SpecError(f"this run has no model for bAbI task {t}; it holds tasks {', '.join(model)}")
                exs = [ex for ex in examples if ex.task == t]
                per_task[str(t)] = round(self.score(model[str(t)], exs, vocab[t], device)["accuracy"], 4)
            result.update(per_task=per_task, mean_accuracy=round(sum(per_task.values()) / len(per_task), 4))
            return result
        if len({ex.task for ex in examples}) > 1:
            raise SpecError(f"this run trained one bAbI task; evaluate it on that task, not {data.spec!r}")
        result.update(self.score(model, examples, vocab, device))
        return result
