"""Read every leaf of a history once into interned columns, then into one long pandas table.

A snapshot file is read by :mod:`snapfast` when it is in the canonical form, else by the snapshot module's
YAML reader; a run folder by the log parser (the same reader ``compare`` uses, with transforms of the L2
logger named from the dump order as there). A leaf that cannot be read becomes an ``error`` leaf with
the reader's message; the other leaves are still read. Names are interned and rows packed as they are
read (``columns``), so the table is one ``numpy.frombuffer`` of all leaves' rows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core import jsonsafe, lazy, safepath
from ad_diff.core.model import RunId, TransformRecord
from ad_diff.discover import discover
from ad_diff.errors import AdDiffError
from ad_diff.history import snapfast
from ad_diff.history.columns import (
    NO_COUNT,
    ROW,
    STATES,
    Columns,
    LeafData,
    from_strings,
    row_dtype,
)
from ad_diff.history.logkind import LogEnd, attribute, load_snapshot, read_log
from ad_diff.history.model import ERROR, INCOMPLETE, OK, SNAPSHOT, Leaf, LeafMeta
from ad_diff.progress import ProgressFn, no_progress

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
else:
    np = lazy.module("numpy")
    pd = lazy.module("pandas")

_RUN_JSON_LIMIT = 1 << 20
_HISTORY = RunId("history")


def _status(end: LogEnd, detail: str) -> tuple[str, str]:
    if end is LogEnd.COMPLETE:
        return OK, ""
    return INCOMPLETE, end.value + (f" ({detail})" if detail else "")


def _from_records(cols: Columns, records: tuple[TransformRecord, ...], meta: LeafMeta) -> LeafData:
    return from_strings(
        cols,
        meta,
        [r.stage for r in records],
        [r.transform for r in records],
        [r.occurrence for r in records],
        [r.state.value for r in records],
        [r.matches for r in records],
    )


SNAPSHOT_LIMIT = 16 << 20
"""Largest snapshot read (bytes), as for a snapshot baseline of ``compare``."""


def _read_file(path: Path, root: Path) -> tuple[bytes, int]:
    """The bytes and modification time of one snapshot, opened beneath the history folder ``root``
    (:func:`ad_diff.core.safepath.open_file`: the listing skipped links and special files; one swapped in
    since is refused here), and read no further than :data:`SNAPSHOT_LIMIT`."""
    fh = safepath.open_file(path, root, "a snapshot written by `ad-diff snapshot`", "the history folder",
                            buffering=0)
    with fh:
        fd = fh.fileno()
        st = os.fstat(fd)
        if st.st_size > SNAPSHOT_LIMIT:
            raise AdDiffError(f"{path}: is {st.st_size:,} bytes, more than the {SNAPSHOT_LIMIT:,} bytes "
                              "accepted for a snapshot")
        chunks = [os.read(fd, st.st_size + 1)]  # one read: a regular file returns all of it
        if len(chunks[0]) > st.st_size:  # it grew since fstat: read on, up to the limit
            while chunks[-1] and sum(map(len, chunks)) <= SNAPSHOT_LIMIT:
                chunks.append(os.read(fd, 1 << 20))
    raw = b"".join(chunks)
    if len(raw) > SNAPSHOT_LIMIT:
        raise AdDiffError(f"{path}: is more than the {SNAPSHOT_LIMIT:,} bytes accepted for a snapshot")
    return raw, st.st_mtime_ns


def _snapshot(cols: Columns, path: Path, root: Path) -> LeafData:
    try:
        raw, mtime = _read_file(path, root)
    except OSError as e:
        raise AdDiffError(f"{path}: cannot read the snapshot ({e.strerror or e})") from e
    try:
        fast = snapfast.read(raw.decode("utf-8"), cols)
    except UnicodeDecodeError:
        fast = None
    if fast is None:
        _, log = load_snapshot(path, raw)  # the bytes read, not the path again
        status, detail = _status(log.end, log.end_detail)
        return _from_records(
            cols, log.transforms, LeafMeta(status, detail, mtime_ns=mtime, transforms=len(log.transforms))
        )
    status, detail = _status(LogEnd(fast.end), fast.end_detail)
    meta = LeafMeta(status, detail, mtime_ns=mtime, transforms=len(fast.rows) // ROW.size)
    return LeafData(meta, fast.rows)


@dataclass(frozen=True)
class RunJson:
    """What history reads from a ``run.json`` written by ``ad-diff record``."""

    started: str | None = None
    commit: str | None = None
    dirty: bool | None = None


def run_json(folder: Path) -> RunJson:
    """``started`` and the git ``commit`` / ``dirty`` from ``folder/run.json`` (all ``None`` when unreadable).

    A link is not followed (nothing is read from outside a run folder), a file over 1 MiB is not read, and
    the JSON is parsed within :func:`ad_diff.core.jsonsafe.load_json`'s caps (nesting, digits, duplicate
    keys).
    """
    p = folder / "run.json"
    try:
        if p.is_symlink():  # a link, even one inside the folder, is not read (as it always was)
            return RunJson()
        raw = safepath.read_bytes(p, folder, "run.json", _RUN_JSON_LIMIT)
        data = jsonsafe.load_json(raw, p, "the run.json ad-diff record writes")
    except (AdDiffError, UnicodeDecodeError, ValueError, RecursionError):
        return RunJson()
    if not isinstance(data, dict):
        return RunJson()
    git = data.get("git")
    git = git if isinstance(git, dict) else {}

    def typed(value: Any, kind: type) -> Any:
        return value if isinstance(value, kind) else None

    return RunJson(
        typed(data.get("started"), str), typed(git.get("commit"), str), typed(git.get("dirty"), bool)
    )


def _folder(cols: Columns, path: Path, rank: int) -> LeafData:
    info = run_json(path)
    art = discover(path, _HISTORY)
    assert art.log is not None  # discover raises otherwise
    log = attribute(read_log(art.logs, rank=rank), art.graphs)
    status, detail = _status(log.end, log.end_detail)
    try:
        mtime = art.log.stat().st_mtime_ns
    except OSError:
        mtime = 0
    meta = LeafMeta(
        status,
        detail,
        started=info.started,
        commit=info.commit,
        dirty=info.dirty,
        mtime_ns=mtime,
        transforms=len(log.transforms),
    )
    return _from_records(cols, log.transforms, meta)


def read_leaf(cols: Columns, leaf: Leaf, rank: int) -> LeafData:
    """Read one leaf; an unreadable one becomes an ``error`` leaf carrying the reader's message.

    An unreadable run folder keeps what its ``run.json`` says (when it started, on which commit), so the
    error row sits at its place in time.
    """
    try:
        if leaf.kind == SNAPSHOT:
            return _snapshot(cols, leaf.path, leaf.path.parent if leaf.root is None else leaf.root)
        return _folder(cols, leaf.path, rank)
    except AdDiffError as e:
        message = str(e) if str(e).startswith(str(leaf.path)) else f"{leaf.path}: {e}"
    except Exception as e:  # noqa: BLE001 - one leaf's bug must not lose the other runs (as in batch)
        message = f"{leaf.path}: internal error: {type(e).__name__}: {e}"
    info = run_json(leaf.path) if leaf.kind != SNAPSHOT else RunJson()
    return LeafData(LeafMeta(ERROR, message, started=info.started, commit=info.commit, dirty=info.dirty))


def read_all(
    leaves: list[Leaf], rank: int, cache: Path | None = None, progress: ProgressFn = no_progress
) -> tuple[Columns, list[LeafData], dict[str, int], list[str]]:
    """Read every leaf once (from ``cache`` when its stamp is unchanged); write ``cache`` when given.

    Returns the name pools, one :class:`LeafData` per leaf, counts (``leaves``, ``read``, ``cached``) and
    notes about the cache.
    """
    # lazy: the leaf cache loads only with --cache
    from ad_diff.history import cache as leaf_cache

    cols = Columns()
    notes: list[str] = []
    cached: dict[str, LeafData] = {}
    stamps: list[object] = [None] * len(leaves)
    if cache is not None:
        stamps = [leaf_cache.stamp(lf) for lf in leaves]
        cached, note = leaf_cache.load(
            cache, rank, cols, {leaf_cache.key(lf): s for lf, s in zip(leaves, stamps, strict=False)}
        )
        if note:
            notes.append(note)
    out: list[LeafData] = []
    read = 0
    for i, lf in enumerate(leaves):
        hit = cached.get(leaf_cache.key(lf)) if cache is not None else None
        if hit is None:
            hit = read_leaf(cols, lf, rank)
            read += 1
        out.append(hit)
        if i % 256 == 0 or i == len(leaves) - 1:
            progress("reading runs", i + 1, len(leaves))
    if cache is not None:
        leaf_cache.save(cache, rank, cols, leaves, out, stamps)
    return cols, out, {"leaves": len(leaves), "read": read, "cached": len(leaves) - read}, notes


def build_table(
    leaves: list[Leaf], datas: list[LeafData], runs: list[str], models: list[str], cols: Columns
) -> pd.DataFrame:
    """The long table: one row per (run, model, transform occurrence) of every readable leaf.

    Columns: ``run`` (ordered categorical), ``run_index``, ``model``, ``stage``, ``transform``,
    ``occurrence``, ``state``, ``count`` (nullable integer), ``status`` (``ok`` / ``incomplete``) and
    ``position`` (the transform's place in its run's pipeline).
    """
    run_code = {n: i for i, n in enumerate(runs)}
    model_code = {n: i for i, n in enumerate(models)}
    used = [(lf, d) for lf, d in zip(leaves, datas, strict=True) if d.meta.status != ERROR and d.rows]
    n = np.fromiter((len(d) for _, d in used), dtype=np.int64, count=len(used))
    rows = np.frombuffer(b"".join(d.rows for _, d in used), dtype=row_dtype())
    starts = np.cumsum(n) - n
    position = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(starts, n)
    run_idx = np.repeat(np.fromiter((run_code[lf.run] for lf, _ in used), np.int32, len(used)), n)
    model_idx = np.repeat(np.fromiter((model_code[lf.model] for lf, _ in used), np.int32, len(used)), n)
    incomplete = np.repeat(np.fromiter((d.meta.status != OK for _, d in used), np.int8, len(used)), n)
    counts = rows["count"].astype(np.int64)

    def cat(codes: np.ndarray, names: list[str], ordered: bool = False) -> pd.Categorical:
        return pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=object), ordered=ordered)

    return pd.DataFrame(
        {
            "run": cat(run_idx, runs, ordered=True),
            "run_index": run_idx,
            "model": cat(model_idx, models),
            "stage": cat(rows["stage"].astype(np.int32), cols.stages.names),
            "transform": cat(rows["transform"].astype(np.int32), cols.transforms.names),
            "occurrence": rows["occurrence"].astype(np.int64),
            "state": cat(rows["state"].astype(np.int8), list(STATES)),
            "count": pd.arrays.IntegerArray(counts, counts == NO_COUNT),
            "status": cat(incomplete, [OK, INCOMPLETE]),
            "position": position.astype(np.int32),
        }
    )
