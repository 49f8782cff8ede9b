"""Array helpers of the graph index and the match chain (numpy): packed rows and pairing by keys unique on
both sides.

A graph's per-node lists (its inputs, its users) are held packed: one flat array of values and an offset
array ``ptr`` (row ``i`` is ``values[ptr[i]:ptr[i + 1]]``).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

from ad_diff.core import lazy

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = lazy.module("numpy")


def machine(values: NDArray[np.intp] | NDArray[np.int64], into: array[int] | None = None) -> array[int]:
    """``values`` as machine integers (``array('q')``, appended to ``into`` when given): one copy, read,
    sliced and iterated as Python ints made one at a time, where a ``tolist()`` holds an int object for
    every value at once."""
    out = array("q") if into is None else into
    out.frombytes(np.ascontiguousarray(values, dtype=np.int64).data.cast("B"))
    return out


def ptr_of(counts: NDArray[np.intp]) -> NDArray[np.intp]:
    """Row offsets from row lengths."""
    ptr = np.zeros(len(counts) + 1, dtype=np.intp)
    np.cumsum(counts, out=ptr[1:])
    return ptr


def gather(ptr: NDArray[np.intp], values: NDArray[np.intp], rows: NDArray[np.intp]
           ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The values of ``rows`` (in that order, each row's in its order) and, for each, the index in ``rows``
    it came from."""
    lens = ptr[rows + 1] - ptr[rows]
    which = np.repeat(np.arange(len(rows)), lens)
    first = np.repeat(ptr[rows] - ptr_of(lens)[:-1], lens)
    return values[first + np.arange(len(which))], which


def unique_pairs(keys_b: list[NDArray[np.int64]], keys_c: list[NDArray[np.int64]]
                 ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The rows ``(b, c)`` whose key (their values in the columns, compared whole) is held by exactly one row
    of each side: every such key pairs its two rows. One sort of both sides' keys together, not a dict."""
    nb = len(keys_b[0])
    if nb == 0 or len(keys_c[0]) == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    cols = [np.concatenate([b, c]) for b, c in zip(keys_b, keys_c, strict=True)]
    order = np.lexsort(cols[::-1])
    same = np.ones(len(order) - 1, dtype=bool)  # each sorted key equal to the one before it
    for col in cols:
        s = col[order]
        same &= s[1:] == s[:-1]
    group = np.concatenate([[0], np.cumsum(~same)])
    in_c = order >= nb
    ngroups = int(group[-1]) + 1
    count_b = np.bincount(group[~in_c], minlength=ngroups)
    count_c = np.bincount(group[in_c], minlength=ngroups)
    take = ((count_b == 1) & (count_c == 1))[group]
    # Both lists are in group order, one member of each side per group: the n-th of each is one pair.
    return order[take & ~in_c], order[take & in_c] - nb


__all__ = ["gather", "ptr_of", "unique_pairs"]
