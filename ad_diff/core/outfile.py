"""Writing the files a user asked for: never through a link, never over an input, never into a run folder.

Every file ad-diff writes -- reports (``--markdown``, ``--html``, ``--json``, ``--junit``, ``--step-summary``,
``snapshot -o``, ``note -o``, ``candidates -o``, ``history --table`` / ``--plots`` / ``--cache``), plots, and
``ad-diff record``'s ``RUN/ad.log``, ``RUN/run.json`` and ``RUN/graphs/`` -- is written here, and only here
(tests/unit/test_layout.py fails on a write anywhere else). Invariants, checked before anything is written
and again on what was opened:

* a path that is a symbolic link is refused (a run folder may hold ``report.md -> ~/.bashrc``; a
  report written through it would overwrite the target);
* a path that is an input of the command is refused: a path given as an input, or a file the command read
  (every file the run-folder opener opened, :func:`ad_diff.core.openat.opened`, the config file in the
  current folder included), compared by ``st_dev``/``st_ino`` so a hard link is caught whatever its name;
* a path inside an input folder (either run folder, the history folder, a source tree) is refused: reports
  never land in what is being compared.

**All or nothing.** The outputs a command will write are announced once (:func:`plan`) as soon as its
options are known, before anything is compared: each is checked then (against the inputs, the config file
read, and, for an existing file with other hard links, every file in the input folders), and a bad one is
an error before the comparison runs. Right before the first file is written, every planned output is
checked again against everything the run read; one bad path means nothing at all is written.

A whole file is written to a temporary file in the same folder and renamed over the path, so a link
swapped in after the check is replaced, never written through, and a hard link elsewhere keeps its
content; an appended file (``--step-summary``) is opened ``O_NOFOLLOW | O_APPEND`` and checked once open; a
streamed file (:func:`create`) replaces the name (never truncates what it names) and is created
``O_EXCL | O_NOFOLLOW``. A refusal is an :class:`~ad_diff.errors.AdDiffError` (exit 2) naming the path.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from ad_diff.core.openat import opened
from ad_diff.errors import AdDiffError

_inputs: tuple[Path, ...] = ()
_planned: list[Path] = []
_checked = False
HARD_LINK_SCAN = 200_000
"""Entries of the input folders looked at, at most, for another name of an existing output file that has
several hard links (a run folder holds thousands)."""
_LINK = "is a symbolic link; refusing to write through it (remove the link or write elsewhere)"


def protect(paths: Iterable[Path]) -> None:
    """Register the current command's input files and folders (replacing any registered before), and
    forget the outputs planned and the files read for an earlier command (tests run many in one process)."""
    global _inputs, _checked  # noqa: PLW0603 - one command per process: the CLI sets them once
    _inputs = tuple(Path(p).absolute() for p in paths)
    _planned.clear()
    _checked = False
    opened().clear()


def protect_more(paths: Iterable[Path]) -> None:
    """Add input files to those registered (the config files the command looks for in the current folder:
    ``--markdown pyproject.toml`` must not overwrite the project file, whichever config file was used)."""
    global _inputs  # noqa: PLW0603 - see protect
    _inputs = (*_inputs, *(Path(p).absolute() for p in paths))


def protected() -> tuple[Path, ...]:
    """The inputs registered by :func:`protect`."""
    return _inputs


def planned() -> tuple[Path, ...]:
    """The outputs announced by :func:`plan` (a refused one included)."""
    return tuple(_planned)


def plan(paths: Iterable[Path | None]) -> None:
    """Announce outputs the command will write (``None`` is skipped) and check each now: a bad one is an
    :class:`AdDiffError` before anything is compared or written."""
    for p in paths:
        if p is None or str(p) in ("", "-"):
            continue
        path = Path(p)
        if path not in _planned:
            _planned.append(path)
        _raise(path, refusal(path, deep=True))


def _stat(path: Path, follow: bool = True) -> os.stat_result | None:
    try:
        return path.stat() if follow else path.lstat()
    except (OSError, ValueError):
        return None


def _read_by_run(info: os.stat_result) -> Path | None:
    """The path a file with ``info``'s inode was read as, if this process read it and that path still names
    it (an inode number freed by a deleted file and given to a new one is no clash)."""
    read = opened().get((info.st_dev, info.st_ino))
    if read is None:
        return None
    its = _stat(read)
    return read if its is not None and os.path.samestat(info, its) else None


def _other_name(info: os.stat_result) -> Path | None:
    """Another name of ``info``'s file inside an input folder (a bounded walk, no link followed)."""
    seen = 0
    for inp in _inputs:
        if not inp.is_dir() or inp.is_symlink():
            continue
        for dirpath, dirnames, filenames in os.walk(inp):
            dirnames.sort()
            for name in filenames:
                seen += 1
                if seen > HARD_LINK_SCAN:
                    return None
                its = _stat(Path(dirpath, name), follow=False)
                if its is not None and os.path.samestat(info, its):
                    return Path(dirpath, name)
    return None


