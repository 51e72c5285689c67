"""Atomic file writes: a reader of the file sees the old version or the new one, never half of one.

Every file the course writes (checkpoints, metrics, generated data, benchmark results) goes
through :func:`atomic_write`: the content is written to a temporary file in the same folder,
flushed to disk, and moved onto the path with ``os.replace``, which is atomic within one file
system.  If writing fails, the temporary file is removed and the old file is left as it was.

    write_json(out / "metrics.json", {"rouge1": 41.2})
    write_lines(out / "test.source", [" ".join(ex.source) for ex in examples])
    atomic_write(out / "last.pt", lambda tmp: torch.save(state, tmp))
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from .errors import InputError

__all__ = ["atomic_write", "write_text", "write_json", "write_lines", "TextFileError", "text_lines"]


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> Path:
    """Call ``write(tmp_path)``, then move the finished file onto ``path`` in one step.

    The temporary file lives in the same folder, so ``os.replace`` is atomic: a reader sees
    the old file or the new one, never half of one.  Missing folders are made.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as fh:   # on disk before the rename, so a crash cannot leave an empty file
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write a text file (UTF-8, ``\\n`` line ends on every system) atomically."""
    def write(tmp):
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    return atomic_write(path, write)


def write_json(path: str | os.PathLike, obj) -> Path:
    """Write ``obj`` as indented JSON with sorted keys (stable diffs), atomically."""
    return write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_lines(path: str | os.PathLike, lines: Iterable[str]) -> Path:
    """Write one line per item (each ends with ``\\n``), atomically."""
    def write(tmp):
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(line + "\n" for line in lines)
    return atomic_write(path, write)


# -- reading text files a user gives -------------------------------------------------------------
class TextFileError(InputError):
    """A text file that is not UTF-8 text, or holds a NUL byte; the message starts ``FILE:LINE:``."""


def text_lines(path: str | os.PathLike, start: int = 0) -> Iterable[tuple[int, str]]:
    """``(line number, text)`` for every line of a UTF-8 text file from line ``start + 1`` on,
    read in binary and decoded line by line, so that a bad line is named, not just the file.

    Lines end at ``\n`` only (a ``\r`` before it is dropped: CRLF files read as LF files); a last
    line without a newline is read like the others.  Bytes that are not UTF-8, and a NUL byte
    (a binary or half-written file), raise :class:`TextFileError` ``FILE:LINE: ...``."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno <= start:
                continue
            nul = raw.find(b"\0")
            if nul >= 0:
                raise TextFileError(f"{path}:{lineno}: a NUL byte at column {nul + 1}: not a text "
                                    "file (binary, or written only in part)")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TextFileError(f"{path}:{lineno}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column "
                                    f"{exc.start + 1}); save the file as UTF-8") from None
            yield lineno, text.rstrip("\n").rstrip("\r")
