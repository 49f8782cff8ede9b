"""Frozen dataclasses of the tensor comparison: what was recorded, what was measured, how it was judged.

The measured figures (:class:`TensorStats` and its parts) live in :mod:`.figures`; this module names them
too, so that a caller imports the whole model from one place.

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
from ad_diff.core.words import WordEnum
from ad_diff.kinds.tensors.figures import ErrorHistogram as ErrorHistogram
from ad_diff.kinds.tensors.figures import ReferenceStats as ReferenceStats
from ad_diff.kinds.tensors.figures import RowFigure as RowFigure
from ad_diff.kinds.tensors.figures import RowLimits as RowLimits
from ad_diff.kinds.tensors.figures import RowStats as RowStats
from ad_diff.kinds.tensors.figures import TensorStats as TensorStats
from ad_diff.kinds.tensors.figures import times as times


class TensorKind(WordEnum):
    """What a recorded tensor is, by where it was found in ``tensors/``."""

    OUTPUT = "output"
    """An output of the model (``logits``), keyed by output name."""
    NODE = "node"
    """A per-node capture (``nodes*`` files), keyed by graph node name."""
    REFERENCE = "reference"
    """A higher-precision reference output (``reference/``)."""
    INPUT = "input"
    """An input the outputs were produced from (``inputs*`` files)."""


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
    ROUTED = "judged by routing"
    """A capture between a router and its MoE op (softmax, top-k, routing weights): a function of the router
    logits, judged by its layer's routing analysis (experts compared as sets, flips against the noise)."""

    @property
    def passed(self) -> bool:
        """True for the verdicts that are not drift (a routed capture's verdict is its layer's finding)."""
        return self in (TensorVerdict.IDENTICAL, TensorVerdict.ACCEPTABLE, TensorVerdict.ROUTED)


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
    routed_rows: tuple[tuple[int, ...], ...] = ()
    """Rows left out of the judgement: tokens whose experts changed at a near tie upstream (their rows move by
    a routing flip, not by drift); the rest of the tensor was judged as usual."""

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

    Measurements only: :func:`ad_diff.kinds.tensors.classify.classify` draws the findings from it.
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
    inputs_differing: tuple[str, ...] = field(default=(), metadata=json_omit())
    """The names of the inputs :attr:`input_problems` is about."""
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
    unchecked: tuple[str, ...] = ()
    """Evidence the cause search could not compare (``graph dumps``, ``config``): said once, never as a
    cause."""
    routing: tuple[LayerRouting, ...] = ()
    """Each MoE layer's routing, compared from its router's captures (:mod:`.routing`)."""
    moe_layers: int = 0
    """MoE ops in the baseline's final graph (0: not a MoE model, or no graph dumps)."""


@dataclass(frozen=True, slots=True)
class RoutingFlip:
    """A token whose set of experts changed between the runs at one MoE layer."""

    token: tuple[int, ...]
    """Its index: ``[batch, position]`` when the runs' inputs give the layout, else the flat token."""
    before: tuple[int, ...]
    """The baseline's experts (sorted)."""
    after: tuple[int, ...]
    margin: float
    """The gap the change had to cross in the baseline's scores: how far the lowest expert taken in sat below
    the k-th score, or the highest expert dropped above the (k+1)-th (0 at an exact tie)."""
    limit: float
    """The largest margin noise explains for this token
    (:func:`ad_diff.kinds.tensors.routing.near_tie_limit`)."""

    @property
    def near_tie(self) -> bool:
        """The margin is within what the measured noise moves (see docs/rules.md, ADT014)."""
        return self.margin <= self.limit


@dataclass(frozen=True, slots=True)
class LayerRouting:
    """One MoE layer's routing in both runs: which tokens changed experts and whether noise explains it."""

    layer: int
    op: str
    """The MoE op's node."""
    router: str
    """The router logits' node."""
    k: int | None
    scheme: str
    """What ranks the experts (``softmax``, ``sigmoid``, ``logits``, a fused routing op)."""
    tokens: int
    chosen_from: str
    """Where each run's experts come from: the captured choice (``getitem_1``) or the router logits' top-k."""
    noise: float = 0.0
    """The router logits' run-to-run noise: RMS over tokens of how far any two experts' gap moved."""
    flips: tuple[RoutingFlip, ...] = ()
    """Up to :data:`ad_diff.kinds.tensors.routing.MAX_LISTED` flips, clear ones first, then by token."""
    near_ties: int = 0
    clear: int = 0
    router_passed: bool | None = None
    """The router logits' own comparison passed (``None``: not captured in both runs)."""
    router_reason: str = ""
    note: str | None = None
    """Why the layer's routing was not judged (``None``: it was)."""

    @property
    def judged(self) -> bool:
        """The routing was compared and judged."""
        return self.note is None

    @property
    def regression(self) -> bool:
        """A clear-margin flip, or router logits beyond tolerance: a routing regression (gates)."""
        return self.judged and (self.clear > 0 or self.router_passed is False)
