"""Frozen dataclasses of the tensor comparison: what was recorded, what was measured, how it was judged.

Flow: ``parsers.tensors`` -> :class:`TensorRecord`; ``measure.tensors`` -> :class:`TensorStats` (numbers
only); ``tolerance`` -> :class:`Judgement`; ``tensor_analysis`` bundles them into :class:`TensorAnalysis`.
No torch import here: these objects are plain data so reports and JSON never need torch.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ad_diff.core.model import Finding


@dataclass(frozen=True, slots=True)
class TensorRecord:
    """One recorded tensor, located but not loaded."""

    name: str
    """Key in the file: an output name (``logits``) or a graph node name for per-node captures."""
    path: Path
    fmt: str
    """``safetensors`` or ``pt``."""
    dtype: str
    """Short dtype name as in safetensors: ``BF16``, ``F16``, ``F32``, ``F64``, ``I64``, ``BOOL`` ..."""
    shape: tuple[int, ...]
    data_offset: int | None = None
    """Absolute byte offset of the data in a safetensors file (``None`` for ``.pt``)."""
    kind: str = "output"
    """``output``, ``node`` (per-node capture) or ``reference`` (higher-precision reference output)."""

    @property
    def numel(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)


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
class TensorStats:
    """Measurements of candidate against baseline for one tensor. No verdict, except the truthiness.

    Truthy like Polygraphy's ``OutputCompareResult``: ``bool(stats)`` is the elementwise
    ``torch.testing.assert_close`` outcome (every element within ``atol + rtol * |baseline|``, NaN equal to
    NaN). The judgement that ad-diff gates on is separate (:class:`Judgement`).
    """

    numel: int
    compared: int
    """Elements finite in both runs (the statistics below are over these)."""
    max_abs: float
    mean_abs: float
    max_rel: float
    mean_rel: float
    rmse: float
    nrmse: float
    """RMSE divided by the baseline's RMS value (scale-free; 0 when both are 0)."""
    cosine: float
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
    histogram: ErrorHistogram | None = field(default=None, compare=False, repr=False)
    samples: tuple[tuple[float, ...], tuple[float, ...]] | None = field(default=None, compare=False, repr=False)
    """(baseline values, candidate values) at evenly strided positions, for scatter plots."""

    @property
    def outside_share(self) -> float:
        """Share of elements beyond the elementwise tolerance."""
        return self.outside / self.numel if self.numel else 0.0

    @property
    def new_nonfinite(self) -> bool:
        """The candidate has more NaN or more Inf than the baseline."""
        return self.nan_candidate > self.nan_baseline or self.inf_candidate > self.inf_baseline

    def __bool__(self) -> bool:
        return self.outside == 0

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON dict (histogram and samples left out; non-finite floats as strings)."""
        d = {k: v for k, v in asdict(self).items() if k not in ("histogram", "samples")}
        d["outside_share"] = self.outside_share
        return _json_safe(d)


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How one tensor is judged. Built by ``ad_diff.tolerance.resolve``."""

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

    def __bool__(self) -> bool:
        return self.within


@dataclass(frozen=True, slots=True)
class TensorComparison:
    """One tensor present in both runs, measured and judged."""

    name: str
    kind: str
    """``output`` or ``node``."""
    baseline: TensorRecord
    candidate: TensorRecord
    reference: TensorRecord | None
    tolerance: Tolerance
    stats: TensorStats | None
    """``None`` when shapes differ (nothing can be compared element by element)."""
    judgement: Judgement | None
    mismatch: str | None = None
    """``shape`` or ``dtype`` when the two records disagree on it."""

    def __bool__(self) -> bool:
        return self.judgement is not None and self.judgement.within

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON dict."""
        return _json_safe(
            {
                "name": self.name,
                "kind": self.kind,
                "baseline": _record_json(self.baseline),
                "candidate": _record_json(self.candidate),
                "reference": _record_json(self.reference) if self.reference else None,
                "tolerance": asdict(self.tolerance),
                "stats": self.stats.to_json() if self.stats else None,
                "judgement": asdict(self.judgement) if self.judgement else None,
                "mismatch": self.mismatch,
            }
        )


@dataclass(frozen=True, slots=True)
class Unmatched:
    """A tensor recorded in one run only."""

    name: str
    kind: str
    present_in: str
    """``baseline`` or ``candidate``."""
    reason: str


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A tensor file that could not be read (garbage, truncated, unsafe pickle); the rest still stands."""

    run: str
    path: Path
    message: str


@dataclass(frozen=True, slots=True)
class NodeDrift:
    """The first per-node capture (in graph order) judged beyond tolerance."""

    node: str
    position: int
    """0-based index in the graph order given to the analysis."""
    transform: str | None
    """The transform that introduced the node, when graph dumps show it."""
    drifting_nodes: int
    """How many node captures drift beyond tolerance in total."""


@dataclass(frozen=True, slots=True)
class TensorAnalysis:
    """Everything the tensor comparison produced; the ``tensors`` section of ``DiffResult``."""

    comparisons: tuple[TensorComparison, ...]
    unmatched: tuple[Unmatched, ...]
    unreadable: tuple[Unreadable, ...]
    findings: tuple[Finding, ...]
    first_drift: NodeDrift | None = None
    device: str = "cpu"
    notes: tuple[str, ...] = ()
    """Sentences about the inputs (e.g. reference missing, plots unavailable)."""

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON dict for the JSON report."""
        return _json_safe(
            {
                "comparisons": [c.to_json() for c in self.comparisons],
                "unmatched": [asdict(u) for u in self.unmatched],
                "unreadable": [{"run": u.run, "path": str(u.path), "message": u.message} for u in self.unreadable],
                "first_drift": asdict(self.first_drift) if self.first_drift else None,
                "device": self.device,
                "notes": list(self.notes),
            }
        )


def _record_json(r: TensorRecord) -> dict[str, Any]:
    return {"name": r.name, "file": r.path.name, "format": r.fmt, "dtype": r.dtype, "shape": list(r.shape)}


def _json_safe(obj: Any) -> Any:
    """Make ``obj`` strict-JSON safe: NaN/Inf floats become strings, tuples lists, paths strings."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    return obj
