"""Rows: every leading index of a tensor (a token, or a token and a head) measured on its own.

Whole-tensor averages dilute the bugs that hit a few tokens (a cache slip for one request, a wrong position
for the last token). :func:`row_layout` decides what a row is; :class:`RowSums` holds the per-row sums the
single pass of :mod:`~ad_diff.kinds.tensors.measure` produces; :func:`summarise` turns them into
:class:`~ad_diff.kinds.tensors.model.RowStats`: the worst rows and how many are outliers under
:class:`RowLimits` (thresholds from the tolerance; docs/recording-tensors.md gives the measurements behind
the defaults).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ad_diff.kinds.tensors.model import RowFigure, RowLimits, RowStats

MIN_WIDTH = 16
"""Rows shorter than this are not judged (a row of 4 noisy elements is an outlier by chance)."""
MAX_ROWS = 1 << 18
"""More leading indices than this are merged into coarser rows (memory: ~12 float64 per row)."""
BLOCK = 1 << 14
"""Reals per block when a tensor has no rows to judge (blocks only fix the summation order)."""
PIECE = 1 << 18
"""Reals per piece of a row longer than this (fixed, so sums do not depend on the chunk size)."""
WORST = 5
"""Rows listed in a report."""


@dataclass(frozen=True, slots=True)
class Layout:
    """How a tensor splits into rows: ``count`` rows of ``width`` reals (complex: two reals per element)."""

    count: int
    width: int
    reals: int
    judged: bool
    """Real rows (leading indices); False: fixed blocks that only order the sums."""
    index_shape: tuple[int, ...]
    logits_ok: bool
    """Rows are the last dimension, so per-row argmax (top-1, next token) means something."""

    def spans(self, chunk: int) -> Iterator[tuple[int, int, int, int, int]]:
        """``(start, count, first_row, rows, width)`` in reals: whole rows, or pieces of one long row."""
        full = self.reals // self.width if self.width else 0
        if self.width <= PIECE:
            per = max(1, chunk // self.width)
            for r0 in range(0, full, per):
                k = min(per, full - r0)
                yield r0 * self.width, k * self.width, r0, k, self.width
            rest = self.reals - full * self.width
            if rest:
                yield full * self.width, rest, full, 1, rest
            return
        for r in range(self.count):
            for p in range(0, self.width, PIECE):
                n = min(PIECE, self.width - p)
                yield r * self.width + p, n, r, 1, n

    def buffer(self, chunk: int) -> int:
        """Reals of the largest span."""
        if self.width > PIECE:
            return PIECE
        return max(1, min(self.reals, max(1, chunk // self.width) * self.width))


def row_layout(shape: tuple[int, ...], lanes: int = 1) -> Layout:
    """Rows of a tensor of ``shape``: all dims but the last, coarsened while there are more than MAX_ROWS."""
    reals = math.prod(shape) * lanes
    if reals == 0:
        return Layout(0, 1, 0, False, (), False)
    for j in range(len(shape) - 1, 0, -1):
        count, width = math.prod(shape[:j]), math.prod(shape[j:]) * lanes
        if count > MAX_ROWS:
            continue
        if count >= 2 and width >= MIN_WIDTH:
            return Layout(count, width, reals, True, tuple(shape[:j]), j == len(shape) - 1)
        break
    width = max(BLOCK, -(-reals // MAX_ROWS // 1024) * 1024)
    return Layout(-(-reals // width), width, reals, False, (), False)


@dataclass
class RowSums:
    """Per-row sums of one pass (float64; ``out`` and the argmax flags as integers)."""

    bb: np.ndarray
    cc: np.ndarray
    dd: np.ndarray
    ad: np.ndarray
    out: np.ndarray
    rl: np.ndarray
    """Sum of elementwise relative errors (only filled when they are measured)."""
    rr: np.ndarray | None = None
    eb: np.ndarray | None = None
    ec: np.ndarray | None = None
    t1: np.ndarray | None = None
    tk: np.ndarray | None = None
    t1b: np.ndarray | None = None
    t1c: np.ndarray | None = None
    ab: np.ndarray | None = None
    ac: np.ndarray | None = None
    ar: np.ndarray | None = None

    @classmethod
    def empty(cls, rows: int, ref: bool, logits: bool) -> RowSums:
        """Zeroed sums for ``rows`` rows."""
        def z(dtype: type[np.generic] = np.float64) -> np.ndarray:
            return np.zeros(rows, dtype=dtype)

        s = cls(z(), z(), z(), z(), z(np.int64), z())
        if ref:
            s.rr, s.eb, s.ec = z(), z(), z()
        if logits:
            s.t1, s.tk, s.ab, s.ac = z(np.int64), z(), z(np.int64), z(np.int64)
            if ref:
                s.t1b, s.t1c, s.ar = z(np.int64), z(np.int64), z(np.int64)
        return s

    @property
    def logits(self) -> bool:
        """Per-row argmax figures are kept."""
        return self.t1 is not None

    def add(self, r0: int, k: int, **values: np.ndarray) -> None:
        """Add one span's per-row values (pieces of a long row add up in a fixed order)."""
        for name, v in values.items():
            getattr(self, name)[r0 : r0 + k] += v

    def add_logits(self, r0: int, b: np.ndarray, c: np.ndarray, r: np.ndarray | None, topk: int) -> None:
        """Argmax and top-k overlap of whole rows (logits). Overwrites ``b`` and ``c`` (scratch by now): the
        top-k are found by k argmax passes, each masking the row's maximum (k x cheaper than a partition)."""
        assert self.t1 is not None
        assert self.tk is not None
        assert self.ab is not None
        assert self.ac is not None
        n = len(b)
        k = min(topk, b.shape[1])
        rows = np.arange(n)
        tops = []
        for x in (b, c):
            picks = []
            for _ in range(k):
                i = x.argmax(axis=1)
                picks.append(i)
                x[rows, i] = -np.inf
            tops.append(np.stack(picks, axis=1))
        ab, ac = tops[0][:, 0], tops[1][:, 0]
        self.ab[r0 : r0 + n], self.ac[r0 : r0 + n] = ab, ac
        self.t1[r0 : r0 + n] = ab == ac
        self.tk[r0 : r0 + n] = (tops[0][:, :, None] == tops[1][:, None, :]).any(axis=2).sum(axis=1) / k
        if r is not None and self.ar is not None and self.t1b is not None and self.t1c is not None:
            ar = r.argmax(axis=1)
            self.ar[r0 : r0 + n] = ar
            self.t1b[r0 : r0 + n], self.t1c[r0 : r0 + n] = ab == ar, ac == ar

    def total(self, name: str) -> float:
        """Exactly rounded sum over rows (independent of the order rows were added in)."""
        return math.fsum(getattr(self, name).tolist())

    def total_int(self, name: str) -> int:
        """Sum of an integer column."""
        return int(getattr(self, name).sum())

    def share(self, name: str, keep: np.ndarray | None = None) -> float | None:
        """Mean of a per-row column (a share of rows for the argmax flags), over the rows ``keep`` marks."""
        v = getattr(self, name)
        if v is not None and keep is not None:
            v = v[keep]
        return math.fsum(v.tolist()) / len(v) if v is not None and len(v) else None


