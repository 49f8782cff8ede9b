"""Containment: read only regular files that lie inside a run folder, never through a link that leaves it.

A run folder comes from a stranger's CI job: any entry may be a symbolic link to ``~/.config/gh/hosts.yml``
or a FIFO that blocks ``open()`` forever. Every reader of run-folder files goes through here:

* :func:`refusal` says why an entry may not be read (``None`` when it may), for listings that report
  refused entries as findings instead of failing;
* :func:`check_file` resolves the path (links inside the folder are fine) and refuses it, with an
  :class:`~ad_diff.errors.InputError` naming the path, when it resolves outside ``root``, is a broken or
  looping link, or is not a regular file (FIFO, socket, device, folder);
* :func:`read_bytes` / :func:`read_text` do that check, open the resolved path without following a link
  swapped in since (``O_NOFOLLOW``) and without blocking (``O_NONBLOCK``), check the opened file again, and
  refuse files larger than the caller's limit before reading them; :func:`read_text` decodes strict UTF-8
  and names the line of the first bad byte;
* :func:`walk_files` lists the files under a folder of the run without following links to folders, and
  says which entries it refused and why (every link to a folder among them).

Errors never quote the file's content, so a refused file leaks nothing. Usage::

    text = read_text(run / "config" / "cli_args.txt", run, "the command-line overrides", limit=1 << 20)
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ad_diff.errors import InputError

DEFAULT_LIMIT = 64 << 20
"""Largest file :func:`read_bytes` reads unless the caller says otherwise (64 MiB)."""


def is_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (resolved, links followed) lies inside ``root`` (resolved)."""
    try:
        return within(path.resolve(), root.resolve())
    except (OSError, RuntimeError):
        return False


def within(real: Path, real_root: Path) -> bool:
    """Whether ``real`` lies inside ``real_root``, both resolved already (no system call: a listing resolves
    its folder once and only its links one by one)."""
    return real == real_root or real_root in real.parents


def refusal(path: Path, root: Path, place: str = "the run folder") -> str | None:
    """Why ``path`` may not be read as a file of ``root``, or ``None`` when it may (``place``: what the
    messages call ``root``)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return "does not exist"
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        return "is a broken symbolic link (it points nowhere)"
    except (OSError, RuntimeError) as e:
        if isinstance(e, RuntimeError) or getattr(e, "errno", None) == errno.ELOOP:
            return "is a symbolic link that loops"
        return f"cannot be read ({getattr(e, 'strerror', None) or e})"
    if not is_inside(real, root):
        link = "is a symbolic link to" if stat.S_ISLNK(info.st_mode) else "resolves to"
        return (f"{link} a file outside {place} {root}; refusing to read it (copy the file into {place} "
                "instead of linking it)")
    try:
        mode = real.stat().st_mode
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a FIFO, socket or device); refusing to open it"
    return None


def check_file(path: Path, root: Path, what: str) -> Path:
    """The resolved path of ``path`` when it is a regular file inside ``root``; else :class:`InputError`
    naming ``path``, why, and ``what`` was expected there."""
    why = refusal(path, root)
    if why is not None:
        raise InputError(path, f"{why}; expected {what}")
    return path.resolve()


def read_bytes(path: Path, root: Path, what: str, limit: int = DEFAULT_LIMIT) -> bytes:
    """The content of ``path`` after :func:`check_file`; files over ``limit`` bytes are refused unread."""
    return read_checked(path, check_file(path, root, what), what, limit)


def read_checked(path: Path, real: Path, what: str, limit: int = DEFAULT_LIMIT) -> bytes:
    """The content of ``real``, a file a listing already vetted as ``path`` (:func:`check_file`, or a folder
    scan that resolved the folder once): opened without following a link swapped in since and without
    blocking, checked again once open, refused unread beyond ``limit`` bytes. Errors name ``path``."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except PermissionError:
        raise InputError(path, f"cannot be read (permission denied); expected {what}") from None
    except OSError as e:
        raise InputError(path, f"cannot be read ({e.strerror or e}); expected {what}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):  # swapped for something else since the check
            raise InputError(path, f"is not a regular file; expected {what}")
        if info.st_size > limit:
            raise InputError(path, f"is {info.st_size:,} bytes, more than the {limit:,} bytes accepted for "
                                   f"{what}")
        # Ask for the size fstat gave, plus one byte to notice growth: read(n) allocates n bytes up front,
        # so asking for the limit (256 MiB for a dump) costs four times the read of a small file.
        want = info.st_size + 1
        data = fh.read(want)
        if len(data) == want:  # the file grew since fstat: read on, up to the limit
            data += fh.read(limit + 1 - len(data))
    if len(data) > limit:
        raise InputError(path, f"is more than the {limit:,} bytes accepted for {what}")
    return data


def decode_utf8(data: bytes, path: Path, what: str) -> str:
    """``data`` as strict UTF-8 (a leading BOM dropped); a bad byte is an :class:`InputError` with its
    line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(path, f"expected UTF-8 text ({what}), found byte 0x{data[e.start]:02x}",
                         line=line) from None


def read_text(path: Path, root: Path, what: str, limit: int = DEFAULT_LIMIT) -> str:
    """:func:`read_bytes`, decoded as strict UTF-8 (see :func:`decode_utf8`)."""
    return decode_utf8(read_bytes(path, root, what, limit), path, what)


def linked_folder(path: Path, root: Path, place: str = "the run folder") -> str:
    """Why ``path``, a link to a folder below ``root``, is not walked into (whatever its name: the files
    under it would otherwise be left out without a word)."""
    if not is_inside(path, root):
        return (f"is a symbolic link to a folder outside {place} {root}; refusing to read it (copy the "
                f"folder into {place} instead of linking it)")
    return "is a symbolic link to a folder; folders are not followed through links (copy it instead)"


def walk_files(folder: Path, root: Path,
               suffixes: tuple[str, ...]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Files under ``folder`` whose suffix (lower case) is in ``suffixes``, sorted, and the refused entries
    with why (see :func:`check_file`). Links to folders are not followed: each one is refused, whatever its
    name (see :func:`linked_folder`)."""
    found: list[Path] = []
    refused: list[tuple[Path, str]] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in sorted(dirnames):
            p = Path(dirpath, name)
            if p.is_symlink():
                refused.append((p, linked_folder(p, root)))
        for name in filenames:
            p = Path(dirpath, name)
            if p.suffix.lower() not in suffixes:
                continue
            why = refusal(p, root)
            if why is None:
                found.append(p)
            else:
                refused.append((p, why))
    return sorted(found), sorted(refused)


__all__ = ["DEFAULT_LIMIT", "check_file", "decode_utf8", "is_inside", "linked_folder", "read_bytes",
           "read_checked", "read_text", "refusal", "walk_files", "within"]
