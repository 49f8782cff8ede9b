"""What one measurement of a tensor pair yields, as plain numbers: :class:`TensorStats` and its parts (the
reference figures, the error histogram, the per-row summary). Part of the tensors kind's model
(:mod:`.model` names them all); no numpy and no torch here, so reports and JSON never need them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ad_diff.core.jsonable import json_omit


@dataclass(frozen=True, slots=True)
class ReferenceStats:
    """Errors of both runs against a higher-precision reference (the ``torch._dynamo.utils.same`` idea)."""

    reference_dtype: str
    baseline_rmse: float
    candidate_rmse: float
    ratio: float
    """``candidate_rmse / baseline_rmse``: 1.0 means the candidate is exactly as far from the reference."""
    baseline_top1: float | None = None
    """Share of rows whose argmax equals the reference's (logits only)."""
    candidate_top1: float | None = None


@dataclass(frozen=True, slots=True)
class ErrorHistogram:
    """Counts of log10(|error|) in fixed bins; bin 0 also holds zeros and everything below ``lo``."""

    lo: float
    hi: float
    abs_counts: tuple[int, ...]
    rel_counts: tuple[int, ...]

    def quantile(self, q: float, which: str = "abs") -> float:
        """Approximate ``q``-quantile (0..1) of the error from the bins (upper bin edge, conservative)."""
        counts = self.abs_counts if which == "abs" else self.rel_counts
        total = sum(counts)
        if total == 0:
            return 0.0
        width = (self.hi - self.lo) / len(counts)
        target = q * total
        run = 0
        for i, c in enumerate(counts):
            run += c
            if run >= target and c:
                return 0.0 if i == 0 and self.lo <= -30 else 10 ** (self.lo + width * (i + 1))
        return 10**self.hi


@dataclass(frozen=True, slots=True)
class RowLimits:
    """When a row is an outlier (see docs/recording-tensors.md for the figures behind the defaults)."""

    ratio: float
    """With a reference: a row whose error against it exceeds this many times the same baseline row's."""
    spread: float
    """Without: a row whose normalised error exceeds this many times the median row's ..."""
    nrmse: float
    """... and the tensor's NRMSE limit (so a row of near-zero error is never an outlier)."""
    outside: float
    """Without: a row with more than this share of elements beyond tolerance while the median row has none."""
    atol: float


@dataclass(frozen=True, slots=True)
class RowFigure:
    """One row (a leading index: batch, position ...) of a compared tensor."""

    index: tuple[int, ...]
    score: float
    """What the row is judged by: with a reference, its error against it over the same baseline row's
    (``ratio``); without, its normalised error over the median row's (``spread``)."""
    error: float
    """The row's RMSE between the runs over the baseline row's RMS."""
    cosine: float
    """Cosine of the candidate row with the reference row (with a reference) or with the baseline row."""
    outside_share: float
    """Share of the row's elements beyond the elementwise tolerance."""
    outlier: bool
    argmax_baseline: int | None = None
    """Argmax of the row (logits: the token it would pick)."""
    argmax_candidate: int | None = None
    argmax_reference: int | None = None


@dataclass(frozen=True, slots=True)
class RowStats:
    """Per-row figures of one tensor, from the same pass as :class:`TensorStats`."""

    rows: int
    """Rows judged (leading indices; coarser when a tensor has very many)."""
    width: int
    """Elements (reals) per row."""
    index_shape: tuple[int, ...]
    """The shape a row index lives in (``[4, 128]`` for logits ``[4, 128, 8192]``)."""
    criterion: str
    """``reference`` (error against the reference over the same baseline row's) or ``spread`` (normalised
    error over the median row's, plus the share beyond tolerance)."""
    limit: float
    median_score: float
    outliers: int
    """Rows beyond the row limits: drift, even when the whole-tensor figure passes."""
    worst: tuple[RowFigure, ...]
    """Up to five rows, outliers first, then by score."""
    median_outside: float
    """Median row's share of elements beyond tolerance."""
    excluded: int = 0
    """Rows left out (near-tie routing flips); ``rows`` counts the others."""
    sequences: int | None = None
    next_token: float | None = None
    """Share of sequences whose last position has the same argmax in both runs (logits)."""
    next_token_baseline_ref: float | None = None
    """The same for baseline vs reference, and candidate vs reference."""
    next_token_candidate_ref: float | None = None


@dataclass(frozen=True, slots=True)
class TensorStats:
    """Measurements of candidate against baseline for one tensor: numbers only, no verdict.

    The judgement that ad-diff gates on is separate (:class:`Judgement`); :attr:`within_elementwise` is
    the ``torch.testing.assert_close`` outcome (every element within ``atol + rtol * |baseline|``, NaN equal
    to NaN), shown as evidence.
    """

    __json_extra__ = ("outside_share",)

    numel: int
    compared: int
    """Elements finite in both runs (the statistics below are over these)."""
    max_abs: float
    mean_abs: float
    max_rel: float | None
    """Elementwise relative error (``None`` unless the judged statistic needs it: max, mean, quantiles)."""
    mean_rel: float | None
    rmse: float
    nrmse: float
    """RMSE divided by the baseline's RMS value (scale-free; 0 when both are 0)."""
    cosine: float
    one_minus_cosine: float
    """``1 - cosine``, computed without cancellation (keeps its digits when the cosine is 0.99999)."""
    outside: int
    """Elements beyond ``atol + rtol * |baseline|``, plus NaN/Inf that differ between the runs."""
    atol: float
    rtol: float
    nan_baseline: int
    nan_candidate: int
    inf_baseline: int
    inf_candidate: int
    worst_index: tuple[int, ...] | None
    worst_baseline: float | None
    worst_candidate: float | None
    top1: float | None = None
    """Share of rows (last dim) whose argmax agrees; set for logits-like tensors."""
    topk: float | None = None
    """Mean overlap of the top-``k`` sets per row."""
    k: int | None = None
    reference: ReferenceStats | None = None
    rows: RowStats | None = None
    """Per-row figures (``None`` for tensors without rows to judge: 1-D, or rows shorter than 16)."""
    excluded: int = 0
    """Elements left out (the rows of tokens a near-tie routing flip moved); every figure is over the rest."""
    histogram: ErrorHistogram | None = field(default=None, compare=False, repr=False, metadata=json_omit())
    samples: tuple[tuple[float, ...], tuple[float, ...]] | None = field(
        default=None, compare=False, repr=False, metadata=json_omit()
    )
    """(baseline values, candidate values) at evenly strided positions, for scatter plots."""

    @property
    def outside_share(self) -> float:
        """Share of elements beyond the elementwise tolerance."""
        judged = self.numel - self.excluded
        return self.outside / judged if judged > 0 else 0.0

    @property
    def within_elementwise(self) -> bool:
        """Every element within the elementwise tolerance (``assert_close`` would pass)."""
        return self.outside == 0

    @property
    def new_nonfinite(self) -> bool:
        """The candidate has more NaN or more Inf than the baseline."""
        return self.nan_candidate > self.nan_baseline or self.inf_candidate > self.inf_baseline


def times(score: float) -> str:
    """``16.2x``, or ``all of the difference`` when the median row has none (an infinite ratio)."""
    return "all of the difference (the median row has none)" if math.isinf(score) else f"{score:.3g}x"
