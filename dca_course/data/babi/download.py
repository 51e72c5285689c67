"""The released bAbI v1.2 files: task names, reading one task from a folder, and the opt-in
download (cached, checksummed, unpacked safely).  Nothing else in the package uses the network.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

from ...errors import InputError
from ...io import write_text
from .format import read_babi
from .story import BabiExample

# --------------------------------------------------------------------------------------------
# The released files
# --------------------------------------------------------------------------------------------

#: Task number -> file stem of the v1.2 release (files are ``<stem>_train.txt`` / ``_test.txt``).
TASK_NAMES = {
    1: "qa1_single-supporting-fact",
    2: "qa2_two-supporting-facts",
    3: "qa3_three-supporting-facts",
    4: "qa4_two-arg-relations",
    5: "qa5_three-arg-relations",
    6: "qa6_yes-no-questions",
    7: "qa7_counting",
    8: "qa8_lists-sets",
    9: "qa9_simple-negation",
    10: "qa10_indefinite-knowledge",
    11: "qa11_basic-coreference",
    12: "qa12_conjunction",
    13: "qa13_compound-coreference",
    14: "qa14_time-reasoning",
    15: "qa15_basic-deduction",
    16: "qa16_basic-induction",
    17: "qa17_positional-reasoning",
    18: "qa18_size-reasoning",
    19: "qa19_path-finding",
    20: "qa20_agents-motivations",
}

#: Test accuracy (%) per task on the 1k training sets with supporting facts, as Kumar et al. 2016
#: print them in their Table 1: their DMN, and MemNN (Weston et al. 2015, strongly supervised).
PAPER_ACCURACY_1K = {
    "DMN": {1: 100.0, 2: 98.2, 3: 95.2, 4: 100.0, 5: 99.3, 6: 100.0, 7: 96.9, 8: 96.5, 9: 100.0, 10: 97.5,
            11: 99.9, 12: 100.0, 13: 99.8, 14: 100.0, 15: 100.0, 16: 99.4, 17: 59.6, 18: 95.3, 19: 34.5, 20: 100.0},
    "MemNN": {1: 100.0, 2: 100.0, 3: 100.0, 4: 100.0, 5: 98.0, 6: 100.0, 7: 85.0, 8: 91.0, 9: 100.0, 10: 98.0,
              11: 100.0, 12: 100.0, 13: 100.0, 14: 99.0, 15: 100.0, 16: 100.0, 17: 65.0, 18: 95.0, 19: 36.0, 20: 100.0},
}


def load_task(folder: str | os.PathLike, task: int, split: str = "train", variant: str = "en") -> list[BabiExample]:
    """Read one released task file: ``split`` is ``"train"`` or ``"test"``.

    ``folder`` may hold the language folders of the release (``en/`` with 1,000 training
    questions per task, ``en-10k/`` with 10,000; ``variant`` picks one), or be such a folder
    itself, holding the ``qaN_*_{train,test}.txt`` files directly.  A missing file raises
    FileNotFoundError naming the folder and the file that was expected.
    """
    if task not in TASK_NAMES:
        raise ValueError(f"bAbI has tasks 1..20, not {task!r}")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', not {split!r}")
    folder = Path(folder)
    name = f"{TASK_NAMES[task]}_{split}.txt"
    for candidate in (folder / variant / name, folder / name):
        if candidate.is_file():
            return read_babi(candidate, task=task)
    raise FileNotFoundError(f"bAbI task {task} ({split}): no {name} in {folder / variant} "
                            f"nor directly in {folder}")


# --------------------------------------------------------------------------------------------
# Downloading (opt-in: nothing else in this module uses the network)
# --------------------------------------------------------------------------------------------

BABI_URL = "https://dl.fbaipublicfiles.com/babi/tasks_1-20_v1-2.tar.gz"
#: sha256 of ``tasks_1-20_v1-2.tar.gz`` (15,719,851 bytes) as recorded by the Hugging Face
#: ``babi_qa`` loader for the release's earlier address; it was not checked against BABI_URL
#: from here.  Pass ``sha256=None`` to trust on first use instead: the digest of the first
#: download is printed and recorded next to the archive, and later uses are checked against it.
BABI_SHA256: str | None = "0364ebde659f14d11bc21744516c5ec49d3d06cb692733f66680771244998898"


class ChecksumError(InputError):
    """A download whose sha256 is not the expected one (it was deleted, not kept)."""


def default_cache_dir() -> Path:
    """``$DCA_COURSE_CACHE`` if set, else ``~/.cache/dca_course``."""
    env = os.environ.get("DCA_COURSE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "dca_course"


def _archive_stem(name: str) -> str:
    for suffix in (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name + ".d"


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url: str, dest: Path, timeout: float) -> tuple[str, str]:
    """Stream ``url`` into a temporary file next to ``dest``; return (temp path, sha256)."""
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
                digest.update(block)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp, digest.hexdigest()


def _safe_members(tar: tarfile.TarFile, dest: Path) -> list[tarfile.TarInfo]:
    """The archive's files and folders, refusing any path that would land outside ``dest``."""
    root = dest.resolve()
    members = []
    for member in tar.getmembers():
        parts = Path(member.name).parts
        target = (root / member.name).resolve()
        if Path(member.name).is_absolute() or ".." in parts or not target.is_relative_to(root):
            raise ValueError(f"unsafe path in archive: {member.name!r} would land outside {dest}")
        if member.isfile() or member.isdir():  # links and device files are skipped
            members.append(member)
    return members


