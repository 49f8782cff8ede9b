"""The outcome of one comparison (``DiffResult``), before rendering and gating."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ad_diff.core.model import Finding, TransformComparison
from ad_diff.discover import RunArtifacts
from ad_diff.kinds.log.model import RunLog


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
