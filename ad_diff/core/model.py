"""The shared vocabulary of every stage: run ids, transform states and rows, severities and findings.

Kind-specific models live in their kind's folder (``ad_diff.kinds.<kind>.model``); the overall result is in
``ad_diff.result``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NewType

from ad_diff.core.strwalk import UNRENDERED
from ad_diff.core.words import WordEnum

RunId = NewType("RunId", str)
"""``"baseline"`` or ``"candidate"``."""

NodeName = NewType("NodeName", str)
"""An FX node name as written in a dump (``linear_3``)."""

BASELINE = RunId("baseline")
CANDIDATE = RunId("candidate")
RUNS: tuple[RunId, RunId] = (BASELINE, CANDIDATE)
"""Both runs, baseline first (the order every report uses)."""


def other_run(run: str) -> RunId:
    """The run that is not ``run``."""
    return CANDIDATE if run == BASELINE else BASELINE

#: AD ``Stages`` enum values, in execution order of the newest known version (docs/formats.md).
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
    RESTORED = "restored"
    """Not run: the run restored a cached graph from after this transform (AD's pipeline cache at a later
    boundary, or the graph cache of ``AD_ENABLE_CACHING``), so its result is the cache's. Restored, not
    compared (never a loss); the run's :class:`~ad_diff.core.runlog.Restore` says from which cache."""
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
    said: tuple[tuple[str, int], ...] = field(default=(), metadata=UNRENDERED)
    """What the transform logged that no reader of ad-diff claims (``info Applied 4 TP shards``: the level
    word, a space and the message, without logger prefix or ``[APPLY]`` context) with how often, sorted.
    Only lines at info level and above: verbosity is how a run printed, not what it did. Read by the
    accounting only (a line shown in a report is a finding's own copy): no output pass walks it."""


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
class RankSides:
    """The same transform on another rank than the row's, where its state or count differs there."""

    rank: int | None
    baseline: Side
    candidate: Side


@dataclass(frozen=True, slots=True)
class TransformComparison:
    """One row of the per-transform table: the same transform in both runs."""

    stage: str
    transform: str
    occurrence: int
    baseline: Side
    candidate: Side
    elsewhere: tuple[RankSides, ...] = ()
    """The other ranks compared on which this transform's state or count differs (the row's sides are the
    primary rank's): a report that says a transform is unchanged says it of every rank."""

    @property
    def changed(self) -> bool:
        """True if the state or the match count differs (on the row's own rank)."""
        return (self.baseline.state, self.baseline.matches) != (self.candidate.state, self.candidate.matches)

    @property
    def changed_anywhere(self) -> bool:
        """True if the state or the match count differs on any rank compared."""
        return self.changed or bool(self.elsewhere)

    @property
    def delta(self) -> int | None:
        """Candidate minus baseline matches, when both are known."""
        if self.baseline.matches is None or self.candidate.matches is None:
            return None
        return self.candidate.matches - self.baseline.matches


class Category(WordEnum):
    """What a finding is about. Each category means exactly one thing (docs/rules.md lists them)."""

    MATCH_LOSS = "match_loss"
    """A transform matched fewer times in the candidate (or stopped running where it matched)."""
    METADATA_LOSS = "metadata_loss"
    """Shape/dtype metadata the baseline had and the candidate lacks. Nothing else."""
    SHAPE_CHANGE = "shape_change"
    """A node confidently aligned across the runs (same node by structure, not just by name) has another
    concrete shape or dtype in the candidate, both known. Nothing is missing, so it is not metadata loss."""
    NUMERIC_DRIFT = "numeric_drift"
    """Recorded tensors differ beyond tolerance (or cannot be compared value by value)."""
    INCOMPLETE_RUN = "incomplete_run"
    """A run stopped early or its artifacts are cut short: what it never reached cannot be compared."""
    STATE_CHANGE = "state_change"
    """A transform's state changed (disabled, failed, added, moved) without losing matches."""
    STRUCTURE_CHANGE = "structure_change"
    """The graphs differ in structure (rewritten regions, first divergence)."""
    CONSISTENCY = "consistency"
    """A run disagrees with itself (ranks, log vs dumps, restarts)."""
    CONFIG = "config"
    """The runs' AD configs differ or do not match what the run did."""
    INPUT = "input"
    """The inputs themselves: missing, unreadable or one-sided artifacts."""
    IMPROVEMENT = "improvement"
    """More matches than the baseline: usually the point of the change."""
    UNACCOUNTED = "unaccounted"
    """A difference between the runs that no finding accounts for and no noise rule absorbs
    (``ad_diff.explain.accounting``)."""
    EXPECTED_CHANGES = "expected_changes"
    """The expected-changes file itself (``--expected``): an entry that acknowledged nothing. About the
    file, not the runs: never a root cause, never an input problem."""


class Severity(str, Enum):
    """How bad a finding is. Only ``error`` findings can fail the gate."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Finding:
    """One classified difference. ``code`` is stable and documented in ``docs/rules.md``."""

    code: str
    category: Category
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
    group: int | None = None
    """Id of the causal group (``DiffResult.groups``) the explain pass put this finding in."""

    @property
    def explanation(self) -> str:
        """``explained by config: ...`` (or by what else explained it: evidence ``explained_kind``); empty
        when nothing explains the finding."""
        if not self.explained_by:
            return ""
        kind = dict(self.evidence).get("explained_kind") or "config"
        return f"explained by {kind}: {self.explained_by}"

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
