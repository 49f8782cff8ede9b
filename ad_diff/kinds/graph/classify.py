"""Turn the graph measurements into findings: :class:`GraphAnalysis` into ``ADG`` findings, each run's
:class:`FolderScan` into ``ADI002``-``ADI005``. Verdicts live here (and in ``rules``), never in the
analysis; every gating decision is written in the rule's ``doc`` (docs/rules.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ad_diff.core.graphops import op_name
from ad_diff.core.jsonable import to_jsonable
from ad_diff.core.model import (
    BASELINE,
    CANDIDATE,
    RUNS,
    Finding,
    RunId,
    State,
    TransformComparison,
    TransformRecord,
)
from ad_diff.core.rules import ANALYSIS_FAILED, STANDS
from ad_diff.core.runlog import RunLog
from ad_diff.discover import dump_counter
from ad_diff.discover.dumps import FolderScan, ranges
from ad_diff.kinds.graph import rules as R
from ad_diff.kinds.graph.diff import (
    Absence,
    GraphAnalysis,
    MetaChangeKind,
    RunDelta,
    TransformGraphDiff,
    UnreadableDump,
)
from ad_diff.kinds.graph.evidence import regions_evidence
from ad_diff.kinds.graph.pair import log_index

MAX_EVIDENCE_NODES = 50
GRAPH_STAGES = frozenset({"post_export", "pattern_matcher", "post_load_fusion"})
"""Stages whose transforms act on the graph itself: a match there must show in the dump (ADG012). Others act
(also) outside it: sharding detection, weight loading, caches, compilation."""


def acts_in_graph(stage: str, transform: str) -> bool:
    """True if a match of this transform must change the dumped graph (``detect_*`` passes only detect)."""
    return stage in GRAPH_STAGES and not transform.startswith("detect_")


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
    out += [R.DUMP_DUPLICATE.make(run=run, counter=f"{counter:03d}", files=", ".join(names),
                                  evidence={"files": tuple(names)})
            for counter, names in scan.duplicates]
    return out


def _unreadable(analysis: GraphAnalysis) -> list[Finding]:
    """ADG009: one finding per run and way of failing (a form the reader does not know fails every dump
    alike: one input problem, not a consequence per dump); it names the transform when one dump failed."""
    alike: dict[tuple[RunId, str], list[UnreadableDump]] = {}
    for u in analysis.unreadable:
        alike.setdefault((u.run, u.problem or u.error), []).append(u)
    out = []
    for (run, _), us in alike.items():
        u = us[0]
        one = len(us) == 1
        what = "graph dump" if one else f"{len(us)} graph dumps"
        error = u.error if one else f"each the same way, first {u.error}"
        out.append(R.DUMP_UNREADABLE.make(
            transform=u.transform if one else None, stage=u.stage if one else None, run=run, what=what,
            error=error, evidence={"files": tuple(x.file for x in us[:50]), "dumps": len(us)}))
    return out


def classify(
    analysis: GraphAnalysis,
    baseline_log: RunLog | None,
    candidate_log: RunLog | None,
    rows: Iterable[TransformComparison] = (),
) -> list[Finding]:
    """All graph findings of one analysis, unsorted. ``rows`` (the log comparison) tell which transforms
    changed their match count or state: the regions appearing there are that change's evidence."""
    logs = {BASELINE: log_index(baseline_log), CANDIDATE: log_index(candidate_log)}
    ran = {BASELINE: _ran(baseline_log), CANDIDATE: _ran(candidate_log)}
    shared = _shared_counters(analysis)
    changed = {(r.transform, r.occurrence) for r in rows if r.changed}
    out = _unreadable(analysis)
    for d in analysis.transforms:
        if d.two_sided and not d.identical:
            out.extend(_metadata(d))
            explained = (d.transform, d.occurrence) in changed or d.key == analysis.first_divergence
            if not explained:
                out.extend(_regions(d))
        unlogged = _not_logged(d, ran, shared)
        out.extend(unlogged)
        if not d.two_sided and d.missing in (None, Absence.NOT_RUN) and not unlogged:
            out.extend(_one_sided(d))
        if d.moved is not None:
            out.append(R.TRANSFORM_MOVED.make(transform=d.transform, stage=d.stage, before=d.moved[0],
                                              after=d.moved[1], evidence={"occurrence": d.occurrence}))
        checks: list[Finding] = []
        for run in RUNS:
            rec, delta = logs[run].get((d.transform, d.occurrence)), d.delta.of(run)
            if rec is not None and delta is not None:
                checks.extend(_consistency(d, run, rec, delta))
        same = [f for f in checks if f.code == R.LOG_SAYS_MATCHES_BUT_GRAPH_SAME.code]
        if len(same) == len(RUNS):  # both runs: how this transform works (caches, weights), not news
            checks = [f for f in checks if f not in same]
        out.extend(checks)
    out.extend(_truncated(analysis))
    if analysis.first_divergence is not None:
        first = next(d for d in analysis.transforms if d.key == analysis.first_divergence)
        ev: dict[str, Any] = {"occurrence": first.occurrence, "regions": len(first.regions),
                              "rewired": len(first.rewired)}
        regions = regions_evidence(first)
        if regions is not None:
            ev["graph_regions"] = regions
        out.append(R.FIRST_DIVERGENCE.make(transform=first.transform, stage=first.stage,
                                           detail=analysis.first_divergence_detail, evidence=ev))
    return out


