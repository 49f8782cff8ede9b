"""``--cache FILE``: the rows of every leaf already read, so a re-run reads only new or changed runs.

The cache is JSON (never pickle: it is read back as data, nothing in it can run code). Each entry is keyed
by the leaf's absolute path and carries a *stamp*: size and modification time of a snapshot file, or of
every top-level entry of a run folder (its log, ``run.json``, ``graphs/``). An entry whose stamp differs,
a cache of another ad-diff version, cache schema, ``--rank`` or byte order is not used. Leaves that could
not be read are not cached (the error may be gone next time). The file is replaced atomically, and only
with the leaves of this history, so it never grows beyond them.

A leaf's rows are stored as its packed records (little-endian, names as codes into ``names``), base64
in a pool of distinct ``blobs``: most models report the same counts night after night, so a year of
18,000 runs holds a few hundred distinct blobs. Every blob is checked (codes in range, counts and
occurrences not negative) before it is used.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff import __version__
from ad_diff.core import jsonsafe, lazy, safepath
from ad_diff.core.limits import HISTORY_CACHE_BYTES as CACHE_BYTES
from ad_diff.core.outfile import write_file
from ad_diff.errors import AdDiffError, InputError
from ad_diff.history.columns import NO_COUNT, ROW, STATES, Columns, LeafData, row_dtype
from ad_diff.history.model import ERROR, SNAPSHOT, Leaf, LeafMeta

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")

CACHE_SCHEMA = 3


def key(leaf: Leaf) -> str:
    """The cache key of a leaf: its absolute path."""
    return str(leaf.path.absolute())


def stamp(leaf: Leaf) -> list[Any] | None:
    """What must be unchanged for a cached leaf to be used; ``None`` when it cannot be taken."""
    try:
        if leaf.kind == SNAPSHOT:
            st = leaf.path.stat()
            return [st.st_size, st.st_mtime_ns]
        with os.scandir(leaf.path) as it:
            entries = [(e.name, e.stat(follow_symlinks=False)) for e in it]
    except OSError:
        return None
    return sorted([name, st.st_size, st.st_mtime_ns] for name, st in entries)


def _header() -> dict[str, Any]:
    return {"ad_diff_history_cache": CACHE_SCHEMA, "tool": f"ad-diff {__version__}", "row": ROW.format}


class _Blobs:
    """Decoded, checked and re-coded row blobs of one cache file (each decoded once)."""

    def __init__(self, blobs: list[Any], remap: list[list[int]]) -> None:
        self.blobs = blobs
        self.remap = [np.asarray(r, dtype=np.int32) for r in remap]
        """Per name column (stage, transform): cached code -> code in this history's name pools."""
        self.identity = [r == list(range(len(r))) for r in remap]
        self.done: dict[int, bytes | None] = {}

    def rows(self, i: Any) -> bytes | None:
        """The checked rows of blob ``i``; ``None`` when it is damaged or out of range."""
        if type(i) is not int or not 0 <= i < len(self.blobs):
            return None
        if i not in self.done:
            self.done[i] = self._decode(self.blobs[i])
        return self.done[i]

    def _decode(self, blob: Any) -> bytes | None:
        if not isinstance(blob, str):
            return None
        try:
            raw = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(raw) % ROW.size:
            return None
        rows = np.frombuffer(raw, dtype=row_dtype()).copy()
        if not len(rows):
            return None
        for field, names in (("stage", self.remap[0]), ("transform", self.remap[1])):
            if rows[field].min() < 0 or rows[field].max() >= len(names):
                return None
        if (
            rows["state"].min() < 0
            or rows["state"].max() >= len(STATES)
            or rows["occurrence"].min() < 0
            or rows["count"].min() < NO_COUNT
        ):
            return None
        for col, field in enumerate(("stage", "transform")):
            if not self.identity[col]:
                rows[field] = self.remap[col][rows[field]]
        return rows.tobytes()


def _meta(raw: Any, n: int) -> LeafMeta | None:
    if not isinstance(raw, dict):
        return None
    started, commit, dirty = raw.get("started"), raw.get("commit"), raw.get("dirty")
    status, detail, mtime = raw.get("status"), raw.get("detail"), raw.get("mtime_ns")
    if not (
        isinstance(status, str)
        and status != ERROR
        and isinstance(detail, str)
        and type(mtime) is int
        and (started is None or isinstance(started, str))
        and (commit is None or isinstance(commit, str))
        and (dirty is None or isinstance(dirty, bool))
    ):
        return None
    return LeafMeta(status, detail, started, commit, dirty, mtime, n)


