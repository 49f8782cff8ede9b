"""Frozen dataclasses of the tensor comparison: what was recorded, what was measured, how it was judged.

Flow: ``parse`` -> :class:`TensorRecord`; ``measure`` -> :class:`TensorStats` (numbers only);
``tolerance`` -> :class:`Judgement` and :class:`TensorVerdict`; ``analysis`` bundles them into
:class:`TensorAnalysis`; ``rules`` turns that into findings. No torch import here: these objects are plain
data, so reports and JSON never need torch. JSON comes from :mod:`ad_diff.core.jsonable` (field metadata).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ad_diff.core.jsonable import json_as, json_omit
from ad_diff.core.model import RunId


class TensorKind(str, Enum):
    """What a recorded tensor is, by where it was found in ``tensors/``."""

    OUTPUT = "output"
    """An output of the model (``logits``), keyed by output name."""
    NODE = "node"
    """A per-node capture (``nodes*`` files), keyed by graph node name."""
    REFERENCE = "reference"
    """A higher-precision reference output (``reference/``)."""
    INPUT = "input"
    """An input the outputs were produced from (``inputs*`` files)."""

    def __str__(self) -> str:
        return self.value


class FileFormat(str, Enum):
    """How a tensor file is stored."""

    SAFETENSORS = "safetensors"
    PT = "pt"
    """``torch.save`` (read with ``weights_only=True`` after a pickle pre-scan)."""


class Mismatch(str, Enum):
    """What the two records of one tensor disagree on."""

    SHAPE = "shape"
    """Different shapes (values compared only when a known transform explains it)."""
    DTYPE = "dtype"
    """Different dtypes (compared in fp32 under the looser tolerance)."""


class TensorVerdict(str, Enum):
    """The verdict on one compared tensor, decided by :func:`ad_diff.kinds.tensors.tolerance.verdict`."""

    IDENTICAL = "identical"
    ACCEPTABLE = "acceptable drift"
    BEYOND = "beyond tolerance"
    NONFINITE = "new NaN/Inf"
    SHAPE_MISMATCH = "shape mismatch"

    @property
    def passed(self) -> bool:
        """True for the verdicts that are not drift."""
        return self in (TensorVerdict.IDENTICAL, TensorVerdict.ACCEPTABLE)


@dataclass(frozen=True, slots=True)
class TensorRecord:
    """One recorded tensor, located but not loaded."""

    __json_extra__ = ("file",)

    name: str
    """Key in the file: an output name (``logits``) or a graph node name for per-node captures."""
    path: Path = field(metadata=json_omit())
    fmt: FileFormat = field(metadata=json_as("format"))
    dtype: str
    """Short dtype name as in safetensors: ``BF16``, ``F16``, ``F32``, ``F64``, ``I64``, ``BOOL`` ..."""
    shape: tuple[int, ...]
    data_offset: int | None = field(default=None, metadata=json_omit())
    """Absolute byte offset of the data in a safetensors file (``None`` for ``.pt``)."""
    kind: TensorKind = field(default=TensorKind.OUTPUT, metadata=json_omit())
    select: tuple[int, int] | None = field(default=None, metadata=json_omit())
    """``(seq, keep)``: this record is position ``keep`` of dim -2 (of length ``seq``) of the stored tensor,
    whose shape is ``shape`` with ``seq`` in place of 1 (the last position of full logits)."""
    root: Path | None = field(default=None, compare=False, metadata=json_omit())
    """The run folder ``path`` is opened beneath (``None``: the folder the file resolves into)."""

    @property
    def numel(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def file(self) -> str:
        """The file's name (reports never show the full path of a run's file)."""
        return self.path.name


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
    histogram: ErrorHistogram | None = field(default=None, compare=False, repr=False, metadata=json_omit())
    samples: tuple[tuple[float, ...], tuple[float, ...]] | None = field(
        default=None, compare=False, repr=False, metadata=json_omit()
    )
    """(baseline values, candidate values) at evenly strided positions, for scatter plots."""

    @property
    def outside_share(self) -> float:
        """Share of elements beyond the elementwise tolerance."""
        return self.outside / self.numel if self.numel else 0.0

    @property
    def within_elementwise(self) -> bool:
        """Every element within the elementwise tolerance (``assert_close`` would pass)."""
        return self.outside == 0

    @property
    def new_nonfinite(self) -> bool:
        """The candidate has more NaN or more Inf than the baseline."""
        return self.nan_candidate > self.nan_baseline or self.inf_candidate > self.inf_baseline


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How one tensor is judged. Built by ``ad_diff.kinds.tensors.tolerance.resolve``."""

    atol: float
    rtol: float
    statistic: str = "auto"
    """``auto``, ``elementwise``, ``max``, ``mean``, ``quantile``, ``rmse`` or ``reference``."""
    quantile: float | None = None
    """For ``statistic == "quantile"``: the quantile in 0..1 (``p99`` -> 0.99)."""
    nrmse: float = 0.0
    """Budget on normalised RMSE for ``rmse`` (and ``auto`` without a reference)."""
    ref_ratio: float = 2.0
    """Reference mode: the candidate may be at most this many times further from the reference."""
    row_ratio: float = 4.0
    """Rows, with a reference: outlier beyond this many times the same baseline row's error (0: off)."""
    row_spread: float = 4.0
    """Rows, without a reference: outlier beyond this many times the median row's normalised error
    (0: off)."""
    row_outside: float = 0.5
    """Rows, without a reference: outlier with more than this share beyond tolerance while the median row has
    none."""
    source: str = "default"
    """Where the values came from: ``default:BF16`` or the matching pattern(s)."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict on one tensor's measurements, with the evidence that decided it."""

    within: bool
    statistic: str
    """The statistic actually used (``auto`` resolved to ``reference`` or ``rmse``)."""
    value: float
    limit: float
    reason: str
    """One sentence: what was compared with what."""


