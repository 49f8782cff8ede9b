"""JSON form of :class:`GraphAnalysis` (node-level data included, capped per transform to stay readable)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ad_diff.kinds.graph.model import Coverage, GraphAnalysis, RunDelta, TransformGraphDiff

MAX_ITEMS = 500
"""Most unmatched nodes / non-exact pairs / meta changes listed per transform (counts are always exact)."""


def _cov(c: Coverage | None) -> dict[str, Any] | None:
    return c.to_json() if c else None


def _delta(d: RunDelta | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {"added": d.added, "removed": d.removed, "meta_changed": d.meta_changed, "changed": d.changed,
            "first": d.first}


def _capped(items: list[Any]) -> dict[str, Any]:
    return {"count": len(items), "items": items[:MAX_ITEMS], "truncated": max(0, len(items) - MAX_ITEMS)}


def transform_to_json(d: TransformGraphDiff) -> dict[str, Any]:
    """One transform's entry."""
    return {
        "stage": d.stage,
        "transform": d.transform,
        "occurrence": d.occurrence,
        "baseline_file": d.baseline_file,
        "candidate_file": d.candidate_file,
        "identical": d.identical,
        "structure_equal": d.structure_equal,
        "pairs_by_kind": dict(d.pairs_by_kind),
        "unmatched": _capped([asdict(u) for u in d.unmatched]),
        "regions": [
            {"id": r.id, "kind": r.kind, "section": r.section, "baseline": list(r.baseline),
             "candidate": list(r.candidate), "frontier": [list(p) for p in r.frontier],
             "new": r.id in d.new_regions}
            for r in d.regions[:MAX_ITEMS]
        ],
        "rewired": _capped([list(p) for p in d.rewired]),
        "coverage": {
            "baseline": _cov(d.coverage_baseline),
            "candidate": _cov(d.coverage_candidate),
            "baseline_before": _cov(d.coverage_baseline_before),
            "candidate_before": _cov(d.coverage_candidate_before),
        },
        "meta_changes": _capped([asdict(m) for m in d.meta_changes]),
        "new_meta_changes": _capped([asdict(m) for m in d.new_meta_losses]),
        "delta": {"baseline": _delta(d.delta_baseline), "candidate": _delta(d.delta_candidate)},
        "hints": [h.to_json() for h in d.hints],
        "notes": list(d.notes),
    }


def analysis_to_json(a: GraphAnalysis) -> dict[str, Any]:
    """The ``graph`` section of the JSON report."""
    return {
        "baseline_dir": str(a.baseline_dir),
        "candidate_dir": str(a.candidate_dir),
        "formats": list(a.formats),
        "first_divergence": a.first_divergence,
        "first_divergence_detail": a.first_divergence_detail,
        "only_baseline": list(a.only_baseline),
        "only_candidate": list(a.only_candidate),
        "transforms": [transform_to_json(d) for d in a.transforms],
        "findings": [
            {"code": f.code, "category": f.category, "severity": f.severity.value, "message": f.message,
             "stage": f.stage, "transform": f.transform, "evidence": dict(f.evidence)}
            for f in a.findings
        ],
        "notes": list(a.notes),
    }
