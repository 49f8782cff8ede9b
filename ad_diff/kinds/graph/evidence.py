"""The explain stage of the graph kind: what the dumps measured, attached to the findings it explains.

* root-cause hints (``root_cause``) on the match losses the dumps explain;
* the rewritten regions that first appear at a transform whose log row changed (``graph_regions``) on that
  transform's log findings: a region where the match count changed is the expected effect of that change,
  evidence for it, not a finding of its own (``classify`` raises ADG005 only for the others).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ad_diff.core.jsonable import to_jsonable
from ad_diff.core.model import Category, Finding
from ad_diff.kinds.graph.diff import GraphAnalysis, Hint, TransformGraphDiff

MAX_REGIONS = 10
"""Regions listed per finding (the graph section of the JSON report has them all)."""
MAX_NODES = 20
"""Node names listed per region side."""
LOG_PREFIX = "ADL"
"""Codes of the log's findings: the ones the graph evidence attaches to."""


def hints_for_match_loss(
    analysis: GraphAnalysis, stage: str, transform: str, occurrence: int = 0
) -> list[Hint]:
    """Root-cause hints the dumps give for a match loss at ``transform`` (empty when the dumps show none)."""
    d = _at(analysis, stage, transform, occurrence)
    return list(d.hints) if d is not None else []


def _at(analysis: GraphAnalysis, stage: str, transform: str, occurrence: int) -> TransformGraphDiff | None:
    return next((d for d in analysis.transforms
                 if d.transform == transform and d.occurrence == occurrence and d.stage == stage), None)


def regions_evidence(d: TransformGraphDiff) -> dict[str, Any] | None:
    """The regions first seen at ``d`` as finding evidence (``None`` when none appear there)."""
    new = [r for r in d.regions if r.new]
    if not new:
        return None
    return {"count": len(new), "items": [
        {"id": r.id, "kind": r.kind.value, "baseline": list(r.baseline[:MAX_NODES]),
         "candidate": list(r.candidate[:MAX_NODES])} for r in new[:MAX_REGIONS]]}


def _occurrence(f: Finding) -> int:
    occ = dict(f.evidence).get("occurrence", 0)
    return occ if isinstance(occ, int) else 0


def attach(findings: tuple[Finding, ...], analysis: GraphAnalysis) -> tuple[Finding, ...]:
    """``findings`` with ``root_cause`` on the match losses the dumps explain, and ``graph_regions`` on the
    log findings of a transform where rewritten regions first appear."""
    by_key = {(d.stage, d.transform, d.occurrence): d for d in analysis.transforms}
    out: list[Finding] = []
    for f in findings:
        d = by_key.get((f.stage or "", f.transform or "", _occurrence(f)))
        if d is not None:
            ev = dict(f.evidence)
            if f.category == Category.MATCH_LOSS and d.hints:
                ev["root_cause"] = to_jsonable(d.hints)
            regions = regions_evidence(d) if f.code.startswith(LOG_PREFIX) else None
            if regions is not None:
                ev["graph_regions"] = regions
            if len(ev) != len(f.evidence):
                f = replace(f, evidence=tuple(sorted(ev.items())))
        out.append(f)
    return tuple(out)


__all__ = ["attach", "hints_for_match_loss", "regions_evidence"]
