"""Array helpers of the match chain against plain-Python definitions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ad_diff.kinds.graph.packed import gather, ptr_of, unique_pairs

_KEYS = st.lists(st.tuples(st.integers(0, 3), st.integers(-2, 2)), max_size=30)


def _dict_pairs(kb: list[tuple[int, int]], kc: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The chain's former dict form: a key seen twice on a side pairs nothing."""
    def unique(keys: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
        out: dict[tuple[int, int], int] = {}
        for i, k in enumerate(keys):
            out[k] = -1 if k in out else i
        return out

    ub, uc = unique(kb), unique(kc)
    return {(i, uc[k]) for k, i in ub.items() if i >= 0 and uc.get(k, -1) >= 0}


@settings(max_examples=500, deadline=None)
@given(kb=_KEYS, kc=_KEYS)
def test_unique_pairs_matches_a_dict_of_keys(kb: list[tuple[int, int]], kc: list[tuple[int, int]]) -> None:
    cols_b = [np.array([k[c] for k in kb], dtype=np.int64) for c in (0, 1)]
    cols_c = [np.array([k[c] for k in kc], dtype=np.int64) for c in (0, 1)]
    b, c = unique_pairs(cols_b, cols_c)
    assert set(zip(b.tolist(), c.tolist(), strict=True)) == _dict_pairs(kb, kc)
    assert len(set(b.tolist())) == len(b)
    assert len(set(c.tolist())) == len(c)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.lists(st.integers(0, 9), max_size=4), max_size=8), pick=st.data())
def test_gather_reads_packed_rows(rows: list[list[int]], pick: st.DataObject) -> None:
    ptr = ptr_of(np.array([len(r) for r in rows], dtype=np.intp))
    values = np.array([v for r in rows for v in r], dtype=np.intp)
    assert ptr.tolist() == [sum(len(r) for r in rows[:i]) for i in range(len(rows) + 1)]
    which = pick.draw(st.lists(st.integers(0, max(0, len(rows) - 1)), max_size=6)) if rows else []
    got, row = gather(ptr, values, np.array(which, dtype=np.intp))
    assert got.tolist() == [v for w in which for v in rows[w]]
    assert row.tolist() == [k for k, w in enumerate(which) for _ in rows[w]]
