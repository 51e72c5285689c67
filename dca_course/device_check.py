"""A second device on a machine that has none: catch GPU mistakes on a CPU (``make device-check``).

Most machines that run this course's tests have no GPU, yet a cell that makes a tensor on the CPU
and adds it to one on ``device`` fails on every GPU.  With ``DCA_DEVICE_CHECK=1`` in the
environment, :func:`dca_course.device` returns :data:`CHECK_DEVICE` (``cpu:1``) instead of the CPU
and turns this check on.  It computes everything on the CPU, so every number stays what it is
and one nbval run serves both purposes, but it remembers which memory was put "on the device"
and fails where CUDA fails:

* a tensor made with ``device=device``, moved with ``.to(device)`` or ``module.to(device)``, or
  computed from such tensors, is *on the device* (the mark belongs to its memory, so views,
  ``.data`` and parameters share it; gradients follow their parameter; ``.cpu()`` returns an
  unmarked copy, and ``x.device`` answers ``cpu:1``);
* an operation that mixes device tensors with CPU tensors that are not 0-dimensional raises
  CUDA's ``RuntimeError: Expected all tensors to be on the same device``, except where CUDA
  allows it (``copy_``, indices of ``x[...]``, the CPU lengths of packed sequences);
* ``.numpy()`` of a device tensor (also through ``np.asarray`` or matplotlib) raises CUDA's
  ``TypeError: can't convert cuda:0 device type tensor to numpy``;
* a non-blocking copy from the device to the CPU (``x.to("cpu", non_blocking=True)``) raises: on a
  GPU the host may read it before the copy has finished, a race that gives wrong numbers now and
  then rather than an error;
* a recurrent layer whose weights are not one block of memory warns, as cuDNN does, that "RNN
  module weights are not part of single contiguous chunk of memory" (``module.to(device)`` puts
  them into one block; ``copy.deepcopy`` does not);
* ``torch.load(..., map_location=device)`` loads onto the device.

It is a ``TorchFunctionMode``, so it sees each PyTorch call made from Python (not the backward
pass, which runs where the forward pass put its tensors).  It is a check for this course's code,
not an emulator of CUDA: what it lets through may still fail on a GPU, but what it stops would.
"""
from __future__ import annotations

import os
import sys
import warnings
import weakref
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["CHECK_DEVICE", "DeviceCheck", "activate", "deactivate", "is_active", "on_device", "requested"]

CHECK_DEVICE = torch.device("cpu", 1)       # runs on the CPU; the index tells it from the host

_marked: dict[int, weakref.ref] = {}        # id(storage) -> weak reference to that storage


def requested() -> bool:
    """Whether ``DCA_DEVICE_CHECK`` asks for the check (``1``, ``true``, ``yes``)."""
    return os.environ.get("DCA_DEVICE_CHECK", "").strip().lower() in ("1", "true", "yes")


def _storage(t: torch.Tensor):
    try:
        return t.untyped_storage()
    except (RuntimeError, NotImplementedError):     # sparse, nested, meta: no plain storage
        return None


def on_device(t: torch.Tensor) -> bool:
    """Whether ``t``'s memory was put on the checked device."""
    storage = _storage(t)
    if storage is None:
        return False
    ref = _marked.get(id(storage))
    return ref is not None and ref() is storage


def _mark(t: torch.Tensor) -> torch.Tensor:
    storage = _storage(t)
    if storage is not None and not on_device(t):
        key = id(storage)
        _marked[key] = weakref.ref(storage, lambda _ref, key=key: _marked.pop(key, None))
    return t


