"""What the graph kind measures for a snapshot baseline (``ad-diff snapshot``): each dump's metadata coverage.

A snapshot (:mod:`ad_diff.discover.snapshot`) records, per dump, how many nodes carry shape and dtype
metadata; a candidate checked against it is reported where its dumps carry less (ADG010, transform-level
counts only). Both the recording (:func:`coverage_to_record`) and the check (:func:`check_coverage`) parse
the dumps, so this module is imported only where a snapshot is written or checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ad_diff.discover.dumps import list_dumps, scan
from ad_diff.discover.snapshot import recorded_coverage
from ad_diff.errors import AdDiffError, InputError
from ad_diff.kinds.graph.cache import DumpLoader
from ad_diff.kinds.graph.measure import coverage


def metadata_coverage(graphs: Path | None) -> dict[str, Any]:
    """Per-transform metadata coverage from a run's graph dumps: ``{"stage/transform[#k]": {...}}``.

    Each value holds ``nodes`` and ``with_meta`` (placeholders and calls) and ``args`` / ``args_with_meta``
    (``%name`` arguments), counted by :func:`ad_diff.kinds.graph.measure.coverage`. Empty without dumps.
    Identical dump bodies (disabled transforms repeat the graph) are parsed once.
    """
    if graphs is None:
        return {}
    out: dict[str, Any] = {}
    cache: dict[bytes, dict[str, int]] = {}
    loader = DumpLoader()  # the comparison's reader: vetted files, size cap, each distinct body parsed once
    for ref in list_dumps(graphs)[0]:
        got = loader.load(ref)
        if got.dump is None:
            raise AdDiffError(got.error or f"{ref.path}: unreadable graph dump")
        if got.digest not in cache:
            c = coverage(got.dump)
            cache[got.digest] = {"nodes": c.nodes_total, "with_meta": c.nodes_known,
                                 "args": c.args_total, "args_with_meta": c.args_known}
        out[ref.key] = cache[got.digest]
    return out


def check_coverage(snapshot_path: Path, graphs: Path | None) -> list[tuple[str, int, int]]:
    """Transforms whose candidate dump has more nodes without metadata than the snapshot recorded.

    Returns ``(stage/transform[#k], nodes without metadata in the snapshot, now)`` per such transform;
    empty when the snapshot holds no coverage or nothing was lost.
    """
    golden = recorded_coverage(snapshot_path)
    if not golden or graphs is None:
        return []
    lost: list[tuple[str, int, int]] = []
    excess = 0  # nodes without metadata beyond the snapshot's, carried along the pipeline
    for key, now in metadata_coverage(graphs).items():
        then = golden.get(key)
        if not isinstance(then, dict):
            continue
        try:
            before = int(then.get("nodes", 0)) - int(then.get("with_meta", 0))
        except (TypeError, ValueError):
            raise InputError(
                snapshot_path, f"metadata_coverage.{key}: expected whole numbers for nodes and with_meta"
            ) from None
        after = now["nodes"] - now["with_meta"]
        # Report where the loss first appears (or grows), not at every later dump that inherits it.
        if after - before > excess:
            lost.append((key, before, after))
        excess = max(after - before, 0)
    return lost


def coverage_to_record(graphs: Path | None, run: Path) -> dict[str, Any]:
    """The metadata coverage a snapshot of run folder ``run`` records (:func:`metadata_coverage`), after
    refusing a dump that cannot be read (a link out of the run folder, a FIFO...): the coverage would leave
    it out without a word, and every candidate checked against the snapshot later would go unchecked
    there."""
    if graphs is not None:
        _check_dumps(graphs, run)
    return metadata_coverage(graphs)


def _check_dumps(graphs: Path, run: Path) -> None:
    """Refuse a dump that cannot be read (a link out of the run folder, a FIFO...): the coverage would leave
    it out without a word, and every candidate checked against the snapshot later would go unchecked
    there."""
    unreadable = scan(graphs, run).unreadable
    if unreadable:
        path, why = unreadable[0]
        raise InputError(path, f"{why}; a snapshot records the metadata coverage of every dump, so each "
                               "must be a readable file of the run")
