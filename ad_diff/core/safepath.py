"""Containment: read only regular files that lie inside a run folder, never through a link that leaves it.

A run folder comes from a stranger's CI job: any entry may be a symbolic link to ``~/.config/gh/hosts.yml``
or a FIFO that blocks ``open()`` forever, and it may change while ad-diff reads it. Every reader of
run-folder files goes through here, and every open through :func:`open_file`, which opens relative to a
descriptor of the run folder with no link followed by the kernel (:mod:`ad_diff.core.openat`): what is
read lies in the run folder when it is opened, whatever was swapped since any earlier look.

* :func:`open_file` / :func:`read_bytes` / :func:`read_text`: the file object, or its bytes (refused unread
  above the caller's limit) or strict UTF-8 text (a bad byte named with its line); :func:`read_json`: the
  bytes through the one bounded JSON reader (:mod:`ad_diff.core.jsonsafe`: depth, digits, duplicate keys);
* :func:`refusal` says why an entry may not be read (``None`` when it may), for listings that report
  refused entries as findings instead of failing; :func:`check_file` raises it as an
  :class:`~ad_diff.errors.InputError` naming the path (a link leaving ``root``, a broken or looping link,
  a FIFO, socket, device or folder); links that stay inside the folder are fine;
* :func:`list_names` / :func:`walk_files` list a folder of the run through descriptors, without following
  links to folders, and say which entries were refused and why.

Errors never quote the file's content, so a refused file leaks nothing. Usage::

    text = read_text(run / "config" / "cli_args.txt", run, "the command-line overrides", limit=1 << 20)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from ad_diff.core import jsonsafe
from ad_diff.core.openat import Refused, list_beneath, open_beneath
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
    messages call ``root``). It opens the file the way :func:`open_file` does and closes it: the answer is
    that of the read, but only a read through :func:`open_file` is safe from a swap made after it."""
    try:
        os.close(open_beneath(path, root, place))
    except Refused as e:
        return e.why
    return None


def check_file(path: Path, root: Path, what: str) -> Path:
    """The resolved path of ``path`` when it is a regular file inside ``root``; else :class:`InputError`
    naming ``path``, why, and ``what`` was expected there."""
    why = refusal(path, root)
    if why is not None:
        raise InputError(path, f"{why}; expected {what}")
    return path.resolve()


def open_file(path: Path, root: Path, what: str, place: str = "the run folder",
              buffering: int = -1) -> BinaryIO:
    """``path`` opened for reading beneath ``root`` (:func:`ad_diff.core.openat.open_beneath`: no link
    followed by the kernel, none leaving ``root`` at all, no FIFO or device); the one way run-folder files
    are opened. Errors are :class:`InputError` naming ``path`` and ``what`` was expected."""
    try:
        fd = open_beneath(path, root, place)
    except Refused as e:
        raise InputError(path, f"{e.why}; expected {what}") from None
    return os.fdopen(fd, "rb", buffering=buffering)


@contextmanager
def pinned(path: Path, root: Path, what: str) -> Iterator[Path]:
    """A name for ``path``, opened by :func:`open_file`, that no swap can redirect (``/proc/self/fd/N``):
    for readers that only take a file name (``torch.load(mmap=True)``, torch's zip reader). Valid inside
    the ``with`` block."""
    with open_file(path, root, what) as fh:
        for base in ("/proc/self/fd", "/dev/fd"):
            name = Path(base, str(fh.fileno()))
            if name.exists():
                yield name
                return
        raise InputError(path, f"cannot be opened safely here (no /proc/self/fd or /dev/fd); expected {what}")


def read_bytes(path: Path, root: Path, what: str, limit: int = DEFAULT_LIMIT) -> bytes:
    """The content of ``path`` (opened by :func:`open_file`); files over ``limit`` bytes are refused
    unread. Errors name ``path``."""
    with open_file(path, root, what) as fh:
        info = os.fstat(fh.fileno())
        if info.st_size > limit:
            raise InputError(path, f"is {info.st_size:,} bytes, more than the {limit:,} bytes accepted for "
                                   f"{what}")
        # Ask for the size fstat gave, plus one byte to notice growth: read(n) allocates n bytes up front,
        # so asking for the limit (256 MiB for a dump) costs four times the read of a small file.
        want = info.st_size + 1
        try:
            data = fh.read(want)
            if len(data) == want:  # the file grew since fstat: read on, up to the limit
                data += fh.read(limit + 1 - len(data))
        except OSError as e:
            raise InputError(path, f"cannot be read ({e.strerror or e}); expected {what}") from None
    if len(data) > limit:
        raise InputError(path, f"is more than the {limit:,} bytes accepted for {what}")
    return data


def list_names(folder: Path, root: Path, what: str = "a folder of the run") -> list[str]:
    """The names in ``folder``, sorted, listed through a descriptor opened beneath ``root`` (a folder
    swapped for a link is refused, never listed); :class:`InputError` naming ``folder`` otherwise."""
    try:
        return list_beneath(folder, root)
    except Refused as e:
        raise InputError(folder, f"{e.why}; expected {what}") from None
    except OSError as e:
        raise InputError(folder, f"cannot be listed ({e.strerror or e}); expected {what}") from None


def given_root(path: Path) -> Path:
    """The folder a file named on the command line is contained in: the folder of what it resolves to
    (the user named that file, through any link; nothing else is read through it)."""
    return path.resolve().parent


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


def read_json(path: Path, root: Path, what: str, limit: int = DEFAULT_LIMIT, **bounds: Any) -> Any:
    """:func:`read_bytes` parsed by the one bounded JSON reader (:func:`ad_diff.core.jsonsafe.load_json`;
    ``bounds``: its ``depth``, ``digits``, ``floats``); every error an :class:`InputError` naming ``path``."""
    return jsonsafe.load_json(read_bytes(path, root, what, limit), path, what, **bounds)


def present(path: Path) -> bool:
    """Whether anything (a file, a folder, a link, even a broken one) is at ``path``; nothing is followed or
    read (to tell "absent" from "refused" after a read failed)."""
    return os.path.lexists(path)


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
    with why (see :func:`check_file`). The folder is listed through descriptors (``os.fwalk`` from one
    opened beneath ``root``), so a folder swapped for a link is not listed. Links to folders are not
    followed: each one is refused, whatever its name (see :func:`linked_folder`)."""
    found: list[Path] = []
    refused: list[tuple[Path, str]] = []
    try:
        top = open_beneath(folder, root, folder=True)
    except Refused as e:
        return [], [(folder, e.why)]
    try:
        for dirpath, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=top):
            here = folder if dirpath == "." else Path(folder, dirpath[2:])
            for name in sorted(dirnames):
                if stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode):
                    refused.append((here / name, linked_folder(here / name, root)))
            for name in filenames:
                p = here / name
                if p.suffix.lower() not in suffixes:
                    continue
                why = refusal(p, root)
                if why is None:
                    found.append(p)
                else:
                    refused.append((p, why))
    finally:
        os.close(top)
    return sorted(found), sorted(refused)


__all__ = ["DEFAULT_LIMIT", "check_file", "decode_utf8", "given_root", "is_inside", "linked_folder",
           "list_names", "open_file", "pinned", "present", "read_bytes", "read_json", "read_text", "refusal",
           "walk_files", "within"]
