"""Turn the graph measurements into findings: :class:`GraphAnalysis` into ``ADG`` findings, each run's
:class:`FolderScan` into ``ADI002``-``ADI005``. Verdicts live here (and in ``rules``), never in the
analysis."""

from __future__ import annotations

from typing import Any

from ad_diff.core.jsonable import to_jsonable
from ad_diff.core.model import BASELINE, CANDIDATE, RUNS, Finding, State, TransformRecord
from ad_diff.core.rules import ANALYSIS_FAILED
from ad_diff.kinds.graph import rules as R
from ad_diff.kinds.graph.folder import FolderScan, ranges
from ad_diff.kinds.graph.model import GraphAnalysis, MetaChangeKind, RunDelta, TransformGraphDiff
from ad_diff.kinds.graph.pair import log_index
from ad_diff.kinds.log.model import RunLog

MAX_EVIDENCE_NODES = 50
STANDS = "the per-transform match counts from the logs still stand"
"""What still holds when an analysis beside the logs cannot run."""

def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def folder_findings(scan: FolderScan, run: str) -> list[Finding]:
    """Unreadable entries, numbering gaps and duplicate counters of one run's ``graphs/``."""
    if scan.error is not None:
        return [ANALYSIS_FAILED.make(analysis="graph analysis", error=scan.error, stands=STANDS)]
    out = [R.DUMP_ENTRY_UNREADABLE.make(path=path, problem=problem, run=run)
           for path, problem in scan.unreadable]
    if scan.missing:
        out.append(R.DUMP_GAP.make(run=run, missing=ranges(scan.missing)))
    out += [R.DUMP_DUPLICATE.make(run=run, counter=f"{counter:03d}", files=", ".join(names))
            for counter, names in scan.duplicates]
    return out


def classify(
    analysis: GraphAnalysis, baseline_log: RunLog | None, candidate_log: RunLog | None
) -> list[Finding]:
    """All graph findings of one analysis, unsorted."""
    logs = {BASELINE: log_index(baseline_log), CANDIDATE: log_index(candidate_log)}
    out = [R.DUMP_UNREADABLE.make(transform=u.transform, stage=u.stage, run=u.run, error=u.error)
           for u in analysis.unreadable]
    for d in analysis.transforms:
        if d.two_sided and not d.identical:
            out.extend(_metadata(d))
            out.extend(_regions(d))
        if not d.two_sided:
            out.extend(_one_sided(d))
        for run in RUNS:
            rec, delta = logs[run].get((d.transform, d.occurrence)), d.delta.of(run)
            if rec is not None and delta is not None:
                out.extend(_consistency(d, run, rec, delta))
    if analysis.first_divergence is not None:
        first = next(d for d in analysis.transforms if d.key == analysis.first_divergence)
        out.append(
            R.FIRST_DIVERGENCE.make(
                transform=first.transform,
                stage=first.stage,
                detail=analysis.first_divergence_detail,
                evidence={"occurrence": first.occurrence, "regions": len(first.regions),
                          "rewired": len(first.rewired)},
            )
        )
    return out


def _metadata(d: TransformGraphDiff) -> list[Finding]:
    out: list[Finding] = []
    cov = d.coverage
    cb, cc, cc0 = cov.baseline, cov.candidate, cov.candidate_before
    lost = [m for m in d.new_meta_changes if m.kind is MetaChangeKind.LOST]
    changed = [m for m in d.new_meta_changes if m.kind is MetaChangeKind.CHANGED]
    cov_ev: dict[str, Any] = {
        "occurrence": d.occurrence,
        "coverage_candidate_before": to_jsonable(cc0),
        "coverage_candidate_after": to_jsonable(cc),
        "coverage_baseline": to_jsonable(cb),
    }
    if lost:
        names = sorted(m.candidate for m in lost)
        out.append(
            R.METADATA_LOST.make(
                transform=d.transform,
                stage=d.stage,
                count=len(lost),
                examples=", ".join(names[:3]),
                before=_pct(cc0.nodes if cc0 is not None else None),
                after=_pct(cc.nodes if cc is not None else None),
                baseline=_pct(cb.nodes if cb is not None else None),
                evidence={**cov_ev,
                          "nodes": [[m.baseline, m.candidate, m.before] for m in lost[:MAX_EVIDENCE_NODES]]},
            )
        )
    elif cc is not None and cc0 is not None and cb is not None and cc.nodes_below(cc0) and cc.nodes_below(cb):
        # Count nodes without metadata, not shares: a fusion that removes nodes with metadata lowers the
        # share while no metadata was lost (the already-unknown nodes just weigh more).
        cb0 = cov.baseline_before
        new_unknown_c = cc.nodes_unknown - cc0.nodes_unknown
        new_unknown_b = cb.nodes_unknown - cb0.nodes_unknown if cb0 is not None else 0
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
                    "nodes": [[m.baseline, m.candidate, m.before, m.after]
                              for m in changed[:MAX_EVIDENCE_NODES]],
                },
            )
        )
    return out


def _regions(d: TransformGraphDiff) -> list[Finding]:
    new = [r for r in d.regions if r.new]
    if not new:
        return []
    kinds: dict[str, int] = {}
    for r in new:
        kinds[r.kind.value] = kinds.get(r.kind.value, 0) + 1
    detail = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    return [
        R.REGION_REWRITTEN.make(
            transform=d.transform,
            stage=d.stage,
            count=len(new),
            detail=detail,
            evidence={
                "occurrence": d.occurrence,
                "regions": [
                    {"id": r.id, "baseline": list(r.baseline[:20]), "candidate": list(r.candidate[:20])}
                    for r in new[:10]
                ],
            },
        )
    ]


def _one_sided(d: TransformGraphDiff) -> list[Finding]:
    run = BASELINE if d.baseline_file is not None else CANDIDATE
    delta = d.delta.of(run)
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