def load(path: Path, rank: int, cols: Columns, wanted: dict[str, Any]) -> tuple[dict[str, LeafData], str]:
    """Cached leaves of ``path`` whose stamps equal ``wanted[key]``, and a note when the cache is not used.

    The cache's names are added to ``cols`` (in their cached order, so for a fresh ``cols`` codes need no
    translation).
    """
    if not path.exists():
        return {}, f"cache {path} created"
    try:
        if path.stat().st_size > CACHE_BYTES:
            return {}, f"cache {path} is over {CACHE_BYTES >> 20} MiB (the cap CACHE_BYTES); it is rebuilt"
        raw = safepath.read_bytes(path, safepath.given_root(path), "an ad-diff history cache", CACHE_BYTES)
        data = jsonsafe.load_json(raw, path, "an ad-diff history cache")
    except OSError as e:
        return {}, f"cache {path} could not be read ({e}); it is rebuilt"
    except InputError as e:
        return {}, f"cache {path} could not be read ({e.detail}); it is rebuilt"
    if not isinstance(data, dict) or data.get("ad_diff_history_cache") != CACHE_SCHEMA:
        return {}, f"cache {path} is not an ad-diff history cache (schema {CACHE_SCHEMA}); it is rebuilt"
    head = _header()
    if any(data.get(k) != v for k, v in head.items()) or data.get("rank") != rank:
        return (
            {},
            f"cache {path} was written by {data.get('tool')} for rank {data.get('rank')}; it is rebuilt",
        )
    names, entries, blobs = data.get("names"), data.get("entries"), data.get("blobs")
    if not (isinstance(names, dict) and isinstance(entries, dict) and isinstance(blobs, list)):
        return {}, f"cache {path} is damaged; it is rebuilt"
    remap: list[list[int]] = []
    for field, pool in (("stages", cols.stages), ("transforms", cols.transforms)):
        cached = names.get(field)
        if not isinstance(cached, list) or not all(isinstance(n, str) for n in cached):
            return {}, f"cache {path} is damaged; it is rebuilt"
        remap.append([pool.code(n) for n in cached])
    pool_of = _Blobs(blobs, remap)
    out: dict[str, LeafData] = {}
    for k, raw in entries.items():
        if k not in wanted or wanted[k] is None or not isinstance(raw, dict) or raw.get("stamp") != wanted[k]:
            continue
        rows = pool_of.rows(raw.get("rows"))
        meta = _meta(raw.get("meta"), len(rows) // ROW.size) if rows is not None else None
        if meta is not None and rows is not None:
            out[k] = LeafData(meta, rows)
    return out, ""


def save(
    path: Path, rank: int, cols: Columns, leaves: list[Leaf], datas: list[LeafData], stamps: list[Any]
) -> None:
    """Write the cache of these leaves to ``path`` (atomically: a temporary file beside it, then a rename)."""
    blob_index: dict[bytes, int] = {}
    blobs: list[str] = []

    def ref(raw: bytes) -> int:
        i = blob_index.get(raw)
        if i is None:
            i = blob_index[raw] = len(blobs)
            blobs.append(base64.b64encode(raw).decode("ascii"))
        return i

    entries: dict[str, Any] = {}
    for lf, d, st in zip(leaves, datas, stamps, strict=True):
        if st is None or d.meta.status == ERROR:
            continue
        m = d.meta
        entries[key(lf)] = {
            "stamp": st,
            "meta": {
                "status": m.status,
                "detail": m.detail,
                "started": m.started,
                "commit": m.commit,
                "dirty": m.dirty,
                "mtime_ns": m.mtime_ns,
            },
            "rows": ref(d.rows),
        }
    text = json.dumps(
        {
            **_header(),
            "rank": rank,
            "names": {"stages": cols.stages.names, "transforms": cols.transforms.names},
            "blobs": blobs,
            "entries": entries,
        },
        separators=(",", ":"),
    )
    try:
        # a temporary file renamed over it, never through a link; it was read above to be rewritten
        write_file(path, text.encode("utf-8"), rewrite=True)
    except AdDiffError as e:
        raise AdDiffError(f"{path}: cannot write the cache ({str(e).removeprefix(f'{path}: ')})") from e
