"""One CPU thread for the unit tests: their tensors are tiny, and on a shared 2-core machine
a second thread only fights other processes for the cores (and changes float sums)."""
import pytest
import torch

torch.set_num_threads(1)


def load_benchmark_module(name: str):
    """``benchmarks/NAME.py`` as a module (its folder on sys.path while it loads, so that its
    ``from common import ...`` works as under ``python benchmarks/NAME.py``)."""
    import importlib.util
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parent.parent / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", bench / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(bench))


@pytest.fixture()
def load_benchmark():
    return load_benchmark_module
