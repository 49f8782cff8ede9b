"""One run's graph dumps as a listing: the ``graphs/`` folder (:func:`scan`), each dump's header
(:func:`read_header`) and the dumps in pipeline order (:func:`list_dumps`). No graph is parsed here.

The scan is measured from file *names* and ``stat`` only (no content). Cheap, so it runs whether or not the
graph analysis does; the graph kind's rules turn a :class:`FolderScan` into the input findings
``ADI002``-``ADI005``. A hole in the numbering means a dump was lost: AD's counter only advances when a file
is written. The listing lives in ``discover`` because two kinds read it: the graph kind, and the log kind
(which names a log's anonymous result lines from the order of the dumps).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ad_diff.core import limits, safepath
from ad_diff.discover import dump_counter, dump_order
from ad_diff.errors import InputError


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
            try:  # a name that is no dump: listed as ignored unless a folder (a link is not followed)
                if not e.is_dir(follow_symlinks=False):
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


HEADER_BYTES = 64 << 10
"""How much of a dump :func:`read_header` reads: the two header lines are short."""


def read_header(path: Path, root: Path | None = None) -> tuple[str, str]:
    """Return ``(transform, stage)`` from the first two lines of a dump, without reading the rest (``root``:
    the run folder it is opened beneath; ``None``: the folder it resolves to, for a file the caller named)."""
    try:
        folder = safepath.given_root(path) if root is None else root
        with safepath.open_file(path, folder, "a graph dump") as f:
            # The two lines fit in the first block of any real dump; more is read only if they do not
            # (reading and decoding 64 KiB of every dump took three times as long as the opening).
            head = f.read(4096)
            if head.count(b"\n") < 2 and len(head) == 4096:
                head += f.read(HEADER_BYTES - len(head))
    except OSError as e:
        raise InputError(path, f"cannot read graph dump ({e.strerror or e})") from e
    # errors="replace": a bad byte later in the file must not abort the whole run here; the full parse
    # reports it (with its line) when the dump is analysed.
    first, _, rest = head.decode("utf-8", errors="replace").partition("\n")
    return header_fields(path, first.rstrip("\r"), rest.partition("\n")[0].rstrip("\r"))


def header_fields(path: Path, first: str, second: str) -> tuple[str, str]:
    """``(transform, stage)`` from a dump's first two lines; :class:`InputError` if they are not a header."""
    if not first.startswith("# Transform: "):
        raise InputError(path, "expected '# Transform: <key>' on the first line of a graph dump", line=1)
    if not second.startswith("# Stage: "):
        raise InputError(path, "expected '# Stage: <stage>' on the second line of a graph dump", line=2)
    transform, stage = first[13:].strip(), second[9:].strip()
    if not transform or not stage:
        raise InputError(path, "empty transform or stage name in the dump header",
                         line=1 if not transform else 2)
    return transform, stage


def dump_key(stage: str, transform: str, occurrence: int = 0) -> str:
    """``stage/transform``, plus ``#occurrence`` when the transform repeats: the name of one dump pair."""
    return f"{stage}/{transform}" + (f"#{occurrence}" if occurrence else "")


def split_dump_key(key: str) -> tuple[str, str, int]:
    """``(stage, transform, occurrence)`` of a :func:`dump_key`."""
    stage, _, rest = key.partition("/")
    transform, _, occ = rest.partition("#")
    return stage, transform, int(occ) if occ.isdigit() else 0


@dataclass(frozen=True, slots=True)
class DumpRef:
    """One dump file, its header and its place in the run (no graph parsed yet)."""

    path: Path
    stage: str
    transform: str
    occurrence: int
    """0 for the first dump of this transform key in the run, 1 for the second, ..."""
    counter: int | None
    root: Path | None = None
    """The run folder ``path`` is opened beneath (``None``: the folder holding ``graphs/``)."""

    @property
    def key(self) -> str:
        """The :func:`dump_key` of this dump."""
        return dump_key(self.stage, self.transform, self.occurrence)


def list_dumps(graphs_dir: Path, root: Path | None = None, listing: FolderScan | None = None
               ) -> tuple[list[DumpRef], list[str]]:
    """Dump files of one run in pipeline order, plus notes about files that were ignored. Entries that
    :func:`scan` refuses (a link leaving the run folder ``root``, a FIFO, a broken link) are left out unread;
    the scan's findings report them (ADI005). ``listing``: that scan, when the caller made it already."""
    root = graphs_dir.parent if root is None else root
    if not graphs_dir.is_dir():
        raise InputError(graphs_dir, "expected a folder of graph dumps (AD_DUMP_GRAPHS_DIR content)")
    if listing is None:
        listing = scan(graphs_dir, root)
    notes = [f"{graphs_dir / name}: ignored (not named NNN_<stage>_<transform>.txt)"
             for name in listing.ignored]
    seen: dict[str, int] = {}
    refs: list[DumpRef] = []
    for f in listing.files:
        transform, stage = read_header(f.path, f.root)
        occ = seen.get(transform, 0)
        seen[transform] = occ + 1
        refs.append(DumpRef(f.path, stage, transform, occ, f.counter, f.root))
    return refs, sorted(notes)
