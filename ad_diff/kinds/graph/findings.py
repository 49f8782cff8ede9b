"""Turn the measured :class:`GraphAnalysis` into ``ADG`` findings (verdicts live here, not in the measurement)."""

from __future__ import annotations

from typing import Any

from ad_diff.core.model import Finding, State, TransformRecord
from ad_diff.kinds.graph import rules as R
from ad_diff.kinds.graph.model import GraphAnalysis, RunDelta, TransformGraphDiff

MAX_EVIDENCE_NODES = 50


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _key(d: TransformGraphDiff) -> str:
    return f"{d.stage}/{d.transform}" + (f"#{d.occurrence}" if d.occurrence else "")


def findings_for(
    analysis: GraphAnalysis, logs: dict[str, dict[tuple[str, int], TransformRecord]] | None = None
) -> list[Finding]:
    """All graph findings, unsorted."""
    out: list[Finding] = []
    for d in analysis.transforms:
        two_sided = d.baseline_file is not None and d.candidate_file is not None
        if two_sided and not d.identical:
            out.extend(_metadata(d))
            out.extend(_regions(d))
        if not two_sided:
            out.extend(_one_sided(d))
        for run, delta in (("baseline", d.delta_baseline), ("candidate", d.delta_candidate)):
            rec = (logs or {}).get(run, {}).get((d.transform, d.occurrence))
            if rec is not None and delta is not None:
                out.extend(_consistency(d, run, rec, delta))
    if analysis.first_divergence:
        first = next(d for d in analysis.transforms if _key(d) == analysis.first_divergence)
        out.append(
            R.FIRST_DIVERGENCE.make(
                transform=first.transform,
                stage=first.stage,
                detail=analysis.first_divergence_detail,
                evidence={"occurrence": first.occurrence, "regions": len(first.regions), "rewired": len(first.rewired)},
            )
        )
    return out


def _metadata(d: TransformGraphDiff) -> list[Finding]:
    out: list[Finding] = []
    cb, cc, cc0 = d.coverage_baseline, d.coverage_candidate, d.coverage_candidate_before
    lost = [m for m in d.new_meta_losses if m.kind == "lost"]
    changed = [m for m in d.new_meta_losses if m.kind == "changed"]
    cov_ev: dict[str, Any] = {
        "occurrence": d.occurrence,
        "coverage_candidate_before": cc0.to_json() if cc0 else None,
        "coverage_candidate_after": cc.to_json() if cc else None,
        "coverage_baseline": cb.to_json() if cb else None,
    }
    if lost:
        names = sorted(m.candidate for m in lost)
        out.append(
            R.METADATA_LOST.make(
                transform=d.transform,
                stage=d.stage,
                count=len(lost),
                examples=", ".join(names[:3]),
                before=_pct(cc0.nodes if cc0 else None),
                after=_pct(cc.nodes if cc else None),
                baseline=_pct(cb.nodes if cb else None),
                evidence={**cov_ev, "nodes": [[m.baseline, m.candidate, m.before] for m in lost][:MAX_EVIDENCE_NODES]},
            )
        )
    elif cc and cc0 and cb and cc.nodes < cc0.nodes and cc.nodes < cb.nodes:
        # Count nodes without metadata, not shares: a fusion that removes nodes with metadata lowers the
        # share while no metadata was lost (the already-unknown nodes just weigh more).
        cb0 = d.coverage_baseline_before
        new_unknown_c = (cc.nodes_total - cc.nodes_known) - (cc0.nodes_total - cc0.nodes_known)
        new_unknown_b = ((cb.nodes_total - cb.nodes_known) - (cb0.nodes_total - cb0.nodes_known)) if cb0 else 0
        if new_unknown_c > max(new_unknown_b, 0):
            out.append(
                R.COVERAGE_DROPPED.make(
                    transform=d.transform,
                    stage=d.stage,
                    before=_pct(cc0.nodes),
                    after=_pct(cc.nodes),
                    baseline=_pct(cb.nodes),
                    evidence=cov_ev,
                )
            )
    if changed:
        names = sorted(f"{m.candidate} ({m.before} -> {m.after})" for m in changed)
        out.append(
            R.METADATA_CHANGED.make(
                transform=d.transform,
                stage=d.stage,
                count=len(changed),
                examples="; ".join(names[:3]),
                evidence={
                    "occurrence": d.occurrence,
                    "nodes": [[m.baseline, m.candidate, m.before, m.after] for m in changed][:MAX_EVIDENCE_NODES],
                },
            )
        )
    return out


def _regions(d: TransformGraphDiff) -> list[Finding]:
    if not d.new_regions:
        return []
    new = [r for r in d.regions if r.id in d.new_regions]
    kinds: dict[str, int] = {}
    for r in new:
        kinds[r.kind] = kinds.get(r.kind, 0) + 1
    detail = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    return [
        R.REGION_REWRITTEN.make(
            transform=d.transform,
            stage=d.stage,
            count=len(new),
            detail=detail,
            evidence={
                "occurrence": d.occurrence,
                "regions": [{"id": r.id, "baseline": list(r.baseline[:20]), "candidate": list(r.candidate[:20])}
                            for r in new[:10]],
            },
        )
    ]


def _one_sided(d: TransformGraphDiff) -> list[Finding]:
    run = "baseline" if d.baseline_file else "candidate"
    delta = d.delta_baseline if d.baseline_file else d.delta_candidate
    if delta is None or not (delta.added or delta.removed):
        return []
    return [
        R.ONE_SIDED_CHANGE.make(
            transform=d.transform,
            stage=d.stage,
            run=run,
            detail=f"{delta.added} node(s) added, {delta.removed} removed",
            evidence={"occurrence": d.occurrence, "added": delta.added, "removed": delta.removed},
        )
    ]


def _consistency(d: TransformGraphDiff, run: str, rec: TransformRecord, delta: RunDelta) -> list[Finding]:
    if delta.first:
        return []
    structural = delta.added or delta.removed
    quiet = rec.state in (State.SKIPPED, State.DISABLED) or (rec.state is State.APPLIED and rec.matches == 0)
    if structural and quiet:
        logged = rec.state.value if rec.state is not State.APPLIED else "0 matches"
        return [
            R.LOG_SAYS_NOTHING_BUT_GRAPH_CHANGED.make(
                transform=d.transform,
                stage=d.stage,
                run=run,
                logged=logged,
                detail=f"{delta.added} node(s) added, {delta.removed} removed",
                evidence={"occurrence": d.occurrence, "log_line": rec.line, "added": delta.added,
                          "removed": delta.removed},
            )
        ]
    if rec.state is State.APPLIED and rec.matches and not delta.changed:
        return [
            R.LOG_SAYS_MATCHES_BUT_GRAPH_SAME.make(
                transform=d.transform,
                stage=d.stage,
                run=run,
                logged=rec.matches,
                evidence={"occurrence": d.occurrence, "log_line": rec.line},
            )
        ]
    return []