def _ran(log: RunLog | None) -> set[tuple[str, int]]:
    """``(transform, occurrence)`` that any rank of ``log`` logged (the dumps are one rank's, which need
    not be the primary one)."""
    if log is None:
        return set()
    return {(r.transform, r.occurrence) for rl in log.rank_logs() for r in rl.transforms}


def _shared_counters(analysis: GraphAnalysis) -> dict[RunId, set[int]]:
    """Per run, the dump counters several files share (ADI003 reports such a folder: copies or two runs)."""
    out: dict[RunId, set[int]] = {}
    for run in RUNS:
        seen: dict[int, int] = {}
        for d in analysis.transforms:
            file = d.baseline_file if run == BASELINE else d.candidate_file
            n = dump_counter(Path(file).name) if file else None
            if n is not None:
                seen[n] = seen.get(n, 0) + 1
        out[run] = {n for n, k in seen.items() if k > 1}
    return out


def _not_logged(d: TransformGraphDiff, ran: Mapping[RunId, set[tuple[str, int]]],
                shared: Mapping[RunId, set[int]]) -> list[Finding]:
    """ADG014 per run that dumped ``d`` while no rank of its log (when it has one) has a record of it; a
    dump sharing its counter with another file is ADI003's (a copy in the folder), not this rule's."""
    out = []
    for run, file in ((BASELINE, d.baseline_file), (CANDIDATE, d.candidate_file)):
        if file is None or dump_counter(Path(file).name) in shared[run]:
            continue
        if ran[run] and (d.transform, d.occurrence) not in ran[run]:
            out.append(R.DUMP_NOT_LOGGED.make(transform=d.transform, stage=d.stage, run=run, file=file,
                                              evidence={"occurrence": d.occurrence, "dump": file,
                                                        "run": run}))
    return out


def _truncated(analysis: GraphAnalysis) -> list[Finding]:
    """ADG011 per run: logged transforms whose dumps the folder lacks at its end (or its start)."""
    out: list[Finding] = []
    for run in RUNS:
        first: str | None = None  # the run's first and last dump present (a file, readable or not)
        last: str | None = None
        head: list[TransformGraphDiff] = []
        tail: list[TransformGraphDiff] = []
        for d in analysis.transforms:
            mine = _side_missing(d) == run and not d.two_sided
            if not mine or d.missing is Absence.UNREADABLE:
                first, last = first or d.key, d.key
            elif d.missing is Absence.CUT:
                tail.append(d)
            elif d.missing is Absence.LOST and first is None:
                head.append(d)
        for cut, where in ((head, f"start late (first dump: {first})"), (tail, f"stop after {last}")):
            if cut:
                out.append(R.DUMPS_TRUNCATED.make(
                    run=run, where=where, count=len(cut), first=cut[0].key, transform=cut[0].transform,
                    stage=cut[0].stage, evidence={"not_dumped": [d.key for d in cut[:MAX_EVIDENCE_NODES]],
                                                  "occurrence": cut[0].occurrence}))
    return out


