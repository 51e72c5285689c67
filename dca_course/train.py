"""The explicit training loop, atomic checkpoints, resuming, and DDP under ``torchrun``.

:func:`fit` is the loop every model of the course trains with::

    for epoch in epochs:
        for batch in batches:                # with a tqdm.auto progress bar
            loss, stats = loss_fn(model, batch)
            loss.backward()
            clip_grad_norm_(params, clip)    # keeps RNN gradients from exploding
            optimizer.step(); optimizer.zero_grad()
        metrics = evaluate(model)            # the evaluation hook
        save_checkpoint(out_dir / "last.pt") # atomically: a crash never leaves half a file

Launched by ``torchrun --nproc_per_node N``, the same loop wraps the model in
``DistributedDataParallel`` (NCCL on GPUs, gloo on CPU), gives every process its own share
of each epoch's batches, and lets rank 0 alone write checkpoints and metrics.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import torch
from torch import nn

from .data.batching import batch_indices, iterate_batches
from .errors import InputError
from .io import atomic_write
from .outputs import tqdm


class CheckpointError(InputError):
    """A checkpoint file that cannot be read (truncated, corrupt, or not a checkpoint)."""


# -- atomic files: dca_course.io (imported here, where checkpoints are written) -------------
#: Inside :func:`saving_goes_on`: the checkpoints not saved so far (path -> why), and what to tell
#: the user when one fails; None outside it, where a failed save raises.
_UNSAVED: dict | None = None
_WARN: Callable[[str], None] | None = None


def save_checkpoint(path: str | os.PathLike, state: dict) -> Path | None:
    """Save a dict of tensors, numbers, strings, lists and dicts atomically.

    Inside :func:`saving_goes_on`, a save that fails (a full disk, a folder removed) is recorded
    and training goes on; the file's next save that succeeds takes it off the record."""
    if _UNSAVED is None:
        return atomic_write(path, lambda tmp: torch.save(state, tmp))
    try:
        saved = atomic_write(path, lambda tmp: torch.save(state, tmp))
    except OSError as exc:
        if str(path) not in _UNSAVED and _WARN is not None:
            _WARN(f"could not save {path} ({exc.strerror or exc}); training goes on, and says at the end "
                  "what was not saved")
        _UNSAVED[str(path)] = exc.strerror or str(exc)
        return None
    _UNSAVED.pop(str(path), None)
    return saved


@contextmanager
def saving_goes_on(warn: Callable[[str], None] | None = None):
    """Within it, a checkpoint that cannot be saved does not end the training: the command line
    trains, scores and prints the metrics, then says what was not saved (never losing a finished
    training to a full disk).  Yields the record, ``{path: why}``, of checkpoints not saved."""
    global _UNSAVED, _WARN
    outer = _UNSAVED, _WARN
    _UNSAVED, _WARN = {}, warn
    try:
        yield _UNSAVED
    finally:
        _UNSAVED, _WARN = outer


