"""Are the two runs two runs? The identity checks of a baseline/candidate pair.

A comparison of a run with itself shows no difference, so it must never read as a pass:

* two arguments naming the same folder (the same path, a trailing slash, ``..``, a symbolic link to the
  other, a bind mount: the same ``st_dev``/``st_ino``) are a usage error (:func:`check_distinct`);
* candidate files that *are* baseline files (a symbolic link resolving into the baseline folder, or a hard
  link: the same inode) are listed by :func:`shared_files`, and the pipeline reports them as a gating
  finding (``ADI007``).

Only the higher-precision reference (``tensors/reference/``) may be shared: it is the standard both runs are
judged against, and the tensor kind decides whether it can be trusted.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ad_diff.core.model import RunId
from ad_diff.errors import UsageError

SHARED_BY_DESIGN: tuple[tuple[str, ...], ...] = (("tensors", "reference"),)
"""Candidate paths (relative parts) that may be the baseline's own files."""

MAX_ENTRIES = 200_000
"""Entries walked per run folder at most (a run folder holds thousands, not millions)."""


@dataclass(frozen=True, slots=True)
class SharedFile:
    """A candidate file (or folder) that is a baseline file."""

    candidate: str
    """Its path, relative to the candidate folder (or as given, for a file given on the command line)."""
    baseline: str
    """The baseline file it is, relative to the baseline folder."""
    how: str
    """``symbolic link`` (it leads into the baseline folder), ``path`` (a file given on the command line that
    lies in the baseline folder), or ``same file`` (the inode of a baseline file:
    a hard link, or links on both sides to one file elsewhere)."""

    def describe(self) -> str:
        """``graphs (a symbolic link to the baseline's graphs)``."""
        if self.how == "same file":
            return f"{self.candidate} (the same file as the baseline's {self.baseline})"
        return f"{self.candidate} (a {self.how} to the baseline's {self.baseline})"


def _stat(path: Path | str) -> os.stat_result | None:
    try:
        return Path(path).stat()
    except (OSError, ValueError):
        return None


def _key(path: Path | str) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of what ``path`` leads to: one file whatever the path (links, bind mounts)."""
    st = _stat(path)
    return None if st is None else (st.st_dev, st.st_ino)


def _is_file(st: os.stat_result) -> bool:
    return not stat.S_ISDIR(st.st_mode)


def check_distinct(baseline: Path, candidate: Path, run_ids: tuple[RunId, RunId]) -> None:
    """Raise :class:`UsageError` when ``baseline`` and ``candidate`` are one folder (or one file)."""
    kb, kc = _key(baseline), _key(candidate)
    if kb is None or kb != kc:
        return
    real = os.path.realpath(candidate)
    raise UsageError(
        f"the {run_ids[0]} ({baseline}) and the {run_ids[1]} ({candidate}) are the same folder ({real}); a "
        "run compared with itself shows no difference, so there is no verdict: give two different run folders"
    )


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _walk(root: Path, skip: str | None = None) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """``(relative path, entry)`` of everything under ``root``, not following folder links; ``skip``: a real
    path whose subtree is left out (the candidate folder inside the baseline's)."""
    stack = [(root, "")]
    seen = 0
    while stack:
        folder, rel = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # an unreadable folder is the kinds' business; it holds no link we could see
        for e in sorted(entries, key=lambda x: x.name):
            seen += 1
            if seen > MAX_ENTRIES:
                return
            path = f"{rel}{e.name}"
            yield path, e
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir and (skip is None or os.path.realpath(e.path) != skip):
                stack.append((Path(e.path), path + "/"))


_SHARED_PREFIXES = tuple("/".join(p) for p in SHARED_BY_DESIGN)


def _shared_by_design(rel: str) -> bool:
    return rel.startswith(_SHARED_PREFIXES) and any(
        rel == p or rel.startswith(p + "/") for p in _SHARED_PREFIXES)


def _entry_stat(e: os.DirEntry[str]) -> os.stat_result | None:
    try:
        return e.stat()  # follows links; a DirEntry's stat costs no path parsing (thousands of dumps)
    except OSError:
        return None


def shared_files(baseline: Path, candidate: Path, given_baseline: Iterable[Path] = (),
                 given_candidate: Iterable[Path] = ()) -> list[SharedFile]:
    """Candidate entries that are baseline files: symbolic links resolving into the baseline folder, files
    with the inode of a baseline file (hard links), and files given on the command line (logs, configs) that
    are a baseline's. Empty when either run is not a folder (a snapshot baseline)."""
    if not (baseline.is_dir() and candidate.is_dir()):
        return []
    b_real, c_real = os.path.realpath(baseline), os.path.realpath(candidate)
    found: list[SharedFile] = []
    suspects: list[tuple[str, tuple[int, int]]] = []  # (candidate path, inode): links, files given by name
    entries: list[tuple[str, str, bool, os.DirEntry[str] | None]]
    entries = [(rel, e.path, e.is_symlink(), e) for rel, e in _walk(candidate)]
    entries += [(str(p), str(p), True, None) for p in given_candidate]
    for rel, path, by_name, entry in entries:
        if _shared_by_design(rel):
            continue
        if by_name:  # a symbolic link (or a file given on the command line): where does it lead?
            target = os.path.realpath(path)
            if _within(target, b_real) and not _within(target, c_real):
                how = "symbolic link" if Path(path).is_symlink() else "path"
                found.append(SharedFile(rel, os.path.relpath(target, b_real), how))
                continue
        st = _stat(path) if entry is None else _entry_stat(entry)
        if st is not None and _is_file(st) and (by_name or st.st_nlink > 1):
            suspects.append((rel, (st.st_dev, st.st_ino)))
    if suspects:
        found += _same_inode(b_real, c_real, suspects, given_baseline)
    return sorted(found, key=lambda s: s.candidate)


def _same_inode(b_real: str, c_real: str, suspects: list[tuple[str, tuple[int, int]]],
                given: Iterable[Path]) -> list[SharedFile]:
    """The suspects whose inode is a baseline file's, followed through links on both sides (a hard link, or
    two links to one file elsewhere); the baseline is walked only when there are suspects."""
    inodes: dict[tuple[int, int], str] = {}
    skip = c_real if _within(c_real, b_real) else None
    stats = [(rel, _entry_stat(e)) for rel, e in _walk(Path(b_real), skip)]
    stats += [(str(p), _stat(p)) for p in given]
    for rel, st in stats:
        if st is not None and _is_file(st):
            inodes.setdefault((st.st_dev, st.st_ino), rel)
    return [SharedFile(rel, inodes[key], "same file") for rel, key in suspects if key in inodes]


__all__ = ["MAX_ENTRIES", "SHARED_BY_DESIGN", "SharedFile", "check_distinct", "shared_files"]