def summarise(
    s: RowSums, layout: Layout, limits: RowLimits, shape: tuple[int, ...], ref: bool,
    exclude: frozenset[int] = frozenset(),
) -> RowStats | None:
    """The rows judged, their outliers and the worst ones (``None`` when the tensor has no rows to judge);
    rows in ``exclude`` (never measured) are left out of the medians, the outliers and the worst rows."""
    if not layout.judged:
        return None
    keep = np.ones(layout.count, dtype=bool)
    if exclude:
        keep[np.fromiter(exclude, dtype=np.int64)] = False
    if not keep.any():  # every row left out: nothing to judge by rows
        return None
    w = float(layout.width)
    rms_b = np.sqrt(s.bb / w)
    # Rows are normalised by their own size, but never by less than the median row's: a row of small values
    # (padding, a masked position) carrying the typical absolute noise is not a huge relative error.
    scale = np.maximum(rms_b, max(float(np.median(rms_b[keep])), limits.atol, 1e-30))
    nerr = np.sqrt(s.dd / w) / scale
    outside = s.out / w
    cos = _row_cos(s.bb, s.cc, s.dd)
    median_outside = float(np.median(outside[keep]))
    if ref:
        assert s.eb is not None
        assert s.ec is not None
        assert s.rr is not None
        err_b, err_c = np.sqrt(s.eb / w), np.sqrt(s.ec / w)
        floor = max(0.25 * float(np.median(err_b[keep])), limits.atol / 10, 1e-30)
        score = err_c / np.maximum(err_b, floor)
        flagged = (score > limits.ratio) & (err_c > limits.atol)
        cos = _row_cos(s.cc, s.rr, s.ec)
        criterion, limit = "reference", limits.ratio
    else:
        med = float(np.median(nerr[keep]))
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(nerr > 0, nerr / med, 0.0) if med > 0 else np.where(nerr > 0, np.inf, 0.0)
        flagged = (score > limits.spread) & (nerr > limits.nrmse)
        if median_outside == 0:
            flagged |= outside > limits.outside
        criterion, limit = "spread", limits.spread
    score = np.nan_to_num(score, nan=0.0, posinf=np.inf)
    flagged &= keep
    # outliers first, then by score (highest first), then by row index: a fixed order for equal scores
    order = np.lexsort((np.arange(layout.count), -score, (~flagged).astype(np.int8)))
    order = order[keep[order]][:WORST]
    worst = tuple(_figure(s, int(i), layout, score, nerr, cos, outside, flagged) for i in order)
    return RowStats(
        rows=int(keep.sum()), width=layout.width, index_shape=layout.index_shape, criterion=criterion,
        limit=limit,
        median_score=float(np.median(score[keep])), outliers=int(flagged.sum()), worst=worst,
        median_outside=median_outside, excluded=layout.count - int(keep.sum()),
        **_next_token(s, layout, shape, keep),
    )  # fmt: skip


