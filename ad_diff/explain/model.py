"""Causal groups: findings under the root cause they follow from (built by ``ad_diff.explain.groups``).

A group is headed by its root cause: the first transform, in pipeline order, where the difference appears,
and what happened there (metadata lost, op form changed, the transform failed or was disabled, the exported
graph differs, a config key changed, drift first seen at a tensor). Its ``root`` findings are the evidence at
that place; its ``consequences`` are what follows downstream (count changes, cascades, structure changes,
propagated drift). Every finding of a result belongs to exactly one group.
"""

from __future__ import annotations

from dataclasses import dataclass

from ad_diff.core.model import Category, Finding, Severity
from ad_diff.core.words import WordEnum


class CauseKind(WordEnum):
    """What the root cause of a group is. The value is the JSON ``groups[].cause``."""

    INCOMPLETE_RUN = "incomplete_run"
    """A run stopped early (crash, kill, truncation): what it never reached is not compared."""
    TRANSFORM_FAILED = "transform_failed"
    """The transform raised an error (``Transform <t> failed``) in the candidate."""
    TRANSFORM_DISABLED = "transform_disabled"
    """A transform that matched in the baseline is disabled in the candidate."""
    TRANSFORM_STOPPED = "transform_stopped"
    """A transform that matched in the baseline is skipped or missing in the candidate."""
    METADATA_LOST = "metadata_lost"
    """Nodes lost shape/dtype metadata at this transform."""
    OP_FORM_CHANGED = "op_form_changed"
    """This transform wrote a different op form than in the baseline, which later matchers do not know."""
    GRAPH_DIFFERS = "graph_differs"
    """The exported graph itself differs (the model, not a transform, changed)."""
    CONFIG_CHANGED = "config_changed"
    """A config key of this transform changed between the runs."""
    MATCH_LOST = "match_lost"
    """The transform matched less and no upstream difference explains it: the change is in the transform."""
    NUMERIC_DRIFT = "numeric_drift"
    """Recorded tensors drift beyond tolerance (first at a node, when per-node captures locate it)."""
    INPUT = "input"
    """An input is missing, one-sided or unreadable (or the runs recorded different inputs)."""
    IMPROVEMENT = "improvement"
    """The transform matches more (or newly runs and matches): usually the point of the change."""
    DUMPS_OF_ANOTHER_RUN = "dumps_of_another_run"
    """A run's graph dumps are not its log's or its config's (left over from another run or model)."""
    WORLD_SIZE_CHANGED = "world_size_changed"
    """The runs ran on different world sizes: the sharding stage's counts and the shapes it slices follow."""
    OTHER = "other"
    """A finding that stands on its own (consistency notes, config checks, state changes)."""
    STALE_EXPECTATION = "stale_expectation"
    """An entry of the expected-changes file acknowledged nothing: the file wants pruning. Not a cause of
    anything in the runs; reports list it apart from the root causes."""


TitlePart = tuple[str, bool]
"""A piece of a title: its text, and whether reports show it as code (a transform, node or tensor name)."""


@dataclass(frozen=True)
class CauseGroup:
    """One root cause and everything that follows from it."""

    id: int
    """1-based position in ``DiffResult.groups`` (the order every report uses); findings carry it
    (``group``)."""
    cause: CauseKind
    title_parts: tuple[TitlePart, ...]
    """The root cause in a few words; see :attr:`title`."""
    evidence: str
    """One line saying what shows the cause (plain text; backticks mark op names)."""
    transform: str | None = None
    stage: str | None = None
    position: int | None = None
    """Index of the root transform in the per-transform comparison (pipeline order); None at run level."""
    root: tuple[Finding, ...] = ()
    """The findings at the root cause (its evidence), the one the title comes from first."""
    consequences: tuple[Finding, ...] = ()
    """The findings that follow from it, in pipeline order."""

    @property
    def title(self) -> str:
        """The root cause as plain text: ``metadata lost at match_rope_pattern``."""
        return "".join(text for text, _ in self.title_parts)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Root findings, then consequences."""
        return self.root + self.consequences

    @property
    def severity(self) -> Severity:
        """The worst severity of its findings."""
        sev = {f.severity for f in self.findings}
        return next((s for s in (Severity.ERROR, Severity.WARNING) if s in sev), Severity.INFO)

    @property
    def settled(self) -> bool:
        """Every error or warning of the group is acknowledged (expected changes) or explained by config, and
        there is at least one."""
        problems = [f for f in self.findings if f.severity is not Severity.INFO]
        return bool(problems) and all(not f.gating for f in problems)

    def consequence_counts(self) -> dict[Category, int]:
        """Error consequences per category, in category order (what a headline's ``->`` part counts); an
        acknowledged one is no loss."""
        counts: dict[Category, int] = {}
        for c in Category:
            n = sum(1 for f in self.consequences
                    if f.category is c and f.severity is Severity.ERROR and not f.acknowledged)
            if n:
                counts[c] = n
        return counts


__all__ = ["CauseGroup", "CauseKind", "TitlePart"]