def _clash(info: os.stat_result | None, target: Path, deep: bool = False,
           rewrite: bool = False) -> str | None:
    """Why a file ``target`` (``info``: what is there now, if anything) clashes with an input or a file the
    run read; ``deep``: also look for another hard link of it in the input folders."""
    folders: list[tuple[Path, Path]] = []
    for inp in _inputs:
        its = _stat(inp)
        if its is None:
            continue
        if info is not None and os.path.samestat(info, its):
            return f"is an input of this command ({inp}); refusing to overwrite it (write it elsewhere)"
        if stat.S_ISDIR(its.st_mode):
            folders.append((inp, Path(os.path.realpath(inp))))
    if info is not None and stat.S_ISREG(info.st_mode):
        read = None if rewrite else _read_by_run(info)
        if read is not None:
            return f"is a file this command read ({read}); refusing to overwrite it (write it elsewhere)"
        if deep and info.st_nlink > 1 and (other := _other_name(info)) is not None:
            return (f"is a hard link of {other}, an input of this command; refusing to overwrite it "
                    "(write it elsewhere)")
    for inp, real in folders:
        if target == real or real in target.parents:
            return (f"is inside the input folder {inp}; reports are never written into a run folder or "
                    "another input (write it elsewhere)")
    return None


def refusal(path: Path, deep: bool = False, rewrite: bool = False) -> str | None:
    """Why ``path`` may not be written (see the module docstring), or ``None``; ``rewrite``: a file this
    command read in order to rewrite it (an index, a cache) may be the file read."""
    info = _stat(path, follow=False)
    if info is not None and stat.S_ISLNK(info.st_mode):
        return _LINK
    target = Path(os.path.realpath(path.parent), path.name)
    return _clash(info, target, deep, rewrite)


def _raise(path: Path, why: str | None) -> None:
    if why is not None:
        raise AdDiffError(f"{path}: {why}")


def _before_first_write(path: Path, rewrite: bool = False) -> None:
    """Every planned output checked against all the run read, once, before the first byte is written (then
    ``path`` itself)."""
    global _checked  # noqa: PLW0603 - see protect
    if not _checked:
        for p in _planned:
            _raise(p, refusal(p, rewrite=rewrite and p == path))
        _checked = True
    _raise(path, refusal(path, rewrite=rewrite))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_file(path: Path, data: bytes, append: bool = False, rewrite: bool = False) -> None:
    """Write ``data`` to ``path`` (append with ``append``), creating its folder; :class:`AdDiffError`
    naming ``path`` when it may not (see :func:`refusal`; ``rewrite``: it may be a file the command read
    to rewrite it) or cannot be written."""
    _before_first_write(path, rewrite)
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


