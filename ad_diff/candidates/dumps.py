"""Which dump ``ad-diff candidates`` scans, and reading it, through the comparison's containment.

The run's ``graphs/`` is listed once by :func:`ad_diff.discover.dumps.scan`, which vets every entry named
like a dump: a link leaving the run folder, a FIFO, a broken or looping link is refused unread. The command
scans one dump (the last by counter, or the last written after ``--transform``), so:

* when the refused entry could be that dump, the command stops with exit 2 naming it (scanning another dump
  in its place would report on the wrong graph);
* a refused entry that cannot be it is named in the report's notes, and never read.

The chosen dump is read with :func:`ad_diff.core.safepath.read_bytes` (no link swapped in since, no blocking
open, size capped). Error messages name the file, never the content of a refused one.
"""

from __future__ import annotations

from pathlib import Path

from ad_diff.core import safepath
from ad_diff.discover import dump_order
from ad_diff.discover.dumps import DumpFile, scan
from ad_diff.errors import InputError
from ad_diff.kinds.graph.cache import MAX_DUMP_BYTES
from ad_diff.kinds.graph.model import GraphDump
from ad_diff.kinds.graph.pair import DumpRef, list_dumps
from ad_diff.kinds.graph.parse import parse_text

_WHAT = "a graph dump"
MAX_NOTES = 5
"""Refused dumps named one by one in the notes; the rest are counted (100,000 FIFOs make one line)."""


def _order(path: Path) -> tuple[int, str]:
    return dump_order(path.name)


def select_dump(run: Path, transform: str | None = None) -> tuple[DumpFile, list[str]]:
    """The dump to scan and notes naming the refused dumps left out.

    The dump is the last one of ``RUN/graphs/`` (or of ``RUN`` itself when it is the dumps folder), or the
    last one written after ``transform``. Raises :class:`InputError` when there is none, or when an entry that
    could be it is refused (see the module docstring).
    """
    if not run.is_dir():
        raise InputError(run, "expected a run folder holding graphs/ (AD_DUMP_GRAPHS_DIR output)")
    graphs = run / "graphs" if (run / "graphs").is_dir() else run
    listing = scan(graphs, run)  # the folder the user named is the one nothing may be read outside of
    if listing.error:
        why = listing.error.removeprefix(f"{graphs}: ")
        raise InputError(graphs, f"{why}; expected the AD_DUMP_GRAPHS_DIR output")
    refused = sorted(listing.unreadable, key=lambda u: _order(u[0]))
    if not listing.files and not refused:
        raise InputError(graphs, "no graph dumps (NNN_<stage>_<transform>.txt) here; "
                                 "expected the AD_DUMP_GRAPHS_DIR output in RUN/graphs/")
    refs: list[DumpRef] = []
    if transform is None:
        chosen = listing.files[-1] if listing.files else None
        after = "it is the final dump"
    else:
        refs = list_dumps(graphs, run, listing)[0]
        hits = [r for r in refs if r.transform == transform]
        chosen = next(f for f in listing.files if f.path == hits[-1].path) if hits else None
        after = f"it may be the last dump written after transform {transform!r} (its header is not read)"
        # a refused dump's header is never read: any refused dump after the last readable hit may be a later
        # dump of this transform, so none of them may be passed over
    last = _order(chosen.path) if chosen is not None else None
    blocking = [(p, why) for p, why in refused if last is None or _order(p) > last]
    if blocking:
        path, why = blocking[-1]
        raise InputError(path, f"{why}; expected {_WHAT}: {after}, the one `ad-diff candidates` scans")
    if chosen is None:
        known = sorted({r.transform for r in refs})
        raise InputError(graphs, f"no dump written after transform {transform!r}; dumps exist for: "
                                 + ", ".join(known))
    return chosen, _notes(refused)


def _notes(refused: list[tuple[Path, str]]) -> list[str]:
    notes = [f"not read (not the dump scanned): {p}: {why}" for p, why in refused[:MAX_NOTES]]
    if len(refused) > MAX_NOTES:
        notes.append(f"not read: {len(refused) - MAX_NOTES} more refused dump file(s)")
    return notes


def read_dump(path: Path, root: Path) -> GraphDump:
    """Parse dump ``path`` of run folder ``root`` (opened beneath it); :class:`InputError` naming ``path``
    when it may not or cannot be read."""
    data = safepath.read_bytes(path, root, _WHAT, MAX_DUMP_BYTES)
    return parse_text(safepath.decode_utf8(data, path, _WHAT), path)


__all__ = ["MAX_NOTES", "read_dump", "select_dump"]