def _tensors(obj, depth: int = 3):
    """The tensors in an argument: itself, or inside lists, tuples and dicts (a few levels down;
    a list that starts with a number is data, such as ``torch.tensor([...])``'s, and is not walked)."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif depth and isinstance(obj, (list, tuple)):
        if isinstance(obj, list) and obj and isinstance(obj[0], (int, float, bool)):
            return
        for item in obj:
            yield from _tensors(item, depth - 1)
    elif depth and isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item, depth - 1)


def _device_kind(value):
    """'device' for the checked device, 'host' for the CPU, None for anything else."""
    if isinstance(value, torch.Tensor):
        return "device" if on_device(value) else "host"
    if isinstance(value, (str, torch.device)):
        try:
            dev = torch.device(value)
        except RuntimeError:
            return None
        if dev == CHECK_DEVICE:
            return "device"
        return "host" if dev.type == "cpu" else None
    return None


def _target_of_to(args, kwargs):
    """Where ``tensor.to(...)`` sends its tensor: 'device', 'host' or None (only a dtype)."""
    if "device" in kwargs:
        return _device_kind(kwargs["device"])
    for value in args[1:]:
        kind = _device_kind(value)
        if kind is not None:
            return kind
    return None


# Calls whose CPU tensors CUDA accepts beside device tensors (lengths and batch sizes of packed
# sequences are CPU tensors by design).
_HOST_ARGS_ALLOWED = {"_pack_padded_sequence", "_pad_packed_sequence", "lstm", "gru", "rnn_tanh", "rnn_relu"}
_RNN_CALLS = {"lstm", "gru", "rnn_tanh", "rnn_relu"}
# Outputs that CUDA returns on the CPU: the batch sizes of a packed sequence, the lengths of a padded one.
_HOST_OUTPUTS = {"_pack_padded_sequence": 1, "_pad_packed_sequence": 1}
# Calls that look at tensors' types or swap their memory without computing with them.
_NOT_COMPUTING = {"_has_compatible_shallow_copy_type", "set_", "is_same_size", "is_set_to"}
_DEVICE_ATTR, _GRAD_ATTR = torch.Tensor.device, torch.Tensor.grad


def _mixing_error(name: str, tensors: list) -> str | None:
    """CUDA's complaint when device tensors meet CPU tensors that are not 0-dimensional, else None."""
    host = [t for t in tensors if t.dim() > 0 and not on_device(t)]
    if name in _HOST_ARGS_ALLOWED:
        host = [t for t in host if not (t.dim() == 1 and t.dtype == torch.int64)]
    if not host:
        return None
    shapes = ", ".join(str(tuple(t.shape)) for t in host[:3])
    return (f"Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
            f"(dca_course's device check, in {name}: CPU tensor(s) of shape {shapes} meet tensors on "
            f"`device`; make them on `device` or move them with .to(device))")


def _one_chunk(weights) -> bool:
    """Whether the weights lie in one block of memory, as cuDNN wants them."""
    storages = {id(_storage(w)) for w in weights}
    return len(storages) == 1


def _caller_stacklevel() -> int:
    """Stack level of the first frame outside PyTorch and this library (a notebook cell)."""
    here = Path(__file__).resolve().parent
    frame, level = sys._getframe(1), 1
    while frame is not None:
        path = frame.f_code.co_filename
        if "torch" not in Path(path).parts and not path.startswith(str(here)):
            return level
        frame, level = frame.f_back, level + 1
    return 1


def _warn_if_not_one_chunk(args) -> None:
    weights = args[3] if len(args) > 3 and isinstance(args[3], (list, tuple)) else None
    if not weights:
        weights = args[2] if len(args) > 2 and isinstance(args[2], (list, tuple)) else None
    if weights and all(isinstance(w, torch.Tensor) and on_device(w) for w in weights) and not _one_chunk(weights):
        warnings.warn("RNN module weights are not part of single contiguous chunk of memory. This means they need "
                      "to be compacted at every call, possibly greatly increasing memory usage. To compact weights "
                      "again call flatten_parameters(). (dca_course's device check, as cuDNN on a GPU)",
                      UserWarning, stacklevel=_caller_stacklevel())


def _mark_all(result):
    for t in _tensors(result):
        _mark(t)
    return result


def _fresh(result, args) -> torch.Tensor:
    """``result`` in memory of its own when it shares memory with an input (a move that did not copy)."""
    inputs = {id(_storage(t)) for t in _tensors(args)}
    if isinstance(result, torch.Tensor) and id(_storage(result)) in inputs:
        return result.clone()
    return result


