"""JSON reporter: the stable machine-readable contract (docs/report-schema.md).

Keys promised to users (never removed without a schema bump): ``schema_version``, ``verdict``,
``exit_code``, ``transforms[].{stage, transform, baseline.{state, matches}, candidate.{state, matches}}``,
``findings[].{code, category, severity, transform, node, tensor, message}``.
"""

from __future__ import annotations

import json
from typing import Any

from ad_diff import __version__
from ad_diff.core.jsonable import to_jsonable
from ad_diff.core.model import Finding, Side, TransformComparison
from ad_diff.discover import RunArtifacts
from ad_diff.gate import Verdict, gates
from ad_diff.kinds.log.model import RunLog
from ad_diff.result import DiffResult

SCHEMA_VERSION = 1


def _side(s: Side) -> dict[str, Any]:
    return {
        "state": s.state.value,
        "matches": s.matches,
        "stage": s.stage,
        "time_s": s.timing.total if s.timing else None,
        "failure": s.failure,
    }


def _row(r: TransformComparison) -> dict[str, Any]:
    return {
        "stage": r.stage,
        "transform": r.transform,
        "occurrence": r.occurrence,
        "changed": r.changed,
        "delta": r.delta,
        "baseline": _side(r.baseline),
        "candidate": _side(r.candidate),
    }


def finding_json(f: Finding, fail_on: str) -> dict[str, Any]:
    """One finding as a JSON object (also used by the batch and JUnit writers)."""
    return {
        "code": f.code,
        "category": f.category,
        "severity": f.severity.value,
        "stage": f.stage,
        "transform": f.transform,
        "node": f.node,
        "tensor": f.tensor,
        "message": f.message,
        "collapse": f.collapse,
        "gated": gates(f, fail_on),
        "acknowledged": f.acknowledged,
        "explained_by": f.explained_by,
        "evidence": {k: v for k, v in f.evidence},
    }


def _run(a: RunArtifacts, log: RunLog | None) -> dict[str, Any]:
    d: dict[str, Any] = {
        "path": str(a.root),
        "log": str(a.log) if a.log else None,
        "graphs": str(a.graphs) if a.graphs else None,
        "tensors": str(a.tensors) if a.tensors else None,
        "notes": list(a.notes),
    }
    if log is not None:
        d.update(
            log_formats=list(log.formats),
            log_prefixes=list(log.prefixes),
            rank=log.rank,
            ranks_seen=list(log.ranks_seen),
            rank_disagreement=list(log.rank_disagreement),
            end=log.end.value,
            end_detail=log.end_detail,
            pipelines=log.pipelines,
            transforms=len(log.transforms),
            lines=log.lines,
            issues=[{"line": i.line, "kind": i.kind, "text": i.text} for i in log.issues[:200]],
        )
    return d


def to_dict(result: DiffResult, verdict: Verdict) -> dict[str, Any]:
    """The whole report as plain JSON-able data."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ad-diff", "version": __version__},
        "verdict": verdict.verdict,
        "exit_code": verdict.exit_code,
        "fail_on": verdict.fail_on,
        "summary": {
            "findings": len(result.findings),
            "errors": sum(f.severity.value == "error" for f in result.findings),
            "warnings": sum(f.severity.value == "warning" for f in result.findings),
            "info": sum(f.severity.value == "info" for f in result.findings),
            "gated": len(verdict.gated),
            "transforms": len(result.transforms),
            "changed_transforms": sum(r.changed for r in result.transforms),
        },
        "runs": {
            "baseline": _run(result.baseline, result.baseline_log),
            "candidate": _run(result.candidate, result.candidate_log),
        },
        "transforms": [_row(r) for r in result.transforms],
        "findings": [finding_json(f, verdict.fail_on) for f in result.findings],
        "sections": {k: to_jsonable(v) for k, v in sorted(result.sections.items())},
        "notes": list(result.notes),
    }


def render(result: DiffResult, verdict: Verdict) -> str:
    """Render the JSON report (sorted keys, 2-space indent, trailing newline: byte-stable)."""
    return json.dumps(to_dict(result, verdict), indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"
