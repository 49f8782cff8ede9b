"""Interned columns (ad_diff/history/columns.py): names coded densely in first-seen order, transforms packed
into ROW records that the numpy dtype reads back field for field."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ad_diff.errors import AdDiffError
from ad_diff.history.columns import NO_COUNT, ROW, STATE_CODE, STATES, Columns, Names, from_strings, row_dtype
from ad_diff.history.model import OK, LeafMeta

_NAME = st.text(alphabet="abc_", min_size=1, max_size=3)


@given(st.lists(_NAME, max_size=30))
def test_names_are_coded_densely_in_first_seen_order(values: list[str]) -> None:
    names = Names()
    codes = list(names.codes(values))
    assert names.names == list(dict.fromkeys(values))
    assert [names.names[c] for c in codes] == values
    assert all(names.index[n] == i for i, n in enumerate(names.names))


_TRANSFORM = st.tuples(
    _NAME, _NAME, st.integers(0, 1 << 62), st.sampled_from(STATES), st.none() | st.integers(0, 1 << 62)
)


@given(st.lists(_TRANSFORM, max_size=12))
def test_packed_rows_read_back_through_the_dtype(rows: list[tuple]) -> None:
    cols = Columns()
    data = from_strings(cols, LeafMeta(OK), *(zip(*rows, strict=True) if rows else ((),) * 5))
    assert len(data) == len(rows)
    assert row_dtype().itemsize == ROW.size
    got = np.frombuffer(data.rows, dtype=row_dtype())
    for (stage, transform, occ, state, count), r in zip(rows, got, strict=True):
        assert cols.stages.names[r["stage"]] == stage
        assert cols.transforms.names[r["transform"]] == transform
        assert int(r["occurrence"]) == occ
        assert STATES[r["state"]] == state
        assert STATE_CODE[state] == r["state"]
        assert int(r["count"]) == (NO_COUNT if count is None else count)


@pytest.mark.parametrize(("occurrence", "count"), [(1 << 63, 1), (0, 1 << 63), (-(1 << 63) - 1, None)])
def test_numbers_beyond_64_bits_are_refused(occurrence: int, count: int | None) -> None:
    with pytest.raises(AdDiffError, match="beyond 64 bits"):
        from_strings(Columns(), LeafMeta(OK), ["s"], ["t"], [occurrence], ["applied"], [count])