def _side_missing(d: TransformGraphDiff) -> str:
    return BASELINE if d.baseline_file is None else CANDIDATE


def _untyped_ops(d: TransformGraphDiff) -> list[tuple[str, int]]:
    """Ops the candidate now writes without metadata on more nodes than before, where the baseline writes
    every node of that op with metadata: ``(op, new nodes without metadata)``."""
    cov = d.coverage
    cc, cc0, cb = cov.candidate, cov.candidate_before, cov.baseline
    if cc is None or cb is None:
        return []
    before = {t: u for t, _, u in cc0.by_target} if cc0 is not None else {}
    base = {t: (k, u) for t, k, u in cb.by_target}
    out = []
    for t, _, u in cc.by_target:
        grown = u - before.get(t, 0)
        bk, bu = base.get(t, (0, 0))
        if grown > 0 and bk > 0 and bu == 0:
            out.append((t, grown))
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
    untyped = [] if lost else _untyped_ops(d)
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
    elif untyped:
        ops = ", ".join(f"{op_name(t)} ({n})" for t, n in untyped[:5])
        out.append(R.COVERAGE_DROPPED.make(
            transform=d.transform, stage=d.stage, count=sum(n for _, n in untyped), ops=ops,
            evidence={**cov_ev, "ops": [[t, n] for t, n in untyped[:MAX_EVIDENCE_NODES]]}))
    if changed:
        names = sorted(f"{m.candidate} ({m.before} -> {m.after})" for m in changed)
        out.append(
            R.SHAPE_CHANGED.make(
                transform=d.transform,
                stage=d.stage,
                count=len(changed),
                examples="; ".join(names[:3]),
                evidence={
                    "occurrence": d.occurrence,
                    "count": len(changed),
                    "nodes": [[m.baseline, m.candidate, m.before, m.after]
                              for m in changed[:MAX_EVIDENCE_NODES]],
                },
            )
        )
    return out


def _regions(d: TransformGraphDiff) -> list[Finding]:
    regions = regions_evidence(d)
    if regions is None:
        return []
    kinds: dict[str, int] = {}
    for r in d.regions:
        if r.new:
            kinds[r.kind.value] = kinds.get(r.kind.value, 0) + 1
    detail = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    ev = {"occurrence": d.occurrence, "graph_regions": regions}
    return [R.REGION_REWRITTEN.make(transform=d.transform, stage=d.stage, count=regions["count"],
                                    detail=detail, evidence=ev)]


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
    ev = {"occurrence": d.occurrence, "log_line": rec.line, "run": run}
    count = rec.matches if rec.state is State.APPLIED else None
    if delta.replaced and count is not None and delta.replaced != count:
        ops = " and ".join(delta.replaced_ops)
        return [R.LOG_DUMP_COUNT_MISMATCH.make(
            transform=d.transform, stage=d.stage, run=run, logged=rec.matches, added=delta.replaced, ops=ops,
            evidence={**ev, "logged": rec.matches, "added": delta.replaced})]
    if structural and quiet:
        logged = rec.state.value if rec.state is not State.APPLIED else "0 matches"
        return [
            R.LOG_SAYS_NOTHING_BUT_GRAPH_CHANGED.make(
                transform=d.transform,
                stage=d.stage,
                run=run,
                logged=logged,
                detail=f"{delta.added} node(s) added, {delta.removed} removed",
                evidence={**ev, "added": delta.added, "removed": delta.removed},
            )
        ]
    if rec.state is State.APPLIED and rec.matches and not delta.changed:
        in_graph = acts_in_graph(d.stage, d.transform)
        rule = R.LOG_DUMP_CONFLICT if in_graph else R.LOG_SAYS_MATCHES_BUT_GRAPH_SAME
        return [rule.make(transform=d.transform, stage=d.stage, run=run, logged=rec.matches, evidence=ev)]
    return []
