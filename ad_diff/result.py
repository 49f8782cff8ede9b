"""The outcome of one comparison (``DiffResult``), before rendering and gating."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from ad_diff.core.model import Finding, TransformComparison
from ad_diff.discover import RunArtifacts
from ad_diff.kinds.base import SectionKey
from ad_diff.kinds.log.model import RunLog

S = TypeVar("S")


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
    """Each kind's section by its key name; read it typed with :meth:`section`. An absent key means that
    kind was not compared (no data, disabled, or unreadable: the notes and findings say which)."""
    notes: tuple[str, ...] = ()
    """Sentences about the inputs (what was found, what was skipped) shown in every report."""
    render_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Extra keyword arguments per section renderer, set by the CLI (e.g. where plots were written)."""

    def section(self, key: SectionKey[S]) -> S | None:
        """The section of one kind, typed (``result.section(GRAPH)`` is a ``GraphAnalysis | None``)."""
        got: S | None = self.sections.get(key.name)
        return got
