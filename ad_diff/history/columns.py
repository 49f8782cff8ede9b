"""Interned columns: how one leaf's transforms are held in memory until the long table is built.

Strings (stage and transform names) become dense integer codes in order of first appearance, states a
code into :data:`STATES`, a missing match count :data:`NO_COUNT`, and each transform one packed
:data:`ROW` record. 1.8 million cells then cost 45 MB of bytes instead of 1.8 million tuples of strings,
and the table is one ``numpy.frombuffer`` of them all.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ad_diff.core import lazy
from ad_diff.core.model import State
from ad_diff.errors import AdDiffError
from ad_diff.history.model import LeafMeta

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy.module("numpy")

#: State codes of the table (the ``state`` column's categories, in this order).
STATES: tuple[str, ...] = tuple(s.value for s in State)
STATE_CODE = {s: i for i, s in enumerate(STATES)}
NO_COUNT = -1
"""``count`` code of a transform that reported no match count."""
ROW = struct.Struct("<iiqbq")
"""One transform of one leaf, packed: stage code, transform code, occurrence, state code, count."""


class Names:
    """Strings interned to dense integer codes, in order of first appearance."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.names: list[str] = []

    def code(self, value: str) -> int:
        """The code of ``value`` (a new string gets the next code)."""
        c = self.index.get(value)
        if c is None:
            c = self.index[value] = len(self.names)
            self.names.append(value)
        return c

    def codes(self, values: Iterable[str]) -> array[int]:
        """The codes of ``values``."""
        return array("i", map(self.code, values))


@dataclass
class Columns:
    """The name pools shared by every leaf of one history, and a cache of parsed snapshot lines."""

    stages: Names = field(default_factory=Names)
    transforms: Names = field(default_factory=Names)
    lines: dict[str, bytes] = field(default_factory=dict)
    """Snapshot transform line -> its packed :data:`ROW` (see snapfast)."""
    blocks: dict[str, bytes] = field(default_factory=dict)
    """The last few snapshots' whole transform blocks -> their packed rows (most nights repeat the last)."""


@dataclass
class LeafData:
    """One leaf as read: its meta and its transforms as packed :data:`ROW` records (none when unreadable)."""

    meta: LeafMeta
    rows: bytes = b""

    def __len__(self) -> int:
        return len(self.rows) // ROW.size


_INT64 = (-(1 << 63), (1 << 63) - 1)


def from_strings(
    cols: Columns,
    meta: LeafMeta,
    stages: Iterable[str],
    transforms: Iterable[str],
    occurrences: Iterable[int],
    states: Iterable[str],
    counts: Iterable[int | None],
) -> LeafData:
    """A leaf from plain per-transform columns (the log and YAML snapshot readers use this)."""
    out = []
    for s, t, o, x, c in zip(stages, transforms, occurrences, states, counts, strict=True):
        n = NO_COUNT if c is None else c
        if not (_INT64[0] <= o <= _INT64[1] and _INT64[0] <= n <= _INT64[1]):
            raise AdDiffError(f"transform {t}: occurrence {o} or match count {c} is beyond 64 bits")
        out.append(ROW.pack(cols.stages.code(s), cols.transforms.code(t), o, STATE_CODE[x], n))
    return LeafData(meta, b"".join(out))


def row_dtype() -> Any:
    """The numpy dtype of :data:`ROW` (numpy imported here, not on import of this module)."""
    return np.dtype(
        [("stage", "<i4"), ("transform", "<i4"), ("occurrence", "<i8"), ("state", "i1"), ("count", "<i8")]
    )
