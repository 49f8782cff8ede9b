"""Row layout and row summaries: what a row is, and outliers under the limits."""

from __future__ import annotations

import numpy as np

from ad_diff.kinds.tensors.model import RowLimits, times
from ad_diff.kinds.tensors.rows import BLOCK, MAX_ROWS, RowSums, row_layout, summarise


def test_rows_are_leading_indices() -> None:
    lay = row_layout((4, 128, 512))
    got = (lay.count, lay.width, lay.judged, lay.index_shape, lay.logits_ok)
    assert got == (512, 512, True, (4, 128), True)
    assert not row_layout((1000,)).judged  # 1-D: blocks only
    assert not row_layout((64, 4)).judged  # rows of 4 elements are too short to judge
    assert row_layout((1, 512)).judged is False  # a single row says nothing about rows


def test_too_many_rows_are_coarsened_and_complex_rows_count_both_parts() -> None:
    lay = row_layout((2, MAX_ROWS, 32))
    assert lay.count == 2
    assert lay.width == MAX_ROWS * 32
    assert not lay.logits_ok
    assert row_layout((4, 16), lanes=2).width == 32


def test_spans_cover_every_real_once_whatever_the_chunk() -> None:
    for shape, chunk in (((3, 5, 40), 7), ((3, 5, 40), 1000), ((100_003,), 4096), ((2, 600_000), 1 << 18)):
        lay = row_layout(shape)
        covered = np.zeros(lay.reals, dtype=np.int8)
        for start, count, _r0, _k, _w in lay.spans(chunk):
            covered[start : start + count] += 1
        assert (covered == 1).all(), shape
    assert row_layout((100_003,)).width == BLOCK


def _sums(dd: list[float], bb: float = 1.0, width: int = 64, out: list[int] | None = None) -> RowSums:
    s = RowSums.empty(len(dd), ref=False, logits=False)
    s.dd[:], s.bb[:], s.cc[:] = dd, bb, bb
    if out is not None:
        s.out[:] = out
    return s


LIMITS = RowLimits(ratio=4, spread=4, nrmse=0.016, outside=0.5, atol=1e-5)


def test_one_row_carrying_all_the_difference_is_an_outlier() -> None:
    lay = row_layout((8, 64))
    dd = [0.0] * 8
    dd[5] = 64 * 0.05**2  # normalised error 0.05 in row 5, zero elsewhere
    st = summarise(_sums(dd), lay, LIMITS, (8, 64), ref=False)
    assert st is not None
    assert st.outliers == 1
    assert st.worst[0].index == (5,)
    assert st.worst[0].outlier
    assert times(st.worst[0].score).startswith("all of the difference")


def test_evenly_spread_noise_has_no_outlier() -> None:
    lay = row_layout((8, 64))
    rng = np.random.default_rng(0)
    dd = list(64 * (0.005 * (1 + 0.1 * rng.random(8))) ** 2)
    st = summarise(_sums(dd, out=[30] * 8), lay, LIMITS, (8, 64), ref=False)
    assert st is not None
    assert st.outliers == 0
    assert st.worst[0].score < 1.3


def test_tiny_errors_are_never_outliers() -> None:
    lay = row_layout((8, 64))
    dd = [0.0] * 8
    dd[2] = 64 * 1e-4**2  # infinitely more than the median row, but far below the NRMSE limit
    st = summarise(_sums(dd), lay, LIMITS, (8, 64), ref=False)
    assert st is not None
    assert st.outliers == 0


def test_a_near_zero_row_with_rounding_noise_is_not_an_outlier() -> None:
    lay = row_layout((8, 64))
    s = _sums([64 * 0.005**2] * 8)  # every row: normalised error 0.005 of an RMS of 1
    s.bb[3] = 64 * 1e-3**2  # a row of small values (RMS 1e-3) carrying the typical absolute noise (0.005)
    st = summarise(s, lay, LIMITS, (8, 64), ref=False)
    assert st is not None
    assert st.outliers == 0
