"""What the notebooks' "On a GPU" sections share: exact comparisons, copies on a device, step times.

* :func:`full_float32` turns TF32 off inside a CPU-against-GPU comparison.  On Ampere and newer
  GPUs cuDNN's recurrent kernels may compute float32 products in TF32 by default
  (``torch.backends.cudnn.allow_tf32`` is True), a format with float32's range and a 10-bit
  mantissa: each product is rounded to a relative 2**-11 (about 4.9e-4) instead of float32's
  2**-24 (about 6e-8).  A check that a GPU agrees with the CPU within 1e-4 then fails for that
  reason alone, so the checks compare in full float32 and state their tolerance for that.
* :func:`copy_to` copies a model onto a device with its recurrent layers' weights in one block of
  memory: a bare ``copy.deepcopy`` of a model on a GPU leaves them apart, and cuDNN then warns
  (and compacts them) at every call.
* :func:`gpu_present` says whether a section's GPU work runs: on CUDA, and under the device
  check (``make device-check``), where the checked device stands in for the GPU so that the
  section's own code is checked for device mistakes on a machine without one.
* :func:`step_times`, :func:`step_ms` and :func:`step_time_table` time training steps on several
  devices, at the sizes of :func:`timing_profile`.
"""
from __future__ import annotations

import contextlib
import copy
import statistics
import time

import torch
from torch import nn

from . import device_check

__all__ = ["full_float32", "keep_random_state", "copy_to", "gpu_present", "timing_profile",
           "synchronize", "step_ms", "step_times", "step_time_table"]


@contextlib.contextmanager
def full_float32():
    """TF32 off for CUDA's matrix products and for cuDNN inside the block; restored after."""
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


@contextlib.contextmanager
def keep_random_state(device=None):
    """Random numbers drawn inside the block come from a fork: the notebook's own stream (the CPU's,
    and ``device``'s on CUDA) goes on afterwards as if the block had not run."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    forked = [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=forked):
        yield


def copy_to(module: nn.Module, device) -> nn.Module:
    """An independent copy of ``module`` on ``device``, its recurrent layers ready for cuDNN: ``.to``
    re-flattens every ``nn.RNNBase`` (its ``_apply`` calls ``flatten_parameters``), also when the
    copy is already on ``device``."""
    return copy.deepcopy(module).to(device)


def gpu_present(device) -> bool:
    """Whether a notebook's GPU work runs on ``device``: CUDA, or the device check's stand-in."""
    device = torch.device(device)
    return device.type == "cuda" or (device_check.is_active() and device == device_check.CHECK_DEVICE)


def timing_profile(device) -> str:
    """The profile whose sizes a notebook's timing cell uses: ``full`` on CUDA; ``fast`` on the device
    check's stand-in, which checks where tensors live, not seconds, and must stay quick on a CPU."""
    return "full" if torch.device(device).type == "cuda" else "fast"


def synchronize(device) -> None:
    """Wait for the device's queued work (CUDA runs asynchronously; a CPU has nothing to wait for)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def step_ms(step, device, *, repeats: int = 5, warmup: int = 2) -> float:
    """Median milliseconds of ``step()`` on ``device``, after ``warmup`` untimed calls."""
    times = []
    for i in range(warmup + repeats):
        synchronize(device)
        start = time.perf_counter()
        step()
        synchronize(device)
        if i >= warmup:
            times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times)


def step_times(make_model, make_batch, loss_fn, devices, *, repeats: int = 2, warmup: int = 1) -> dict[str, float]:
    """Milliseconds per training step (forward, ``loss_fn(model, batch)``, backward, Adam) on each
    device, for a fresh ``make_model()`` and the batch ``make_batch()`` moved there.

    A GPU step is timed ``repeats`` times after ``warmup`` untimed ones (its first steps pay for
    the allocator and for choosing kernels); a CPU step at these sizes is long enough to time
    once, with the notebook's threads (one: more threads fighting other work for the cores
    only slow it down).  Random numbers are drawn from a fork, so the notebook's own stream is
    left as it was.  Under the device check each step runs once: it checks where tensors live,
    not seconds.
    """
    times = {}
    cuda = next((torch.device(d) for d in devices if torch.device(d).type == "cuda"), None)
    with keep_random_state(cuda):
        for dev in devices:
            dev = torch.device(dev)
            model = make_model().to(dev).train()
            batch = make_batch().to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)

            def step():
                opt.zero_grad(set_to_none=True)
                loss_fn(model, batch).backward()
                opt.step()

            once = dev.type == "cpu" or device_check.is_active()
            times[_label(dev)] = step_ms(step, dev, repeats=1 if once else repeats, warmup=0 if once else warmup)
    return times


def _label(dev: torch.device) -> str:
    if dev.type == "cpu" and dev != device_check.CHECK_DEVICE:
        threads = torch.get_num_threads()
        return f"CPU ({threads} thread{'s' if threads > 1 else ''})"
    return str(dev) if dev.type != "cuda" else f"GPU ({torch.cuda.get_device_name(dev)})"


def step_time_table(rows: dict[str, dict[str, float]]) -> str:
    """``{what: {device: ms}}`` as lines of milliseconds, and how many times faster than the first
    device each other one is."""
    lines = []
    for what, ms in rows.items():
        (first, base), *others = ms.items()
        lines.append(f"{what}:")
        lines.append(f"  {first:<40}{base:>10.1f} ms")
        lines += [f"  {name:<40}{t:>10.1f} ms   {base / t:.1f}x as fast" for name, t in others]
    return "\n".join(lines)
