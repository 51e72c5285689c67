"""One CPU thread for the unit tests: their tensors are tiny, and on a shared 2-core machine
a second thread only fights other processes for the cores (and changes float sums)."""
import pytest
import torch

import dca_course

dca_course.configure_process()   # before any test's first tensor operation: AVX2 kernels, as the notebooks
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def one_thread():
    """One intra-op thread for a module of tiny-tensor tests, whatever an earlier test set: on a busy
    machine a second thread waiting at every op's barrier can make a test a hundred times slower.
    A module asks for it with ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


SCRIPT_FOLDERS = ("experiments", "benchmarks", "tools")


def load_script(name: str):
    """The script ``NAME.py`` of ``experiments/``, ``benchmarks/`` or ``tools/`` as a module, loaded
    as ``python FOLDER/NAME.py`` would run it (its first lines put the repository root on
    ``sys.path``, so that its ``from tools.provenance import ...`` works)."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    path = next((root / f / f"{name}.py" for f in SCRIPT_FOLDERS if (root / f / f"{name}.py").is_file()), None)
    assert path is not None, f"no {name}.py in {', '.join(SCRIPT_FOLDERS)}"
    spec = importlib.util.spec_from_file_location(f"script_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


load_benchmark_module = load_script     # the name the tests used when every script lived in benchmarks/


@pytest.fixture()
def load_benchmark():
    return load_benchmark_module
