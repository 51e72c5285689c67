"""dca_course: the small library behind the notebooks, from a hand-built GRU to Deep Communicating Agents.

Three functions start every notebook:

* :func:`device` picks where tensors live: CUDA, then Apple's MPS, then the CPU.  The
  environment variable ``DCA_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``, ``mps``) overrides it.
  With ``DCA_DEVICE_CHECK=1`` on a machine without a GPU, it returns a checked stand-in for one
  (:mod:`dca_course.device_check`), so that ``make device-check`` catches GPU mistakes there.
* :func:`seed_everything` seeds Python, NumPy and PyTorch so runs repeat exactly.
* :func:`setup` does both, sets print and plot defaults and the process's settings
  (:func:`configure_process`: importing the package changes no global state).  Its seed comes from the
  environment variable ``DCA_SEED`` (default 0), so every notebook can be run on another seed
  unchanged: ``DCA_SEED=1 make notebooks``.  :func:`run_seed` tells a notebook which seed that is.

What a notebook prints is of two kinds, deterministic and trained; :mod:`dca_course.outputs`
holds the one convention that tells them apart (``trained``, ``trained_text``, ``claim``).
"""
from __future__ import annotations

import os
import platform
import random

import numpy as np
import torch


def _keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep freed memory for reuse instead of handing it back to the
    operating system (Linux only; ``DCA_KEEP_MEMORY=0`` turns it off).

    A training step allocates and frees the same few megabyte-sized tensors hundreds of times.
    By default glibc serves blocks of that size with fresh ``mmap`` calls, so every allocation
    page-faults and zero-fills its memory again: on the course's CPU machine that was 11,000
    page faults and a sixth of the time of a pointer-generator training step
    (``results/step_profile.md``).  Raising the mmap threshold to its largest value
    (32 MB) and the trim threshold to 512 MB makes the freed blocks stay in the heap, where the
    next step reuses them.  The process's peak memory is unchanged; it is just not returned
    until the process ends.  Returns whether the settings were applied.
    """
    if platform.system() != "Linux" or os.environ.get("DCA_KEEP_MEMORY", "1") == "0":
        return False
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):       # not glibc (e.g. musl): leave the allocator alone
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024)) and bool(mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024))


def _pin_cpu_kernels() -> str:
    """Pin PyTorch's CPU kernels to AVX2 on an x86 processor unless ``ATEN_CPU_CAPABILITY`` is
    already set (yours wins: ``default``, ``avx512``...); returns the variable's value ("" where
    it stays unset).

    Stored notebook outputs must come out the same on every x86 machine.  PyTorch's own CPU
    kernels pick their vector width from the processor (AVX2 or AVX-512), and the two add floats
    in different orders: after a minute of training the printed metrics differ in the second
    decimal.  Pinning AVX2, which every x86 machine of the last decade has, removes that.
    PyTorch reads the variable once, at the first tensor operation of the process (importing
    ``torch`` or ``dca_course`` runs none), so it must be set before any.
    """
    if platform.machine().lower() in ("x86_64", "amd64"):
        os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
    return os.environ.get("ATEN_CPU_CAPABILITY", "")


def configure_process() -> None:
    """The process-wide settings every run of the course shares: PyTorch's CPU kernels pinned to
    AVX2 on x86 (:func:`_pin_cpu_kernels`) and freed memory kept for reuse
    (:func:`_keep_freed_memory`).  Importing ``dca_course`` changes nothing; :func:`setup` calls
    this, and so does every script that computes without it (the command line, the experiments,
    the benchmarks, the unit tests' ``conftest.py``), as its first step: the kernels' width is
    fixed at the first tensor operation, so a call after one leaves it as it was."""
    _pin_cpu_kernels()
    _keep_freed_memory()


__version__ = "0.1.0"

__all__ = ["configure_process", "device", "run_seed", "seed_everything", "setup", "__version__"]


def device(prefer: str | None = None) -> torch.device:
    """The device to compute on: ``prefer``, else ``$DCA_DEVICE``, else cuda > mps > cpu.

    ``prefer="auto"`` (the command line's default) means "choose for me".  Where that is the CPU
    and ``$DCA_DEVICE_CHECK`` is set, the device check is turned on and its device returned.
    """
    dev = _chosen_device(prefer)
    if dev.type == "cpu":
        from . import device_check

        if device_check.requested():
            return device_check.activate()
    return dev


def _chosen_device(prefer: str | None) -> torch.device:
    choice = prefer if prefer not in (None, "", "auto") else os.environ.get("DCA_DEVICE", "auto")
    if choice != "auto":
        dev = torch.device(choice)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"device {choice!r} was asked for, but CUDA is not available here")
        if dev.type == "mps" and not _mps_available():
            raise RuntimeError(f"device {choice!r} was asked for, but MPS is not available here")
        return dev
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend and backend.is_available())


def seed_everything(seed: int = 0) -> int:
    """Seed Python's, NumPy's and PyTorch's generators (all GPUs too); returns the seed."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    return seed


def run_seed() -> int:
    """The seed of this run: ``$DCA_SEED`` when set, else 0."""
    raw = os.environ.get("DCA_SEED", "").strip()
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"DCA_SEED={raw!r}: expected a whole number such as 0, 1 or 2") from None


def setup(seed: int | None = None, *, plots: bool = True, threads: int | None = 1) -> torch.device:
    """Prepare a notebook: the process's settings (:func:`configure_process`), then seed everything,
    set print and plot defaults, choose a device.  Call it before any tensor operation.

    ``seed`` defaults to :func:`run_seed` (``$DCA_SEED``, else 0).  The device is returned, not
    printed, so that a cell prints the same words on a laptop and on a GPU machine.

    ``threads`` sets PyTorch's CPU threads.  It defaults to 1: the course's small models gain
    little from more, and a float sum split over more threads is added in another order, so
    the same seed would give other trained numbers on a machine with another core count.
    ``threads=None`` keeps PyTorch's choice.
    """
    configure_process()
    seed_everything(run_seed() if seed is None else seed)
    if threads:
        torch.set_num_threads(threads)
    torch.set_printoptions(precision=4, sci_mode=False, linewidth=100)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    if plots:
        from . import viz

        viz.set_style()
    return device()
