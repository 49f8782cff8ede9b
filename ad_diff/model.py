"""Frozen dataclasses that flow between the pipeline stages (discover -> parse -> align -> measure ->
classify -> report -> gate).

Only the core models live here (run artifacts, log records, per-transform comparison, findings and the
overall result). Domain models for graph dumps, tensors and configs live beside their parsers
(``ad_diff.graph_model``, ``ad_diff.tensor_model``, ``ad_diff.config_model``) and are carried in
``DiffResult`` as optional sections, so a log-only comparison never imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, NewType

RunId = NewType("RunId", str)
"""``"baseline"`` or ``"candidate"``."""

NodeName = NewType("NodeName", str)
"""An FX node name as written in a dump (``linear_3``)."""

BASELINE = RunId("baseline")
CANDIDATE = RunId("candidate")

#: AD ``Stages`` enum values, in execution order of the newest known version (FORMATS.md 1.2).
#: ``visualize`` moved around between versions; pipeline order is always taken from the log itself.
STAGES: tuple[str, ...] = (
    "factory",
    "export",
    "post_export",
    "pattern_matcher",
    "sharding",
    "weight_load",
    "post_load_fusion",
    "cache_init",
    "visualize",
    "compile",
    "export_onnx",
)


class State(str, Enum):
    """What happened to one transform in one run."""

    APPLIED = "applied"
    """Ran; ``matches`` holds the count (may be 0)."""
    SKIPPED = "skipped"
    """Enabled but the transform reported ``skipped`` (nothing to do / precondition unmet)."""
    DISABLED = "disabled"
    """Disabled by configuration."""
    FAILED = "failed"
    """Raised an error that ``skip_on_error`` swallowed (``Transform <t> failed: ...``)."""
    INCOMPLETE = "incomplete"
    """Started (cleanup/apply lines seen) but its result line never came: the run stopped inside it."""
    ABSENT = "absent"
    """Not seen in this run's log at all (it appears in the other run only)."""


@dataclass(frozen=True, slots=True)
class Timing:
    """Seconds spent by one transform, as logged (V2 ``elapsed time`` or V3 ``[SUMMARY] ... time``)."""

    total: float
    pre: float
    apply: float
    post: float


@dataclass(frozen=True, slots=True)
class TransformRecord:
    """One transform's result as parsed from one rank of one log."""

    stage: str
    transform: str
    occurrence: int
    """0 for the first time ``(stage, transform)`` appears in the pipeline, 1 for a repeat, ..."""
    state: State
    matches: int | None
    """Match count for ``applied``; ``None`` when the transform did not report one."""
    line: int
    """1-based line number of the result line (or of the last line seen for ``incomplete``)."""
    timing: Timing | None = None
    failure: str | None = None
    """The exception text of a ``failed`` transform."""
    flags: tuple[tuple[str, str], ...] = ()
    """Extra key/values of the result line (``is_clean``, ``has_valid_shapes``, ``enabled`` ...)."""


class LogEnd(str, Enum):
    """How a log ended, which decides whether its transforms can be trusted to be complete."""

    COMPLETE = "complete"
    """The last transform finished and nothing suggests a crash."""
    CRASHED = "crashed"
    """A Python traceback or fatal error follows the last transform result."""
    TRUNCATED = "truncated"
    """The log stops inside a transform or mid-line."""
    EMPTY = "empty"
    """The log holds no AutoDeploy transform line at all."""


@dataclass(frozen=True, slots=True)
class LogIssue:
    """Something the log parser noticed but could not (or should not) turn into a record."""

    line: int
    kind: str
    """``unrecognised`` (looked like an AD transform line but matched no known format), ``traceback``,
    ``fatal``, ``retry`` (a second pipeline started), ``rank_disagreement`` ..."""
    text: str