def load_checkpoint(path: str | os.PathLike, map_location="cpu") -> dict:
    """Load a checkpoint with ``weights_only=True``: tensors and plain data only, no code runs.

    A missing, truncated or foreign file raises :class:`CheckpointError` naming the file.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # torch raises several types for a damaged zip archive
        # torch's own message (for a foreign file, a page on weights_only) names no file; ours does
        raise CheckpointError(f"{path}: cannot read this checkpoint: not a PyTorch checkpoint file, or "
                              f"truncated or corrupt ({type(exc).__name__})") from None
    if not isinstance(state, dict) or "model" not in state:
        raise CheckpointError(f"{path}: not a dca_course checkpoint (no 'model' entry)")
    return state


# -- distributed -------------------------------------------------------------------------
@dataclass
class DistInfo:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def dist_info() -> DistInfo:
    """Rank and world size from the variables ``torchrun`` sets (1 process otherwise)."""
    return DistInfo(int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)),
                    int(os.environ.get("LOCAL_RANK", 0)))


def init_distributed(device: torch.device) -> DistInfo:
    """Join the process group when launched by torchrun: NCCL on CUDA, gloo on CPU."""
    info = dist_info()
    if info.enabled and not torch.distributed.is_initialized():
        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            torch.cuda.set_device(info.local_rank)
        torch.distributed.init_process_group(backend=backend)
    return info


def distributed_device(device: torch.device) -> torch.device:
    """Under torchrun each process takes its own GPU (LOCAL_RANK); CPU stays CPU."""
    info = dist_info()
    if info.enabled and device.type == "cuda":
        return torch.device("cuda", info.local_rank)
    return device


# -- the loop ------------------------------------------------------------------------------
@dataclass
class TrainConfig:
    epochs: int = 10
    batch_size: int = 32
    lr: float = 1e-3
    clip: float = 1.0          # max global gradient norm
    seed: int = 0
    eval_every: int = 1        # epochs between calls of the evaluation hook (0: only at the end)
    progress: bool = True
    time_limit: float | None = None   # seconds; stop after the epoch that crosses it
    # Early stopping: ``monitor`` names a metric of the evaluation hook (higher is better; the
    # hook should score held-out training examples, never the test).  The weights of the last
    # epoch that matched or beat the best so far are kept, and training stops after ``patience``
    # evaluations without a better one (0: never stops early).
    monitor: str | None = None
    patience: int = 0
    # With ``monitor``: multiply the learning rate by ``lr_decay`` after every ``lr_patience``
    # evaluations without a better one (0: a constant learning rate).
    lr_decay: float = 0.5
    lr_patience: int = 0
    weight_decay: float = 0.0  # L2 penalty of Adam (the DMN papers regularize with L2)
    # With fixed ``groups``: make each group's batch on its first epoch and keep it for the later
    # ones.  It saves re-padding the same examples every epoch, and costs memory for the whole
    # training set's padded batches (small for bAbI, gigabytes for a full news corpus).
    keep_batches: bool = False


@dataclass
class History:
    epochs: list = field(default_factory=list)   # one dict per epoch: loss, stats, metrics
    best: dict = field(default_factory=dict)     # early stopping: the epoch kept and its metric

    def last(self, key, default=None):
        for row in reversed(self.epochs):
            if key in row:
                return row[key]
        return default


def unwrap(model: nn.Module) -> nn.Module:
    """The model inside a DistributedDataParallel wrapper (or the model itself)."""
    return model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model


def epoch_batches(epoch: int, config: TrainConfig, make_batch: Callable, *, train_data: Sequence | None = None,
                  groups: Sequence[Sequence] | None = None, rank: int = 0, world_size: int = 1,
                  made: dict | None = None) -> list:
    """This process's batches of ``epoch``, in a seeded order (``config.seed + epoch``).

    From ``train_data``: the examples shuffled and cut into batches of ``config.batch_size``.
    From ``groups`` (fixed groups of examples, e.g. of similar lengths): the groups shuffled,
    each one batch.  Under torchrun every process takes its own share.  ``made`` (a dict kept
    across epochs; ``TrainConfig.keep_batches``) holds each group's batch once it is made, since a
    group is the same batch every epoch.  Without it each epoch makes its batches afresh.
    """
    seed = config.seed + epoch
    if groups is not None:
        order = batch_indices(len(groups), 1, shuffle=True, seed=seed, rank=rank, world_size=world_size)
        if made is None:
            return [make_batch(list(groups[i])) for (i,) in order]
        for (i,) in order:
            if i not in made:
                made[i] = make_batch(list(groups[i]))
        return [made[i] for (i,) in order]
    return list(iterate_batches(train_data, config.batch_size, make_batch, shuffle=True, seed=seed,
                                rank=rank, world_size=world_size))


def fit(model: nn.Module, train_data: Sequence | None = None, *, make_batch: Callable, loss_fn: Callable,
        config: TrainConfig, groups: Sequence[Sequence] | None = None, device: torch.device | None = None,
        evaluate: Callable[[nn.Module], dict] | None = None,
        optimizer: torch.optim.Optimizer | None = None,
        out_dir: str | os.PathLike | None = None, resume: bool = True,
        extra_state: dict | None = None, log: Callable[[str], None] | None = None,
        best_epoch: Callable[..., BestEpoch] | None = None) -> History:
    """Train ``model`` on ``train_data`` and return the per-epoch history.

    The batches of an epoch are ``make_batch(examples)`` of ``config.batch_size`` shuffled
    examples of ``train_data``, or, given ``groups`` (a list of example lists) instead, one
    batch per group with the groups in a shuffled order (see :func:`epoch_batches`).
    ``make_batch(examples) -> batch`` (with a ``.to(device)`` method), ``loss_fn(model, batch)
    -> (loss, stats)`` where ``loss_fn`` must call ``model(...)`` so that DDP can average the
    gradients, ``evaluate(model) -> metrics`` the hook.  With ``out_dir``, ``last.pt`` holds the
    model, optimizer, epoch, history and ``extra_state`` after every epoch, and a run started
    again with ``resume=True`` goes on from it.  With ``config.monitor``, ``best_epoch(monitor,
    saved, patience)`` keeps the best epoch and says when to stop (:class:`BestEpoch`; a recipe may
    pass a subclass with its own stopping rule).
    """
    if (train_data is None) == (groups is None):
        raise ValueError("fit takes train_data (examples to batch) or groups (fixed batches), one of the two")
    device = device or next(model.parameters()).device
    info = init_distributed(device)
    model.to(device)
    optimizer = optimizer or torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    history, start_epoch, saved_best = History(), 0, None
    ckpt = Path(out_dir) / "last.pt" if out_dir else None
    if ckpt is not None and resume and ckpt.exists():
        state = load_checkpoint(ckpt, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = int(state["epoch"]) + 1
        history.epochs = list(state.get("history", []))
        saved_best = state.get("best")
        if info.is_main and log:
            log(f"resumed from {ckpt} after epoch {start_epoch}")
    net = model
    if info.enabled:
        ids = [device.index] if device.type == "cuda" else None
        net = nn.parallel.DistributedDataParallel(model, device_ids=ids)
    best = (best_epoch or BestEpoch)(config.monitor, saved_best, config.patience) if config.monitor else None

    def save(epoch: int) -> None:
        save_checkpoint(ckpt, {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                               "epoch": epoch, "history": history.epochs, "config": asdict(config),
                               **(best.state() if best else {}), **(extra_state or {})})

    started, epoch = time.perf_counter(), start_epoch - 1
    made: dict | None = {} if config.keep_batches else None   # each group's batch, kept (epoch_batches)
    for epoch in range(start_epoch, config.epochs):
        net.train()
        batches = epoch_batches(epoch, config, make_batch, train_data=train_data, groups=groups,
                                rank=info.rank, world_size=info.world_size, made=made)
        # mininterval and refresh=False below: redrawing the bar on every step floods a notebook
        # kernel's message queue (over 1,000 messages in a cell), which can drop the cell's
        # final "idle" message and make nbval time out.
        bar = tqdm(batches, desc=f"epoch {epoch + 1}/{config.epochs}", leave=False, mininterval=1.0,
                   disable=not (config.progress and info.is_main))
        total, count, sums = 0.0, 0, {}
        for batch in bar:
            batch = batch.to(device)
            loss, stats = loss_fn(net, batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if config.clip:
                nn.utils.clip_grad_norm_(model.parameters(), config.clip)
            optimizer.step()
            total += loss.item()
            count += 1
            for k, v in stats.items():
                sums[k] = sums.get(k, 0.0) + float(v)
            bar.set_postfix(loss=f"{total / count:.3f}", refresh=False)
        row = {"epoch": epoch + 1, "loss": total / max(count, 1)}
        row.update({k: v / max(count, 1) for k, v in sums.items()})
        last_epoch = epoch + 1 == config.epochs
        out_of_time = config.time_limit is not None and time.perf_counter() - started > config.time_limit
        if evaluate is not None and info.is_main and (
                last_epoch or out_of_time or (config.eval_every and (epoch + 1) % config.eval_every == 0)):
            net.eval()
            with torch.no_grad():
                row.update(evaluate(model))
        stop = out_of_time or (best is not None and best.update(row, model))
        decay = bool(best is not None and config.lr_patience and best.waited
                     and best.waited % config.lr_patience == 0)
        if info.enabled:   # rank 0 alone evaluates (and reads its clock): every process follows its decisions
            decisions = [stop, decay]
            torch.distributed.broadcast_object_list(decisions, src=0)
            stop, decay = decisions
        if decay:
            for group in optimizer.param_groups:
                group["lr"] *= config.lr_decay
            row["lr"] = optimizer.param_groups[0]["lr"]
        history.epochs.append(row)
        if info.is_main and ckpt is not None:
            save(epoch)
        if info.is_main and log:
            log(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
        if stop:
            break
    if best is not None and best.weights is not None:
        model.load_state_dict(best.weights)      # the best epoch's weights are the ones returned
        history.best = {"epoch": best.epoch, config.monitor: best.value}
        if info.is_main and ckpt is not None:    # and the ones `evaluate DIR` reads
            save(epoch)
    if best is not None and info.enabled:        # rank 0 kept them: every process returns them
        for tensor in model.state_dict().values():
            torch.distributed.broadcast(tensor, src=0)
    return history


class BestEpoch:
    """The best value of the early-stopping metric so far, its epoch and a copy of its weights;
    :meth:`update` says when ``patience`` evaluations passed without a better one (0: never)."""

    def __init__(self, monitor: str, saved: dict | None = None, patience: int = 0):
        saved = saved or {}
        self.monitor, self.patience = monitor, patience
        self.value, self.epoch = saved.get("value"), saved.get("epoch", 0)
        self.weights, self.waited = saved.get("weights"), saved.get("waited", 0)

    def is_best(self, row: dict) -> bool:
        # ties count as better: the later, longer-trained epoch is kept
        return self.value is None or row[self.monitor] >= self.value

    def keep(self, row: dict, model: nn.Module) -> None:
        self.value, self.epoch = row[self.monitor], row["epoch"]
        self.weights = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def update(self, row: dict, model: nn.Module) -> bool:
        """Record an epoch's metrics; True when training should stop."""
        if self.monitor not in row:
            return False
        if self.is_best(row):
            self.keep(row, model)
            self.waited = 0
            return False
        self.waited += 1
        return bool(self.patience) and self.waited >= self.patience

    def state(self) -> dict:
        return {"best": {"value": self.value, "epoch": self.epoch, "weights": self.weights, "waited": self.waited}}
