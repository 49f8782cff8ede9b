"""What one run's ``graphs/`` listing holds, measured from file *names* and ``stat`` only (no content).

Cheap, so it runs whether or not the graph analysis does; ``rules`` turn a :class:`FolderScan` into the
input findings ``ADI002``-``ADI005``. A hole in the numbering means a dump was lost: AD's counter only
advances when a file is written.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ad_diff.core import limits, safepath
from ad_diff.discover import dump_counter, dump_order


@dataclass(frozen=True, slots=True)
class DumpFile:
    """A dump file of the listing that may be read: where it is listed, and what to open."""

    path: Path
    root: Path
    """The run folder: ``path`` is opened beneath it (:func:`ad_diff.core.safepath.open_file`)."""
    counter: int


@dataclass(frozen=True, slots=True)
class FolderScan:
    """One run's ``graphs/`` listing: its dump numbers, what is missing, doubled or unreadable."""

    path: Path
    counters: tuple[int, ...] = ()
    """Distinct counters of the readable dump files, ascending."""
    missing: tuple[tuple[int, int], ...] = ()
    """Inclusive ranges of counters absent between the first and the last one (lost dumps). Ranges, not
    numbers: a file named ``999999999_...`` must not make the work grow with the number in its name."""
    duplicates: tuple[tuple[int, tuple[str, ...]], ...] = ()
    """Counters held by several files, with the file names."""
    unreadable: tuple[tuple[Path, str], ...] = ()
    """Entries named like a dump that cannot be read as a file, with the problem."""
    error: str | None = None
    """Why the folder could not be listed at all (then everything else is empty)."""
    files: tuple[DumpFile, ...] = ()
    """The readable dump files in pipeline order (counter, then name): what the analysis reads."""
    ignored: tuple[str, ...] = ()
    """Names of the files in the folder that are not named like a dump (``NNN_<stage>_<transform>.txt``)."""

    @property
    def named(self) -> int:
        """Entries named like a dump file, readable or not."""
        return len(self.files) + len(self.unreadable)


def gaps(nums: list[int]) -> list[tuple[int, int]]:
    """Inclusive ranges missing between consecutive sorted ``nums``: ``[1, 5, 7]`` -> ``[(2, 4), (6, 6)]``."""
    return [(a + 1, b - 1) for a, b in zip(nums, nums[1:], strict=False) if b > a + 1]


def ranges(spans: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> str:
    """``[(2, 4), (7, 7)]`` -> ``'002-004, 007'`` (at most 5 ranges, then a count)."""
    out = [f"{a:03d}" if a == b else f"{a:03d}-{b:03d}" for a, b in spans[:5]]
    return ", ".join(out) + (f" and {len(spans) - 5} more range(s)" if len(spans) > 5 else "")


def _real(path: Path) -> Path | None:
    try:
        return Path(os.path.realpath(path, strict=True))
    except (OSError, RuntimeError):
        return None


def _within(real: Path | None, root: Path | None) -> bool:
    return real is not None and root is not None and safepath.within(real, root)


def _vet(entry: os.DirEntry[str], path: Path, folder_inside: bool, root_real: Path | None,
         root: Path) -> tuple[str | None, Path]:
    """``(None, file to open)`` when the dump entry may be read, else ``(why not, path)``. A link (of the
    file, or of ``graphs/`` itself) that leaves the run folder is refused unread.

    Only a link needs resolving: an entry that is no link lies where its folder lies (``folder_inside``,
    resolved once per listing), so a listing costs a ``stat`` and an ``open`` per file, not a walk of every
    path component per file."""
    is_link = entry.is_symlink()
    try:
        info = entry.stat()  # follows links; raises on a loop or a dangling link
        real = _real(path) if is_link else path
        if not (_within(real, root_real) if is_link else folder_inside):
            how = "is a symbolic link to" if is_link else "resolves to"
            return (f"{how} a file outside the run folder {root}; refusing to read it (copy the dumps into "
                    "the run folder instead of linking them)"), path
        if not stat.S_ISREG(info.st_mode):  # before opening: a FIFO named like a dump would block open()
            return "is not a regular file", path
        # an actual open, not os.access: as root, access() always says yes; the one opener's, as the read
        refused = safepath.refusal(path, root)
        if refused is not None:
            return refused, path
    except PermissionError:
        return "cannot be read (permission denied)", path
    except OSError as err:
        if is_link:
            return "is a symbolic link that loops or points nowhere", path
        return f"cannot be read ({err.strerror or err})", path
    return None, path


def scan(graphs: Path, root: Path | None = None) -> FolderScan:
    """Measure one run's ``graphs/`` listing (``root``: the run folder, by default the folder holding
    ``graphs/``). Never follows a link twice: ``os.stat`` fails on a loop (ELOOP) and that entry is recorded
    as unreadable, not recursed into."""
    root = graphs.parent if root is None else root
    try:
        entries = sorted(os.scandir(graphs), key=lambda e: e.name)
    except OSError as err:
        return FolderScan(graphs, error=f"{graphs}: cannot list ({err.strerror or err})")
    root_real = _real(root)
    folder_inside = _within(_real(graphs), root_real)
    by_counter: dict[int, list[str]] = {}
    unreadable: list[tuple[Path, str]] = []
    files: list[DumpFile] = []
    ignored: list[str] = []
    for e in entries:
        counter = dump_counter(e.name)
        if counter is None:
            try:
                if e.is_file():
                    ignored.append(e.name)
            except OSError:
                pass
            continue
        if len(files) + len(unreadable) >= limits.GRAPH_DUMPS:  # stop before vetting the rest
            over = limits.count_cap(graphs, "files named like graph dumps", limits.GRAPH_DUMPS, "GRAPH_DUMPS")
            return FolderScan(graphs, error=str(over))
        path = Path(graphs, e.name)
        why, _ = _vet(e, path, folder_inside, root_real, root)
        if why is not None:
            unreadable.append((path, why))
            continue
        by_counter.setdefault(counter, []).append(e.name)
        files.append(DumpFile(path, root, counter))
    nums = sorted(by_counter)
    return FolderScan(
        graphs,
        counters=tuple(nums),
        missing=tuple(gaps(nums)),
        duplicates=tuple((n, tuple(by_counter[n])) for n in nums if len(by_counter[n]) > 1),
        unreadable=tuple(unreadable),
        files=tuple(sorted(files, key=lambda f: dump_order(f.path.name))),
        ignored=tuple(ignored),
    )