@dataclass(frozen=True, slots=True)
class RunLog:
    """Everything ad-diff knows about one run's log."""

    path: Path
    transforms: tuple[TransformRecord, ...]
    """Records of the selected rank, in pipeline (log) order."""
    rank: int | None
    """The rank whose lines were used (``None`` when lines carry no rank tag)."""
    ranks_seen: tuple[int, ...]
    rank_disagreement: tuple[str, ...]
    """Transforms whose state or count differs between ranks (``stage/transform``), empty if none."""
    formats: tuple[str, ...]
    """Message formats seen: ``V0``..``V3``."""
    prefixes: tuple[str, ...]
    """Line prefixes seen: ``L1`` (TRT-LLM logger), ``L2``/``L3`` (standalone), ``bare``."""
    end: LogEnd
    end_detail: str
    """Human sentence explaining ``end`` (e.g. the traceback's last line)."""
    issues: tuple[LogIssue, ...] = ()
    pipelines: int = 1
    """How many pipeline starts were seen (``>1`` means a retry in the same log; the last one is used)."""
    lines: int = 0
    anonymous: int = 0
    """Result lines that named no transform (the L2 logger drops the ``[stage=..., transform=...]`` prefix);
    their records are named ``#<n>`` until :func:`ad_diff.parsers.log.attribute` names them from dumps."""


@dataclass(frozen=True, slots=True)
class RunArtifacts:
    """What discovery found in one run folder (paths only; nothing parsed yet)."""

    run_id: RunId
    root: Path
    log: Path | None
    graphs: Path | None
    tensors: Path | None
    configs: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()
    """Human sentences about what was found or missing."""


@dataclass(frozen=True, slots=True)
class Side:
    """One transform's result in one run, as shown in reports."""

    state: State
    matches: int | None
    timing: Timing | None = None
    failure: str | None = None
    stage: str | None = None
    """The stage this run ran the transform in (differs between runs when a config moved it)."""


@dataclass(frozen=True, slots=True)
class TransformComparison:
    """One row of the per-transform table: the same transform in both runs."""

    stage: str
    transform: str
    occurrence: int
    baseline: Side
    candidate: Side

    @property
    def changed(self) -> bool:
        """True if the state or the match count differs."""
        return (self.baseline.state, self.baseline.matches) != (self.candidate.state, self.candidate.matches)

    @property
    def delta(self) -> int | None:
        """Candidate minus baseline matches, when both are known."""
        if self.baseline.matches is None or self.candidate.matches is None:
            return None
        return self.candidate.matches - self.baseline.matches


class Severity(str, Enum):
    """How bad a finding is. Only ``error`` findings can fail the gate."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Finding:
    """One classified difference. ``code`` is stable and documented in ``docs/rules.md``."""

    code: str
    category: str
    """``match_loss``, ``metadata_loss``, ``numeric_drift``, ``state_change``, ``incomplete_run`` ..."""
    severity: Severity
    message: str
    transform: str | None = None
    stage: str | None = None
    node: str | None = None
    tensor: str | None = None
    collapse: bool = False
    """True for a match loss to zero or by at least the collapse fraction."""
    evidence: tuple[tuple[str, Any], ...] = ()
    """Small key/value facts behind the finding (counts, coverage, linked causes)."""
    acknowledged: str | None = None
    """Reason from the expected-changes file, when this finding was acknowledged there."""
    explained_by: str | None = None
    """A config change that explains the finding, when one was found."""
    gating: bool = True
    """Whether this finding may fail the gate at all (acknowledged/explained ones may not)."""

    def sort_key(self) -> tuple[Any, ...]:
        """Deterministic order: severity, then category, code, stage/transform, node, tensor."""
        order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
        return (
            order[self.severity],
            self.code,
            self.transform or "",
            self.node or "",
            self.tensor or "",
            self.message,
        )


@dataclass(frozen=True, slots=True)
class DiffResult:
    """The outcome of one baseline/candidate comparison, before any rendering or gating."""

    baseline: RunArtifacts
    candidate: RunArtifacts
    baseline_log: RunLog | None
    candidate_log: RunLog | None
    transforms: tuple[TransformComparison, ...]
    findings: tuple[Finding, ...]
    sections: dict[str, Any] = field(default_factory=dict)
    """Optional analyses keyed by name (``graph``, ``tensors``, ``config``), each a frozen dataclass with a
    ``to_json()`` method. Absent keys mean the analysis was not run (no data or not asked for)."""
    notes: tuple[str, ...] = ()
    """Sentences about the inputs (what was found, what was skipped) shown in every report."""
    render_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Extra keyword arguments per section renderer, set by the CLI (e.g. where plots were written)."""
