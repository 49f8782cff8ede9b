"""What one statistics pass over a tensor pair gathers, whichever device computes it (:class:`Pass`).

The numpy pass (:mod:`.measure`) and the torch pass (:mod:`.gpu`) both fill a :class:`Pass` chunk by chunk
and turn it into :class:`TensorStats` the same way; the options they share (:class:`MeasureOptions`) and
the histogram's bins live here, so neither pass imports the other's module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ad_diff.kinds.tensors.model import ErrorHistogram, ReferenceStats, RowLimits, TensorRecord, TensorStats
from ad_diff.kinds.tensors.reader import lanes
from ad_diff.kinds.tensors.rows import Layout, RowSums, summarise

HIST_LO, HIST_HI, HIST_BINS = -12.0, 8.0, 400
BIG = 2.0**500
"""Sums of squares above this are scaled down (exactly) before ``1 - cos`` squares their difference."""


@dataclass(frozen=True, slots=True)
class MeasureOptions:
    """Knobs of one measurement (not of the verdict)."""

    atol: float
    rtol: float
    device: str = "cpu"
    chunk: int = 0
    """Reals per chunk; 0 picks ``CPU_CHUNK``. Results do not depend on it."""
    topk: int = 0
    """0: no top-k agreement; otherwise ``k`` for the top-k overlap per row of the last dimension."""
    histogram: bool = False
    samples: int = 0
    """Points kept for scatter plots (evenly strided)."""
    relative: bool = False
    """Also measure elementwise relative error (max/mean); only the max/mean/quantile statistics use it."""
    rows: RowLimits | None = None
    """Thresholds that make a row an outlier (from the tolerance); ``None``: rows are not summarised."""
    exclude: frozenset[int] = frozenset()
    """Rows (flat indices of the row layout) left out of every figure: tokens a near-tie routing flip moved.
    Only for tensors judged by rows; measured on the CPU."""


class Pass:
    """What one pass gathered, whichever device computed it: per-row sums (float64 arrays over rows) and the
    few whole-tensor extremes. :meth:`result` turns it into :class:`TensorStats`."""

    def __init__(self, opts: MeasureOptions, layout: Layout, numel: int, ref: bool) -> None:
        self.opts, self.layout, self.numel = opts, layout, numel
        self.sums = RowSums.empty(layout.count, ref, opts.topk > 0 and layout.logits_ok)
        self.max_abs, self.max_rel = -1.0, 0.0
        self.worst: tuple[int, float, float] = (-1, 0.0, 0.0)
        """(flat index in reals, baseline value, candidate value) of the largest ``|b - c|``."""
        self.nonfinite = [0, 0, 0, 0]  # nan b, nan c, inf b, inf c
        self.compared = self.ref_compared = 0
        self.hist = (np.zeros(HIST_BINS, np.int64), np.zeros(HIST_BINS, np.int64)) if opts.histogram else None
        self.stride = max(1, numel // opts.samples) if opts.samples else 0
        """Every ``stride``-th real is kept for plots (0: none)."""
        self.samples: tuple[list[Any], list[Any]] = ([], [])
        self.exp = 0
        """Sums of squares (and of absolute differences) hold values scaled by ``2**-exp``: 0 unless a span
        of finite values would overflow float64 (:meth:`_Acc.rescale`); powers of two scale exactly."""

    def result(self, base: TensorRecord, reference: TensorRecord | None) -> TensorStats:
        """The whole tensor's statistics (exactly rounded sums of the row sums) and the row summary."""
        s, o, cmp_ = self.sums, self.opts, self.compared
        keep = None
        if o.exclude and self.layout.judged:  # shares of rows over the rows judged
            keep = np.ones(self.layout.count, dtype=bool)
            keep[np.fromiter(o.exclude, dtype=np.int64)] = False
        bb, cc, dd, ad = s.total("bb"), s.total("cc"), s.total("dd"), s.total("ad")
        unit = 2.0**self.exp  # the sums' scale (1.0 unless finite values overflowed float64)
        rmse = math.sqrt(dd / cmp_) if cmp_ else 0.0
        rms_b = math.sqrt(bb / cmp_) if cmp_ else 0.0
        nrmse = rmse / rms_b if rms_b else (0.0 if rmse == 0 else math.inf)  # scale-free: from scaled sums
        rmse *= unit
        gap = one_minus_cos(bb, cc, dd)
        ln = lanes(base.dtype)
        worst = wb = wc = None
        if cmp_ and self.max_abs >= 0:
            worst = unravel(self.worst[0] // ln, base.shape)
            wb, wc = self.worst[1], self.worst[2]
        ref = None
        if reference is not None:
            n = self.ref_compared
            eb, ec = (math.sqrt(s.total(k) / n) if n else 0.0 for k in ("eb", "ec"))
            ratio = ec / eb if eb else (1.0 if ec == 0 else math.inf)
            ref = ReferenceStats(
                reference.dtype,
                eb * unit,
                ec * unit,
                ratio,
                s.share("t1b", keep) if s.logits else None,
                s.share("t1c", keep) if s.logits else None,
            )
        hist = None
        if self.hist is not None:
            hist = ErrorHistogram(
                HIST_LO, HIST_HI, tuple(self.hist[0].tolist()), tuple(self.hist[1].tolist())
            )
        samples = None
        if self.samples[0]:
            samples = (
                tuple(np.concatenate(self.samples[0]).tolist()),
                tuple(np.concatenate(self.samples[1]).tolist()),
            )
        nanb, nanc, infb, infc = self.nonfinite
        limits = o.rows if o.rows is None or not self.exp else replace(o.rows, atol=o.rows.atol / unit)
        rows = (summarise(s, self.layout, limits, base.shape, reference is not None, o.exclude)
                if limits else None)
        return TensorStats(
            numel=self.numel, compared=cmp_, max_abs=max(self.max_abs, 0.0),
            mean_abs=ad / cmp_ * unit if cmp_ else 0.0, max_rel=self.max_rel if o.relative else None,
            mean_rel=(s.total("rl") / cmp_ if cmp_ else 0.0) if o.relative else None, rmse=rmse,
            nrmse=nrmse,
            cosine=1.0 - gap, one_minus_cosine=gap, outside=s.total_int("out"), atol=o.atol, rtol=o.rtol,
            nan_baseline=nanb, nan_candidate=nanc, inf_baseline=infb, inf_candidate=infc, worst_index=worst,
            worst_baseline=wb, worst_candidate=wc, top1=s.share("t1", keep) if s.logits else None,
            topk=s.share("tk", keep) if s.logits else None,
            k=min(o.topk, self.layout.width) if s.logits else None,
            reference=ref, rows=rows, histogram=hist, samples=samples,
            excluded=len(o.exclude) * self.layout.width // ln if self.layout.judged else 0,
        )  # fmt: skip


def one_minus_cos(bb: float, cc: float, dd: float) -> float:
    """``1 - cos(b, c)`` from ``|b|^2``, ``|c|^2`` and ``|b-c|^2``, without the cancellation of ``1 - dot``.

    ``|b-c|^2 = (|b|-|c|)^2 + 2|b||c|(1-cos)``, and ``(|b|-|c|)^2 = (|b|^2-|c|^2)^2 / (|b|+|c|)^2``.
    """
    if bb <= 0 or cc <= 0:
        return 0.0 if bb == cc else 1.0
    top = max(bb, cc, dd)
    if top > BIG:  # (bb - cc) ** 2 would overflow: scale all three by one power of two (exact)
        unit = 2.0 ** -math.frexp(top)[1]
        bb, cc, dd = bb * unit, cc * unit, dd * unit
    nb, nc = math.sqrt(bb), math.sqrt(cc)
    gap = (dd - (bb - cc) ** 2 / (nb + nc) ** 2) / (2 * nb * nc)
    return min(max(gap, 0.0), 2.0)


def unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index in ``shape`` of flat (row-major) position ``flat``."""
    out = []
    for dim in reversed(shape):
        out.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return tuple(reversed(out))
