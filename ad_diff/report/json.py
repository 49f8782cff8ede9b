"""JSON reporter: the stable machine-readable contract (docs/report-schema.md).

Keys promised to users (never removed without a schema bump): ``schema_version``, ``verdict``,
``exit_code``, ``headline``, ``transforms[].{stage, transform, baseline.{state, matches}, candidate.{state,
matches}}``, ``findings[].{code, category, severity, transform, node, tensor, message, group}``,
``groups[].{id, cause, title, gated, root, consequences}``.

Schema 2 added the causal groups (``groups``; ``findings[].group``/``role``; ``summary.root_causes``), the
counts by category with what was not analysed, ``skipped`` and the ignored transforms; findings are listed in
group order (root cause first) instead of by severity.
"""

from __future__ import annotations

from typing import Any

from ad_diff import __version__
from ad_diff.core.jsonable import dumps, to_jsonable
from ad_diff.core.model import Side, TransformComparison
from ad_diff.core.sinks import values
from ad_diff.discover import RunArtifacts
from ad_diff.gate import FindingVerdict, GroupVerdict, Verdict
from ad_diff.kinds.log.model import RunLog
from ad_diff.report.common import (
    conflicts,
    counts,
    headline,
    not_compared,
    partition,
    status_text,
)
from ad_diff.result import DiffResult

SCHEMA_VERSION = 2


def _side(s: Side, conflict: bool) -> dict[str, Any]:
    return {
        "state": s.state.value,
        "status": status_text(s, conflict),
        "matches": s.matches,
        "stage": s.stage,
        "time_s": s.timing.total if s.timing else None,
        "failure": s.failure,
    }


def _row(r: TransformComparison, conflict: frozenset[tuple[str, str]]) -> dict[str, Any]:
    return {
        "stage": r.stage,
        "transform": r.transform,
        "occurrence": r.occurrence,
        "changed": r.changed_anywhere,
        "delta": r.delta,
        "baseline": _side(r.baseline, (r.transform, "baseline") in conflict),
        "candidate": _side(r.candidate, (r.transform, "candidate") in conflict),
        "elsewhere": [{"rank": e.rank, "baseline": _side(e.baseline, False),
                       "candidate": _side(e.candidate, False)} for e in r.elsewhere],
    }


def finding_json(fv: FindingVerdict) -> dict[str, Any]:
    """One finding and its gate state as a JSON object."""
    f, role = fv.finding, fv.role
    return {
        "group": f.group,
        "role": role,
        "code": f.code,
        "category": f.category,
        "severity": f.severity.value,
        "stage": f.stage,
        "transform": f.transform,
        "node": f.node,
        "tensor": f.tensor,
        "message": f.message,
        "collapse": f.collapse,
        "gated": fv.gated,
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


def _group(gv: GroupVerdict, index: dict[int, int]) -> dict[str, Any]:
    g = gv.group
    return {
        "id": g.id,
        "cause": g.cause.value,
        "title": g.title,
        "evidence": g.evidence,
        "stage": g.stage,
        "transform": g.transform,
        "position": g.position,
        "gated": gv.gated,
        "severity": g.severity.value,
        "settled": g.settled,
        "root": [index[id(f)] for f in g.root],
        "consequences": [index[id(f)] for f in g.consequences],
        "consequence_counts": {c.value: n for c, n in g.consequence_counts().items()},
    }


def to_dict(result: DiffResult, verdict: Verdict) -> dict[str, Any]:
    """The whole report as plain JSON-able data."""
    judged = verdict.findings
    findings = [fv.finding for fv in judged]
    index = {id(f): i for i, f in enumerate(findings)}
    p = partition(verdict)
    cnt = counts(result)
    return {
        "headline": headline(result, verdict),
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ad-diff", "version": __version__},
        "verdict": verdict.verdict.value,
        "exit_code": verdict.exit_code,
        "fail_on": verdict.fail_on,
        "summary": {
            "findings": len(findings),
            "errors": sum(f.severity.value == "error" for f in findings),
            "warnings": sum(f.severity.value == "warning" for f in findings),
            "info": sum(f.severity.value == "info" for f in findings),
            "gated": len(verdict.gated),
            "transforms": len(result.transforms),
            "changed_transforms": sum(r.changed_anywhere for r in result.transforms),
            "not_compared_transforms": not_compared(result),
            "root_causes": len(p.gated),
            "groups": len(verdict.groups),
            "categories": {c.category.value: c.count for c in cnt if c.not_analysed is None},
            "not_analysed": {c.category.value: c.not_analysed for c in cnt if c.not_analysed is not None},
            "ignored_transforms": list(result.ignored_transforms),
            "ignored_findings": result.ignored_findings,
        },
        "skipped": {
            k: {"reason": s.reason.value, "detail": s.detail, "run": s.run,
                **({"count": s.count} if s.count is not None else {})}
            for k, s in sorted(result.skipped.items())
        },
        "groups": [_group(g, index) for g in verdict.groups],
        "runs": {
            "baseline": _run(result.baseline, result.baseline_log),
            "candidate": _run(result.candidate, result.candidate_log),
        },
        "transforms": [_row(r, conflicts(result.findings)) for r in result.transforms],
        "findings": [finding_json(fv) for fv in judged],
        "sections": {k: to_jsonable(v) for k, v in sorted(result.sections.items())},
        "notes": list(result.notes),
        "accounting": result.accounting.as_json() if result.accounting is not None else None,
    }


def render(result: DiffResult, verdict: Verdict) -> str:
    """Render the JSON report (sorted keys, 2-space indent, trailing newline: byte-stable)."""
    result, verdict = values((result, verdict), lines=False)  # every value bounded (core/sinks.py)
    return dumps(to_dict(result, verdict), sort_keys=True) + "\n"
