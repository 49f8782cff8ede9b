"""Writing the files a user asked for: never through a link, never over an input, never into a run folder.

Every report file (``--markdown``, ``--html``, ``--json``, ``--junit``, ``--step-summary``, ``snapshot -o``,
``note -o``, ``history --table`` / ``--plots`` / ``--cache``, tensor plots) is written by
:func:`write_file`, and only there. Invariants, checked right before the write and again on what was
opened:

* a path that is a symbolic link is refused (a run folder may hold ``report.md -> ~/.bashrc``; a
  report written through it would overwrite the target);
* a path that is one of the command's inputs (same device and inode as any input file or folder given,
  hard links included) is refused: ``--markdown candidate/ad.log`` must not destroy the log;
* a path inside an input folder (either run folder, the history folder, a source tree) is refused:
  reports never land in what is being compared.

A whole file is written to a temporary file in the same folder and renamed over the path, so a link
swapped in after the check is replaced, never written through; an appended file (``--step-summary``) is
opened ``O_NOFOLLOW | O_APPEND`` and checked once open. The command's inputs are registered once per
command by the CLI (:func:`protect`). A refusal is an :class:`~ad_diff.errors.AdDiffError` (exit 2)
naming the path.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from ad_diff.errors import AdDiffError

_inputs: tuple[Path, ...] = ()


def protect(paths: Iterable[Path]) -> None:
    """Register the current command's input files and folders (replacing any registered before)."""
    global _inputs  # noqa: PLW0603 - one command per process: the CLI sets them once, the writers read them
    _inputs = tuple(Path(p).absolute() for p in paths)


def protected() -> tuple[Path, ...]:
    """The inputs registered by :func:`protect`."""
    return _inputs


def _stat(path: Path, follow: bool = True) -> os.stat_result | None:
    try:
        return path.stat() if follow else path.lstat()
    except (OSError, ValueError):
        return None


def _clash(info: os.stat_result | None, target: Path) -> str | None:
    """Why a file ``target`` (``info``: what is there now, if anything) clashes with an input."""
    for inp in _inputs:
        its = _stat(inp)
        if its is None:
            continue
        if info is not None and os.path.samestat(info, its):
            return f"is an input of this command ({inp}); refusing to overwrite it (write it elsewhere)"
        if stat.S_ISDIR(its.st_mode):
            real = Path(os.path.realpath(inp))
            if target == real or real in target.parents:
                return (f"is inside the input folder {inp}; reports are never written into a run folder or "
                        "another input (write it elsewhere)")
    return None


def refusal(path: Path) -> str | None:
    """Why ``path`` may not be written (see the module docstring), or ``None``."""
    info = _stat(path, follow=False)
    if info is not None and stat.S_ISLNK(info.st_mode):
        return "is a symbolic link; refusing to write through it (remove the link or write elsewhere)"
    target = Path(os.path.realpath(path.parent), path.name)
    return _clash(info, target)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_file(path: Path, data: bytes, append: bool = False) -> None:
    """Write ``data`` to ``path`` (append with ``append``), creating its folder; :class:`AdDiffError`
    naming ``path`` when it may not (see :func:`refusal`) or cannot be written."""
    why = refusal(path)
    if why is not None:
        raise AdDiffError(f"{path}: {why}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if append:
            _append(path, data)
        else:
            _replace(path, data)
    except OSError as e:
        raise AdDiffError(f"{path}: cannot write output ({e.strerror or e})") from e


def write_via(path: Path, produce: Callable[[BinaryIO], object]) -> None:
    """:func:`write_file` of what ``produce`` writes into a binary buffer (a figure's ``savefig``, a
    table's ``to_csv``): third-party writers never get the path itself."""
    buf = io.BytesIO()
    produce(buf)
    write_file(path, buf.getvalue())


def _append(path: Path, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP or path.is_symlink():
            raise AdDiffError(f"{path}: is a symbolic link; refusing to write through it (remove the link or "
                              "write elsewhere)") from None
        raise
    with os.fdopen(fd, "wb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise AdDiffError(f"{path}: is not a regular file; refusing to write to it")
        why = _clash(info, Path(os.path.realpath(path.parent), path.name))
        if why is not None:
            raise AdDiffError(f"{path}: {why}")
        fh.write(data)


def _replace(path: Path, data: bytes) -> None:
    import tempfile  # lazy: with random and bisect, 1-2 ms of every start-up, and most runs write no file

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            os.fchmod(fh.fileno(), 0o666 & ~_umask())  # as an ordinary create would (mkstemp makes 0600)
        Path(tmp).replace(path)  # replaces a link swapped in since the check: never writes through it
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["protect", "protected", "refusal", "write_file", "write_via"]
