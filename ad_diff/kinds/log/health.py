"""Findings about each run's log as a whole: ranks that stopped early (ADL009; which ones is measured in
:mod:`.compare`), ranks that disagree, the world size, unrecognised lines and restarts.
"""

from __future__ import annotations

from ad_diff.core.model import BASELINE, CANDIDATE, RUNS, Finding, State, TransformRecord
from ad_diff.kinds.log.model import IssueKind, LogComparison, RunLog
from ad_diff.kinds.log.rules import INCOMPLETE, RANKS, RETRY, UNRECOGNISED, WORLD_SIZE


def incomplete(section: LogComparison) -> list[Finding]:
    """One ADL009 per run that has a rank that stopped, naming the ranks."""
    found = section.stops
    out = []
    for run in RUNS:
        log = section.baseline if run == BASELINE else section.candidate
        mine = sorted((s for s in found if s.run == run), key=lambda s: (s.rank != log.rank, s.rank or 0))
        if not mine:
            continue
        world = len(log.rank_logs())
        if world > 1:
            detail = "; ".join(f"rank {s.rank} of {world}: {s.detail}" for s in mine[:4])
            if len(mine) > 4:
                detail += f"; and {len(mine) - 4} more rank(s)"
        else:
            detail = mine[0].detail
        lead = mine[0]
        other = [s for s in found if s.run != run]
        if run == CANDIDATE and any(s.transform == lead.transform and s.rank == lead.rank for s in other):
            detail += " (the baseline stops at the same place, so the change under review did not cause it)"
        evidence: dict[str, object] = {"run": run, "detail": detail, "log": str(log.path),
                                       "end": lead.end.value,
                                       "not_reached": list(lead.not_reached)}
        if world > 1:
            evidence["ranks"] = [s.rank for s in mine]
        out.append(INCOMPLETE.make(run=run, detail=detail, transform=lead.transform, stage=lead.stage,
                                   evidence=evidence))
    return out


def _value(r: TransformRecord) -> str:
    return str(r.matches) if r.state is State.APPLIED and r.matches is not None else r.state.value


def _disagreeing(log: RunLog) -> dict[tuple[str, str], dict[int, str]]:
    """Transforms whose state or count differs between the tagged ranks of one run: rank -> value."""
    by: dict[tuple[str, str], dict[int, str]] = {}
    for rl in log.rank_logs():
        if rl.rank is None:
            continue
        for r in rl.transforms:
            if r.state is not State.INCOMPLETE:  # where a rank stopped is its stop (ADL009), not a difference
                by.setdefault((r.stage, r.transform), {})[rl.rank] = _value(r)
    return {k: v for k, v in by.items() if len(v) > 1 and len(set(v.values())) > 1}


def _values(v: dict[int, str]) -> str:
    return ", ".join(f"rank {r}: {x}" for r, x in sorted(v.items()))


def consistency(section: LogComparison) -> list[Finding]:
    """Rank disagreements that existed before the change or cannot be compared, the world size, and each
    log's unrecognised lines and restarts."""
    out: list[Finding] = []
    b_dis, c_dis = _disagreeing(section.baseline), _disagreeing(section.candidate)
    compared = {rc.rank for rc in section.rank_comparisons()}
    lead = section.primary_rank
    for (stage, transform), v in sorted(b_dis.items()):
        same = c_dis.get((stage, transform)) == v
        run = "baseline and candidate logs" if same else "baseline log"
        what = f"{stage}/{transform} ({_values(v)})" + ("; unchanged by the candidate" if same else "")
        out.append(RANKS.make(run=run, what=what, transform=transform, stage=stage))
    for (stage, transform), v in sorted(c_dis.items()):
        # ranks the per-rank comparison did not cover and that disagree with the primary rank
        lead_value = v.get(lead) if lead is not None else None
        uncompared = sorted(r for r in v if r not in compared and v[r] != lead_value)
        if b_dis.get((stage, transform)) == v or not uncompared:
            continue  # as in the baseline (said above), or the ranks that differ are compared (loss/gain)
        what = (f"{stage}/{transform} ({_values(v)}); rank(s) {', '.join(map(str, uncompared))} not compared "
                "with the baseline")
        out.append(RANKS.make(run="candidate log", what=what, transform=transform, stage=stage))
    out += _world_size(section)
    for run in RUNS:
        log = section.baseline if run == BASELINE else section.candidate
        unrec = [i for i in log.issues if i.kind is IssueKind.UNRECOGNISED]
        if unrec:
            lines = [i.line for i in unrec[:50]]
            out.append(UNRECOGNISED.make(run=run, count=len(unrec), line=unrec[0].line,
                                         text=unrec[0].text[:120], evidence={"lines": lines}))
        retries = [i for i in log.issues if i.kind is IssueKind.RETRY]
        if retries:
            out.append(RETRY.make(run=run, count=log.pipelines, line=retries[-1].line))
    return out


def _world_size(section: LogComparison) -> list[Finding]:
    b, c = set(section.baseline.ranks_seen), set(section.candidate.ranks_seen)
    if not section.baseline.ranks or not b or not c or b == c:
        return []  # a snapshot baseline keeps one rank; untagged lines say nothing about the world size
    shared = sorted(b & c)
    compared = (f"ranks {', '.join(map(str, shared))} compared" if shared else "no rank in common")
    if section.narrowed:
        compared = f"only rank {section.primary_rank} compared (--rank)"
    for run, only in ((BASELINE, sorted(b - c)), (CANDIDATE, sorted(c - b))):
        if only:
            compared += f"; {run}-only rank(s) {', '.join(map(str, only))} not compared"
    return [WORLD_SIZE.make(bcount=len(b), branks=", ".join(map(str, sorted(b))), ccount=len(c),
                            cranks=", ".join(map(str, sorted(c))), compared=compared,
                            evidence={"baseline_ranks": sorted(b), "candidate_ranks": sorted(c)})]
