"""The base recipe: how a model is built, trained and evaluated from the command line.

A recipe turns ``(configuration, data set)`` into a trained model and a metrics dict.  Its
configuration (:mod:`dca_course.recipes.config`) holds every knob; :meth:`Recipe.train` is the
one training harness, and subclasses fill in its hooks: the vocabulary, the model, the batches,
the loss, the training phases and the scores.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

import torch

from .. import metrics
from ..data.dataset import Dataset, SpecError
from ..data.specs import KIND_NAMES
from ..data.synthnews import slot_contexts
from ..data.vocab import Vocab
from ..io import write_json
from ..losses import sequence_nll
from ..train import TrainConfig, dist_info, fit, load_checkpoint, unwrap
from .config import RecipeConfig


#: What to train on each kind of data instead of a model that refuses it: kind -> (the model and
#: flags to suggest, a note on the others).  Every pair of model and kind either trains or
#: refuses with this (``tests/test_model_data_matrix.py`` walks them all).
USE_INSTEAD = {
    "pairs": ("seq2seq", "gru-lm, copynet and pointer-generator train on them too"),
    "summaries": ("pointer-generator --no-pointer",
                  "the attention baseline for summaries; pointer-generator, copynet and dca copy from the article"),
    "babi": ("dmn", "the Dynamic Memory Network, notebook 03"),
}


class Recipe:
    """Build, train and evaluate one model.  Subclasses set ``name``, ``config_class``,
    ``model_class`` (the paper's model; ``extended_class``: its subclass with the course's additions,
    for a model that has one) and the hooks below."""

    name: ClassVar[str] = ""
    config_class: ClassVar[type] = RecipeConfig
    model_class: ClassVar[type] = torch.nn.Module
    extended_class: ClassVar[type | None] = None
    data_kinds: ClassVar[tuple] = ("pairs", "summaries")
    #: why this model refuses a kind of data it could technically read (kind -> reason), said in
    #: its one-line refusal before what to use instead
    refusal_reasons: ClassVar[dict] = {}
    #: ``{"fast": {...}, "full": {...}}``, generated from ``config_class`` (for notebooks and tools)
    profiles: ClassVar[dict] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.profiles = cls.config_class.profiles()

    def __init__(self, config: RecipeConfig | dict):
        if isinstance(config, dict):      # a checkpoint's (or a notebook's) plain dict of knobs
            config = self.config_class.from_dict(config)
        self.config = config

    @classmethod
    def check_kind(cls, kind: str, spec: str) -> None:
        """Refuse, in one line naming the model to use instead, data this model should not train
        on.  The command line calls it before loading the data, so a refusal costs nothing."""
        if kind in cls.data_kinds:
            return
        model, note = USE_INSTEAD[kind]
        reason = cls.refusal_reasons.get(kind)
        raise SpecError(f"{cls.name} does not train on {spec} ({KIND_NAMES[kind]})"
                        + (f": {reason}" if reason else "")
                        + f"; use `python -m dca_course train {model} --data {spec}`"
                        + (f" ({note})" if note else ""))

    def check_data(self, data: Dataset) -> None:
        self.check_kind(data.kind, data.spec)

    # -- hooks -----------------------------------------------------------------------------------
    def build_vocab(self, data: Dataset) -> Vocab:
        raise NotImplementedError

    def build_model(self, vocab: Vocab) -> torch.nn.Module:
        raise NotImplementedError

    def model_for(self, data: Dataset, vocab: Vocab) -> torch.nn.Module:
        """The model to train on ``data`` (the DMN sizes its answer module and passes from it)."""
        return self.build_model(vocab)

    def accelerated(self, model: torch.nn.Module) -> torch.nn.Module:
        """``model`` as this recipe trains and decodes it.  Here: as built.  The encoder-decoders'
        recipes make it fast (:func:`dca_course.fast.accelerate`: the same values, faster) when their
        configuration's ``fast_path`` is on."""
        return model

    def model_from_config(self, model_config: dict) -> torch.nn.Module:
        """The model a checkpoint's ``model_config`` describes: the paper's ``model_class``, or its
        subclass with the course's additions, ``extended_class``, when the config names some
        ``extensions`` (an empty list, as runs of the paper model saved before the two were apart
        store, is the paper's model)."""
        if model_config.get("extensions"):
            return self.extended_class(**model_config)
        return self.model_class(**{k: v for k, v in model_config.items() if k != "extensions"})

    def make_batch(self, examples, vocab):
        raise NotImplementedError

    def loss_fn(self, model, batch):
        out = model(batch)
        return sequence_nll(out["log_probs"], batch.tgt_out, batch.tgt_mask), {}

    def training_data(self, data: Dataset) -> Dataset:
        """The data set training reads (DCA's RL phase reads fewer articles)."""
        return data

    def batch_groups(self, train: list, seed: int) -> list[list] | None:
        """Fixed groups of examples to batch (fit shuffles their order every epoch), or None
        for batches of ``batch_size`` drawn afresh from the shuffled examples every epoch."""
        return None

    def validation_split(self, train: list, seed: int) -> tuple[list, list]:
        """``(examples to train on, held-out training examples)``: with held-out examples, every
        epoch is scored on them by :meth:`validate`, and :meth:`train_config` says what to keep
        and when to stop.  Nothing is held out by default."""
        return train, []

    def validate(self, model, held_out: list, vocab, device) -> dict:
        raise NotImplementedError

    def phases(self) -> list:
        """``[(total epochs at the end of the phase, prepare(model)), ...]``: one phase by default."""
        return [(self.config.epochs, lambda model: None)]

    def predict(self, model, examples, vocab, device) -> list[list[str]]:
        raise NotImplementedError

    def score(self, model, examples, vocab, device, kind: str) -> dict:
        return self.score_predictions(self.predict(model, examples, vocab, device), examples, vocab, kind)

    def score_predictions(self, preds, examples, vocab, kind: str) -> dict:
        """Summaries: ROUGE and the SynthNews fact scores; pairs: exact match, token accuracy."""
        if kind == "summaries":
            result = metrics.summary_metrics(preds, [ex.summary_text() for ex in examples],
                                             [ex.source for ex in examples])
            # SynthNews: fact recall (anywhere and with what each fact is about), hallucinations
            result.update(metrics.fact_metrics(preds, examples, contexts_of=slot_contexts))
            return result
        return {"exact_match": metrics.exact_match(preds, [ex.target for ex in examples]),
                "token_accuracy": metrics.token_accuracy(preds, [ex.target for ex in examples])}

    # -- the two commands ------------------------------------------------------------------------
    def train(self, data: Dataset, device, out_dir: Path, *, seed: int = 0, progress: bool = True,
              resume: bool = True, log=None) -> dict:
        """Train on ``data.train``, then score the test split (on rank 0 only under torchrun)."""
        self.check_data(data)
        # What the configuration leaves to the data (decode lengths) is fixed now, and saved
        # with the run, so that `evaluate DIR` decodes as the end of training did.
        self.config = self.config.for_data(data)
        data = self.training_data(data)
        model, vocab, history, seconds = self.fit_model(data, device, out_dir, seed=seed, progress=progress,
                                                        resume=resume, log=log)
        if not dist_info().is_main:
            return {}
        result = self.score(unwrap(model), data.test, vocab, device, data.kind)
        result.update(model=self.name, data=data.spec, split="test", epochs=len(history.epochs),
                      final_loss=history.last("loss"), train_seconds=round(seconds, 1))
        return result

    def fit_model(self, data: Dataset, device, out_dir: Path, *, seed: int, progress: bool, resume: bool,
                  log) -> tuple:
        """Build the vocabulary and the model for ``data`` and train it through every phase.
        Returns ``(model, vocab, history, seconds)``."""
        if not data.train:
            raise SpecError(f"{data.spec} has no training examples")
        vocab = self.build_vocab(data)
        model = self.accelerated(self.model_for(data, vocab)).to(device)
        phases = self.phases()
        for _, prepare in phases:      # the configuration the model ends in is the one saved
            prepare(model)
        extra = {"recipe": self.name, "hparams": self.config.to_dict(), "model_config": dict(model.config),
                 "vocab": vocab.to_list(), "data": data.spec, "seed": seed}
        train, held_out = self.validation_split(data.train, seed)
        evaluate = (lambda m: self.validate(m, held_out, vocab, device)) if held_out else None
        groups = self.batch_groups(train, seed)
        started = time.perf_counter()
        history = None
        for i, (epochs, prepare) in enumerate(phases):
            prepare(model)
            # a later phase always goes on from the checkpoint the previous phase wrote
            history = fit(model, train if groups is None else None, groups=groups, evaluate=evaluate,
                          make_batch=lambda examples: self.make_batch(examples, vocab), loss_fn=self.loss_fn,
                          config=self.train_config(epochs, seed, progress), device=device, out_dir=out_dir,
                          resume=resume or i > 0, extra_state=extra, log=log, best_epoch=self.best_epoch())
        return model, vocab, history, time.perf_counter() - started

    def best_epoch(self):
        """How early stopping keeps the best epoch and when it stops (``fit``'s ``best_epoch``;
        None: :class:`~dca_course.train.BestEpoch`, patience alone)."""
        return None

    def train_config(self, epochs: int, seed: int, progress: bool) -> TrainConfig:
        c = self.config
        return TrainConfig(epochs=epochs, batch_size=c.batch_size, lr=c.lr, clip=c.clip, seed=seed,
                           eval_every=0, progress=progress, time_limit=c.time_limit)

    @classmethod
    def restore(cls, state: dict, device):
        """The recipe, model and vocabulary of a checkpoint written by :meth:`train`."""
        recipe = cls(cls.config_class.from_dict(state["hparams"]))
        vocab = Vocab.from_list(state["vocab"])
        model = recipe.accelerated(recipe.model_from_config(state["model_config"])).to(device)
        model.load_state_dict(state["model"])
        return recipe, model, vocab

    def evaluate(self, model, vocab, data: Dataset, split: str, device) -> dict:
        # a no-op for runs that saved their decode lengths; older checkpoints take the data's
        self.config = self.config.for_data(data)
        result = self.score(model, data.split(split), vocab, device, data.kind)
        result.update(model=self.name, data=data.spec, split=split)
        return result


def save_metrics(out_dir: Path, result: dict) -> None:
    write_json(Path(out_dir) / "metrics.json", result)


def load_run(out_dir: Path, device, models: dict):
    """The recipe, model and vocabulary saved in a run folder's ``last.pt`` (``models``: the
    name -> recipe table the checkpoint's ``recipe`` is looked up in), and the checkpoint."""
    state = load_checkpoint(Path(out_dir) / "last.pt", map_location=device)
    if state.get("recipe") not in models:
        raise SpecError(f"{out_dir}: a run of an unknown model {state.get('recipe')!r}")
    recipe, model, vocab = models[state["recipe"]].restore(state, device)
    return recipe, model, vocab, state