@dataclass(frozen=True, slots=True)
class TensorComparison:
    """One tensor present in both runs, measured and judged."""

    name: str
    kind: TensorKind
    """``output`` or ``node``."""
    baseline: TensorRecord
    candidate: TensorRecord
    reference: TensorRecord | None
    tolerance: Tolerance
    stats: TensorStats | None
    """``None`` when shapes differ (nothing can be compared element by element)."""
    judgement: Judgement | None
    verdict: TensorVerdict
    """Decided by the tolerance module from stats and judgement; reports only show it."""
    mismatch: Mismatch | None = None
    """``shape`` or ``dtype`` when the two records disagree on it."""
    shape_note: str | None = None
    """How a shape change that a transform explains was compared (e.g. the last position only)."""

    @property
    def passed(self) -> bool:
        """The verdict is identical or acceptable drift."""
        return self.verdict.passed


@dataclass(frozen=True, slots=True)
class Unmatched:
    """A tensor recorded in one run only."""

    name: str
    kind: TensorKind
    present_in: RunId
    """``baseline`` or ``candidate``."""
    reason: str


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A tensor file that could not be read (garbage, truncated, unsafe pickle); the rest still stands."""

    run: RunId
    path: Path
    message: str


@dataclass(frozen=True, slots=True)
class UntrustedReference:
    """A reference that may not judge the candidate: only the candidate supplied it, or the runs' differ."""

    name: str
    why: str
    """``candidate_only`` or ``differs``."""


@dataclass(frozen=True, slots=True)
class NodeDrift:
    """Per-node captures judged beyond tolerance, and the first of them when the runs give a graph order."""

    node: str | None
    """The earliest drifting node in graph order; ``None`` when no graph order covers the drifting nodes
    (then no node is named: name order says nothing about where drift starts)."""
    position: int
    """0-based index in the graph order (-1 when ``node`` is ``None``)."""
    transform: str | None
    """The transform that introduced the node, when graph dumps show it."""
    drifting_nodes: int
    """How many node captures drift beyond tolerance in total."""
    order_source: str | None = None
    """Where the graph order came from (``baseline final graph dump 012_compile_compile_model.txt``), or
    ``None`` when the runs provide none."""


@dataclass(frozen=True, slots=True)
class TensorAnalysis:
    """Everything the tensor comparison measured; the ``tensors`` section of ``DiffResult``.

    Measurements only: :func:`ad_diff.kinds.tensors.rules.classify` draws the findings from it.
    """

    comparisons: tuple[TensorComparison, ...]
    unmatched: tuple[Unmatched, ...]
    unreadable: tuple[Unreadable, ...]
    first_drift: NodeDrift | None = None
    device: str = "cpu"
    notes: tuple[str, ...] = ()
    """Sentences about the inputs (e.g. reference missing, plots unavailable)."""
    input_problems: tuple[str, ...] = field(default=(), metadata=json_omit())
    """How the runs' recorded inputs differ (names, shapes, values); empty when they agree."""
    rows_origin: str | None = None
    """The first node capture (graph order) whose outlier rows are an output's outlier rows: where the bad
    rows appear. ``None`` without per-node captures or graph order."""
    untrusted_references: tuple[UntrustedReference, ...] = ()
    """References not used (see :func:`ad_diff.kinds.tensors.analysis.trusted_references`)."""
    reference_source: str | None = None
    """Where the judging references came from: ``baseline``, ``both runs`` or the ``--reference`` folder."""
    causes: tuple[Any, ...] = ()
    """The drift's likely causes, best first (``ad_diff.kinds.tensors.causes.DriftCause``; set by the explain
    pass when a tensor drifts)."""


def times(score: float) -> str:
    """``16.2x``, or ``all of the difference`` when the median row has none (an infinite ratio)."""
    return "all of the difference (the median row has none)" if math.isinf(score) else f"{score:.3g}x"
