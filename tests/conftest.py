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


@pytest.fixture(scope="session")
def course_wheel(tmp_path_factory):
    """The course's wheel, built once per test session from a copy of what a clean clone holds (so that
    setuptools' build/ and egg-info land in the copy, not in the working tree)."""
    import importlib.util
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    out, src = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("src")
    shutil.copytree(root / "dca_course", src / "dca_course", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(root / "results", src / "results")                       # setup.py copies files from both
    shutil.copytree(root / "data" / "checkpoints", src / "data" / "checkpoints")
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy(root / name, src / name)
    # Without build isolation where setuptools is here (offline machines); else pip fetches it as
    # pyproject.toml's build-system asks (Python 3.12's venvs come without setuptools).
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(out),
                            str(src)], capture_output=True, text=True, cwd=out)
    wheels = sorted(out.glob("dca_course-*.whl"))
    assert build.returncode == 0 and len(wheels) == 1, f"pip wheel failed: {build.stderr[-2000:]}"
    return wheels[0]


@pytest.fixture()
def babi_folder(tmp_path):
    """A released-format bAbI folder (``en/``) with task 1: 60 generated training stories, 20 test."""
    from dca_course.data.babi import TASK_NAMES
    from dca_course.data.babi.format import write_babi
    from dca_course.data.babi.generate import generate_task

    folder = tmp_path / "babi" / "en"
    folder.mkdir(parents=True)
    write_babi(generate_task(1, 60, seed=0), folder / f"{TASK_NAMES[1]}_train.txt")
    write_babi(generate_task(1, 20, seed=1), folder / f"{TASK_NAMES[1]}_test.txt")
    return folder.parent


class DataSpy:
    """What a training read and scored: ``loaded``, every Dataset ``registry.load_data`` returned;
    ``scored``, the examples of every ``DMNRecipe.score`` call."""

    def __init__(self):
        self.loaded, self.scored = [], []

    def never_scored_the_test(self) -> bool:
        """Some test examples were loaded, something was scored, and no scored example is one of the test's."""
        test_ids = {id(ex) for ex in self.loaded[0].test}
        return bool(test_ids and self.scored) and not any(id(ex) in test_ids for batch in self.scored for ex in batch)


@pytest.fixture()
def babi_spy(monkeypatch) -> DataSpy:
    """A :class:`DataSpy` on ``dca_course.registry.load_data`` and ``DMNRecipe.score`` (both still work)."""
    import dca_course.registry as registry
    from dca_course.recipes import DMNRecipe

    spy, load, score = DataSpy(), registry.load_data, DMNRecipe.score
    monkeypatch.setattr(registry, "load_data", lambda *a: spy.loaded.append(load(*a)) or spy.loaded[-1])
    monkeypatch.setattr(DMNRecipe, "score", lambda self, model, examples, *a, **k:
                        spy.scored.append(list(examples)) or score(self, model, examples, *a, **k))
    return spy