def write_via_name(path: Path, produce: Callable[[str], object]) -> None:
    """Like :func:`write_via`, for a writer that only takes a file name (``safetensors``' ``save_file``,
    which writes a temporary file of its own and renames it): it gets a name in a private folder created
    here (``mkdtemp``: mode 0700, nobody else can put a link there), and the file it leaves is renamed over
    ``path`` (no copy of a large file is held in memory)."""
    import shutil  # lazy: see _replace
    import tempfile

    _before_first_write(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        private = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    except OSError as e:
        raise AdDiffError(f"{path}: cannot write output ({e.strerror or e})") from e
    try:
        produce(str(private / path.name))
        made = private / path.name
        if not stat.S_ISREG(made.lstat().st_mode):
            raise AdDiffError(f"{path}: the writer left no regular file")
        made.chmod(0o666 & ~_umask())
        made.replace(path)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def create(path: Path) -> BinaryIO:
    """A new file at ``path`` opened for writing as it is produced (``record``'s live log): a regular file
    already there loses its name first (a hard link elsewhere keeps its content; nothing is truncated), a
    link is refused, and the file is created ``O_EXCL | O_NOFOLLOW``, so nothing swapped in since is
    written through."""
    _before_first_write(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        info = _stat(path, follow=False)
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise AdDiffError(f"{path}: is a folder; expected a file to write")
        if info is not None:
            path.unlink()  # the name, not the file: unlink follows nothing
        fd = os.open(path, flags, 0o666)
    except FileExistsError:
        raise AdDiffError(f"{path}: appeared while it was being replaced; refusing to write to it") from None
    except OSError as e:
        raise AdDiffError(f"{path}: cannot write output ({e.strerror or e})") from e
    return os.fdopen(fd, "wb")


def folder(path: Path, within: Path) -> Path:
    """Create the folder ``path`` (and the ones above it up to ``within``, which must exist): a component
    below ``within`` that is a link or not a folder is refused, so files written into ``path`` stay in
    ``within``."""
    rel = Path(os.path.relpath(path, within))
    if rel.parts[:1] == ("..",):
        raise AdDiffError(f"{path}: lies outside {within}; refusing to create it")
    here = within
    for part in rel.parts:
        here = here / part
        info = _stat(here, follow=False)
        if info is None:
            try:
                here.mkdir()
            except FileExistsError:
                info = _stat(here, follow=False)
            except OSError as e:
                raise AdDiffError(f"{here}: cannot create the folder ({e.strerror or e})") from e
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise AdDiffError(f"{here}: is a symbolic link; refusing to write through it (remove the link)")
        if info is not None and not stat.S_ISDIR(info.st_mode):
            raise AdDiffError(f"{here}: is not a folder; expected a folder to write into")
    return path


def remove_tree(path: Path) -> None:
    """Remove the folder ``path`` and what it holds (``record --force``'s old dumps); a link there is
    refused, never followed (``shutil.rmtree`` walks by descriptor and removes links inside as links)."""
    import shutil  # lazy: only record --force removes anything

    info = _stat(path, follow=False)
    if info is None:
        return
    if stat.S_ISLNK(info.st_mode):
        raise AdDiffError(f"{path}: {_LINK}")
    if not stat.S_ISDIR(info.st_mode):
        raise AdDiffError(f"{path}: is not a folder; expected the graph dumps folder")
    try:
        shutil.rmtree(path)
    except OSError as e:
        raise AdDiffError(f"{path}: cannot be removed ({e.strerror or e})") from e


def _append(path: Path, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    flags |= getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP or path.is_symlink():
            raise AdDiffError(f"{path}: {_LINK}") from None
        raise
    with os.fdopen(fd, "wb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise AdDiffError(f"{path}: is not a regular file; refusing to write to it")
        _raise(path, _clash(info, Path(os.path.realpath(path.parent), path.name)))
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


__all__ = ["HARD_LINK_SCAN", "create", "folder", "plan", "protect", "protect_more", "protected", "refusal",
           "remove_tree", "write_file", "write_via", "write_via_name"]
