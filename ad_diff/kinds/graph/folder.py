"""What one run's ``graphs/`` listing holds, measured from file *names* and ``stat`` only (no content).

Cheap, so it runs whether or not the graph analysis does; ``rules`` turn a :class:`FolderScan` into the
input findings ``ADI002``-``ADI005``. A hole in the numbering means a dump was lost: AD's counter only
advances when a file is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ad_diff.core import safepath
from ad_diff.discover import dump_counter, dump_entries


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


def gaps(nums: list[int]) -> list[tuple[int, int]]:
    """Inclusive ranges missing between consecutive sorted ``nums``: ``[1, 5, 7]`` -> ``[(2, 4), (6, 6)]``."""
    return [(a + 1, b - 1) for a, b in zip(nums, nums[1:], strict=False) if b > a + 1]


def ranges(spans: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> str:
    """``[(2, 4), (7, 7)]`` -> ``'002-004, 007'`` (at most 5 ranges, then a count)."""
    out = [f"{a:03d}" if a == b else f"{a:03d}-{b:03d}" for a, b in spans[:5]]
    return ", ".join(out) + (f" and {len(spans) - 5} more range(s)" if len(spans) > 5 else "")


def dump_count(graphs: Path) -> int:
    """Number of entries named like a dump file."""
    try:
        return len(dump_entries(graphs))
    except OSError:
        return 0


def problem(path: Path, root: Path) -> str | None:
    """Why ``path`` cannot be read as a dump file of the run folder ``root``, or ``None``. A link (of the
    file, or of ``graphs/`` itself) that leaves the run folder is refused unread."""
    is_link = path.is_symlink()
    try:
        path.stat()  # follows links; raises on a loop or a dangling link
        if not safepath.is_inside(path, root):
            how = "is a symbolic link to" if is_link else "resolves to"
            return (f"{how} a file outside the run folder {root}; refusing to read it (copy the dumps into "
                    "the run folder instead of linking them)")
        if not path.is_file():  # before opening: a FIFO named like a dump would block open()
            return "is not a regular file"
        path.open("rb").close()  # an actual open, not os.access: as root, access() always says yes
    except PermissionError:
        return "cannot be read (permission denied)"
    except OSError as err:
        if is_link:
            return "is a symbolic link that loops or points nowhere"
        return f"cannot be read ({err.strerror or err})"
    return None


def scan(graphs: Path, root: Path | None = None) -> FolderScan:
    """Measure one run's ``graphs/`` listing (``root``: the run folder, by default the folder holding
    ``graphs/``). Never follows a link twice: ``os.stat`` fails on a loop (ELOOP) and that entry is recorded
    as unreadable, not recursed into."""
    root = graphs.parent if root is None else root
    try:
        entries = sorted(os.scandir(graphs), key=lambda e: e.name)
    except OSError as err:
        return FolderScan(graphs, error=f"{graphs}: cannot list ({err.strerror or err})")
    by_counter: dict[int, list[str]] = {}
    unreadable: list[tuple[Path, str]] = []
    for e in entries:
        counter = dump_counter(e.name)
        if counter is None:
            continue
        path = Path(graphs, e.name)
        why = problem(path, root)
        if why is not None:
            unreadable.append((path, why))
            continue
        by_counter.setdefault(counter, []).append(e.name)
    nums = sorted(by_counter)
    return FolderScan(
        graphs,
        counters=tuple(nums),
        missing=tuple(gaps(nums)),
        duplicates=tuple((n, tuple(by_counter[n])) for n in nums if len(by_counter[n]) > 1),
        unreadable=tuple(unreadable),
    )