class DeviceCheck(TorchFunctionMode):
    """The check itself: see the module's docstring."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if torch._C._current_autograd_node() is not None:     # inside backward: nothing to check
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        owner = getattr(func, "__self__", None)          # a property's descriptor, for x.device
        if name == "__set__" or name in _NOT_COMPUTING:  # x.data = ..., x.grad = ...: no arithmetic
            return func(*args, **kwargs)
        if owner is _DEVICE_ATTR:
            return CHECK_DEVICE if on_device(args[0]) else func(*args)
        if func in (torch.Tensor.numpy, torch.Tensor.__array__) and on_device(args[0]):
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                            "to host memory first. (dca_course's device check: the tensor is on `device`, as on a GPU)")
        if owner is _GRAD_ATTR:
            grad = func(*args)
            return _mark(grad) if grad is not None and on_device(args[0]) else grad
        if func is torch.Tensor.cpu:
            return _fresh(func(*args, **kwargs), args) if on_device(args[0]) else func(*args, **kwargs)
        if func is torch.Tensor.to:
            return self._move(func, args, kwargs, _target_of_to(args, kwargs))
        if func in (torch.Tensor.copy_, torch.Tensor.__setitem__):    # CUDA copies across devices
            return func(*args, **kwargs)
        if "device" in kwargs and _device_kind(kwargs["device"]) is not None:
            return self._move(func, args, kwargs, _device_kind(kwargs["device"]))
        if func is torch.Tensor.__getitem__:      # CPU indices into a device tensor are allowed
            result = func(*args, **kwargs)
            return _mark_all(result) if on_device(args[0]) else result
        tensors = list(_tensors((args, kwargs)))
        if not any(on_device(t) for t in tensors):          # nothing on the device: nothing to check
            return func(*args, **kwargs)
        problem = _mixing_error(name or str(func), tensors)
        if problem:
            raise RuntimeError(problem)
        if name in _RNN_CALLS:
            _warn_if_not_one_chunk(args)
        result = func(*args, **kwargs)
        host = _HOST_OUTPUTS.get(name)
        _mark_all([r for i, r in enumerate(result) if i != host] if host is not None else result)
        return result

    @staticmethod
    def _move(func, args, kwargs, target):
        """A call that says where its result goes: ``x.to(...)``, ``torch.zeros(..., device=...)``."""
        if target is None:                        # only a dtype: it stays where it is
            result = func(*args, **kwargs)
            return _mark_all(result) if any(on_device(t) for t in _tensors(args[:1])) else result
        if target == "host" and kwargs.get("non_blocking") and any(on_device(t) for t in _tensors(args[:1])):
            raise RuntimeError("a non-blocking copy from the GPU to the CPU: on a GPU the CPU may read the tensor "
                               "before the copy has finished (dca_course's device check); copy with "
                               "non_blocking=False, or synchronize before reading it")
        result = func(*args, **kwargs)
        if target == "device":
            fresh = result if any(on_device(t) for t in _tensors(args[:1])) else _fresh(result, args)
            return _mark_all(fresh)
        return _fresh(result, args) if isinstance(result, torch.Tensor) and on_device(result) else result


_active: DeviceCheck | None = None
_originals: dict = {}


def _flatten_parameters(self) -> None:
    """cuDNN's ``flatten_parameters``: the weights of a layer on the device go into one block."""
    weights = [w for w in self._flat_weights if isinstance(w, torch.Tensor)]
    if not weights or not all(on_device(w) for w in weights) or _one_chunk(weights):
        return _originals["flatten_parameters"](self)
    align = 16                                    # keep each weight 64-byte aligned, as before
    sizes = [(w.numel() + align - 1) // align * align for w in weights]
    block = torch.zeros(sum(sizes), dtype=weights[0].dtype, device=CHECK_DEVICE)
    offset = 0
    with torch.no_grad():
        for w, size in zip(weights, sizes):
            view = block[offset: offset + w.numel()].view_as(w)
            view.copy_(w)
            w.set_(block.untyped_storage(), offset, w.size(), w.stride())
            offset += size


def _load(*args, **kwargs):
    """``torch.load`` with ``map_location=device``: load on the CPU, then mark what it loaded."""
    where = kwargs.get("map_location", args[1] if len(args) > 1 else None)
    if _device_kind(where) != "device":
        return _originals["load"](*args, **kwargs)
    if "map_location" in kwargs:
        kwargs["map_location"] = "cpu"
    else:
        args = (args[0], "cpu", *args[2:])
    state = _originals["load"](*args, **kwargs)
    return _mark_all(state)


def activate() -> torch.device:
    """Turn the check on for this process (once) and return the device it checks."""
    global _active
    if _active is None:
        _originals["flatten_parameters"] = torch.nn.RNNBase.flatten_parameters
        _originals["load"] = torch.load
        torch.nn.RNNBase.flatten_parameters = _flatten_parameters
        torch.load = _load
        _active = DeviceCheck()
        _active.__enter__()
    return CHECK_DEVICE


def is_active() -> bool:
    return _active is not None


def deactivate() -> None:
    """Turn the check off again (for tests)."""
    global _active
    if _active is not None:
        _active.__exit__(None, None, None)
        torch.nn.RNNBase.flatten_parameters = _originals["flatten_parameters"]
        torch.load = _originals["load"]
        _active = None