def _safe_extract(archive: Path, dest: Path) -> None:
    with tarfile.open(archive, "r:*") as tar:
        members = _safe_members(tar, dest)
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 / 3.10.12: a second guard
            tar.extractall(dest, members=members, filter="data")
        else:
            tar.extractall(dest, members=members)


def download_babi(cache_dir: str | os.PathLike | None = None, url: str = BABI_URL,
                  sha256: str | None = BABI_SHA256, *, timeout: float = 60.0, quiet: bool = False) -> Path:
    """Download and unpack the bAbI release once; returns the folder holding ``en/``, ``en-10k/``.

    Opt-in: the course runs on generated data and on local files, and nothing calls this for
    you.  The archive goes to ``<cache_dir>/babi/`` (``cache_dir`` defaults to
    :func:`default_cache_dir`) and is unpacked into ``<cache_dir>/babi/tasks_1-20_v1-2/``; when
    that folder exists the call returns at once, without the network.

    Safety, step by step:

    1. the download streams into a temporary file in the same folder while its sha256 is
       computed; on a mismatch the temporary file is deleted and :class:`ChecksumError` is
       raised, so no partial or wrong archive is ever left under the final name;
    2. only a verified download is renamed into place (``os.replace``, atomic on one disk);
    3. every archive member is checked to land inside the target (no absolute paths, no
       ``..``); links and device files are skipped;
    4. the archive is unpacked into a temporary folder that is renamed into place at the end,
       so an interrupted unpack leaves nothing that looks complete.

    ``sha256=None`` trusts on first use: the digest is printed (even with ``quiet=True``) and
    stored in ``<archive>.sha256``, and later calls check the archive against that record.
    """
    root = (Path(cache_dir) if cache_dir is not None else default_cache_dir()).expanduser() / "babi"
    name = Path(urllib.parse.urlparse(url).path).name or "babi.tar.gz"
    folder = root / _archive_stem(name)
    if folder.is_dir():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    archive = root / name
    record = root / (name + ".sha256")
    expected = sha256.lower() if sha256 else (record.read_text().strip() if record.is_file() else None)

    if archive.is_file():  # downloaded before (or put there by hand)
        actual = _sha256_of(archive)
        if expected and actual != expected:
            raise ChecksumError(f"{archive} has sha256 {actual}, expected {expected}; delete it "
                                "to download again")
    else:
        if not quiet:
            print(f"Downloading {url} to {archive}")
        tmp, actual = _download(url, archive, timeout)
        if expected and actual != expected:
            Path(tmp).unlink(missing_ok=True)
            raise ChecksumError(f"download of {url} has sha256 {actual}, expected {expected}; "
                                "nothing was kept (pass sha256=None to accept a new release)")
        os.replace(tmp, archive)
    if not expected:  # trust on first use: say what was accepted, and remember it
        write_text(record, actual + "\n")
        print(f"sha256 of {archive.name}: {actual} (recorded in {record})")

    staging = Path(tempfile.mkdtemp(dir=root, prefix=".extract-"))
    try:
        _safe_extract(archive, staging)
        entries = list(staging.iterdir())
        source = entries[0] if len(entries) == 1 and entries[0].is_dir() else staging
        if folder.is_dir():  # someone else finished first
            return folder
        os.replace(source, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not quiet:
        print(f"bAbI tasks unpacked in {folder}")
    return folder