def _row_cos(xx: np.ndarray, yy: np.ndarray, dd: np.ndarray) -> np.ndarray:
    top = np.maximum(np.maximum(xx, yy), dd)
    big = top > 2.0**500
    if big.any():  # (xx - yy) ** 2 would overflow: scale those rows by a power of two (exact)
        unit = np.where(big, np.ldexp(1.0, -np.frexp(top)[1]), 1.0)
        xx, yy, dd = xx * unit, yy * unit, dd * unit
    nx, ny = np.sqrt(xx), np.sqrt(yy)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = (dd - (xx - yy) ** 2 / (nx + ny) ** 2) / (2 * nx * ny)
    gap = np.where((xx > 0) & (yy > 0), np.clip(np.nan_to_num(gap), 0.0, 2.0), np.where(xx == yy, 0.0, 1.0))
    return 1.0 - gap


def _figure(s: RowSums, i: int, layout: Layout, score: np.ndarray, nerr: np.ndarray, cos: np.ndarray,
            outside: np.ndarray, flagged: np.ndarray) -> RowFigure:  # fmt: skip
    def arg(a: np.ndarray | None) -> int | None:
        return None if a is None else int(a[i])

    return RowFigure(
        index=tuple(int(x) for x in np.unravel_index(i, layout.index_shape)), score=float(score[i]),
        error=float(nerr[i]), cosine=float(cos[i]), outside_share=float(outside[i]), outlier=bool(flagged[i]),
        argmax_baseline=arg(s.ab), argmax_candidate=arg(s.ac), argmax_reference=arg(s.ar),
    )  # fmt: skip


def _next_token(s: RowSums, layout: Layout, shape: tuple[int, ...], keep: np.ndarray | None = None
                ) -> dict[str, Any]:
    """Argmax agreement at the last position of every sequence (logits ``[..., seq, vocab]``), over the
    sequences whose last position ``keep`` keeps."""
    if not s.logits or len(shape) < 3 or not layout.logits_ok:
        return {}
    seq = shape[-2]
    last = np.arange(seq - 1, layout.count, seq)
    if keep is not None:
        last = last[keep[last]]
    if not len(last):
        return {}

    def share(a: np.ndarray | None) -> float | None:
        return None if a is None else float(a[last].sum()) / len(last)

    return {
        "sequences": len(last),
        "next_token": share(s.t1),
        "next_token_baseline_ref": share(s.t1b),
        "next_token_candidate_ref": share(s.t1c),
    }
