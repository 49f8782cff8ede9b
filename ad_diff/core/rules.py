"""Rule: a finding kind with a stable code, a category, a default severity and a message template.

Every rule lives in one ordered tuple (``ad_diff.classify.catalog.RULES``) and is documented in
``docs/rules.md``; a test keeps the two in sync. Rules only *describe* findings; the code that detects them
lives beside the data it reads (log, graph, tensor or config classification) and calls :meth:`Rule.make`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ad_diff.core.model import Finding, Severity

#: Fixed category names that reports, configs and users rely on.
CATEGORIES: tuple[str, ...] = (
    "match_loss",
    "metadata_loss",
    "numeric_drift",
    "incomplete_run",
    "state_change",
    "structure_change",
    "consistency",
    "config",
    "input",
    "improvement",
)


@dataclass(frozen=True)
class Rule:
    """One finding kind. ``template`` is formatted with the keyword arguments given to :meth:`make`."""

    code: str
    name: str
    category: str
    severity: Severity
    template: str
    doc: str
    """One paragraph for docs/rules.md: when it fires and what to do about it."""

    def make(
        self,
        *,
        transform: str | None = None,
        stage: str | None = None,
        node: str | None = None,
        tensor: str | None = None,
        collapse: bool = False,
        severity: Severity | None = None,
        evidence: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Finding:
        """Build a :class:`Finding` of this rule; ``fields`` fill the message template."""
        return Finding(
            code=self.code,
            category=self.category,
            severity=severity or self.severity,
            message=self.template.format(transform=transform, stage=stage, node=node, tensor=tensor, **fields),
            transform=transform,
            stage=stage,
            node=node,
            tensor=tensor,
            collapse=collapse,
            evidence=tuple(sorted((evidence or {}).items())),
        )
