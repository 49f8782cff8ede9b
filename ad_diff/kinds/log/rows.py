"""Findings from the paired rows, rank by rank, then folded into one finding per transform naming its ranks.

A row the run never reached (its rank stopped early: :mod:`.compare`) or that a pipeline-cache restore
skipped (``restored``) makes no finding of its own.
"""

from __future__ import annotations

from dataclasses import replace

from ad_diff.core.headline import rank_scope
from ad_diff.core.model import Finding, Severity, Side, State, TransformComparison
from ad_diff.kinds.log.model import LogComparison, RankComparison
from ad_diff.kinds.log.rules import (
    ADDED,
    COLLAPSE,
    FAILED,
    GAIN,
    PARTIAL,
    REMOVED,
    REORDERED,
    STAGE_MOVED,
    STATE,
    STOPPED,
)

_NOT_COMPARED = (State.INCOMPLETE, State.RESTORED)


def classify_row(r: TransformComparison, frac: float) -> list[Finding]:
    """The findings of one row (one transform in both runs, on one rank)."""
    b, c = r.baseline, r.candidate
    t, s = r.transform, r.stage
    out: list[Finding] = []
    if b.state in _NOT_COMPARED or c.state in _NOT_COMPARED:
        # stopped inside this transform (reported once, as ADL009 on that run), or restored, not compared
        return out
    if b.stage and c.stage and b.stage != c.stage:
        out.append(STAGE_MOVED.make(transform=t, stage=s, bstage=b.stage, cstage=c.stage))
    if c.state is State.FAILED and b.state is not State.FAILED:
        out.append(FAILED.make(transform=t, stage=s, failure=c.failure or "(no message)"))
    bm = b.matches or 0
    if b.state is State.APPLIED and c.state is State.APPLIED:
        cm = c.matches or 0
        if cm < bm:
            lost = bm - cm
            ev = {"before": bm, "after": cm, "lost": lost, "collapse_fraction": frac}
            if cm == 0 or lost >= frac * bm:
                out.append(COLLAPSE.make(transform=t, stage=s, before=bm, after=cm, collapse=True,
                                         evidence=ev))
            else:
                out.append(PARTIAL.make(transform=t, stage=s, before=bm, after=cm,
                                        pct=round(100 * lost / bm), evidence=ev))
        elif cm > bm:
            out.append(GAIN.make(transform=t, stage=s, before=bm, after=cm))
        return out
    if b.state is State.APPLIED and bm > 0:
        detail = f" ({c.failure})" if c.failure else ""
        out.append(STOPPED.make(transform=t, stage=s, before=bm, state=c.state.value, detail=detail,
                                collapse=True, evidence={"before": bm, "after": 0, "state": c.state.value}))
        return out
    if b.state is State.ABSENT:
        if c.matches:
            out.append(ADDED.make(transform=t, stage=s, cstate=c.state.value, after=c.matches))
        return out
    if c.state is State.ABSENT:
        out.append(REMOVED.make(transform=t, stage=s, bstate=b.state.value))
        return out
    if c.state is State.APPLIED and c.matches and b.state in (State.DISABLED, State.SKIPPED):
        # switched on and matching: a gain, not a state change to review
        out.append(GAIN.make(transform=t, stage=s, before=f"0 ({b.state.value})", after=c.matches,
                             evidence={"before_state": b.state.value, "after": c.matches}))
        return out
    if b.state is not c.state and c.state is not State.FAILED:
        out.append(STATE.make(transform=t, stage=s, bstate=b.state.value, cstate=c.state.value))
    return out


def _moved(rc: RankComparison) -> list[Finding]:
    by = {(r.transform, r.occurrence): r for r in rc.rows}
    out = []
    for m in rc.moved:
        row = by.get((m.transform, m.occurrence))
        if row is not None and row.baseline.stage != row.candidate.stage:
            continue  # a stage move (ADL013) says why it runs elsewhere
        out.append(REORDERED.make(transform=m.transform, stage=m.stage,
                                  bafter=m.baseline_after or "nothing: first",
                                  cafter=m.candidate_after or "nothing: first"))
    return out


def rank_findings(section: LogComparison, frac: float) -> list[Finding]:
    """Every rank's row findings, one per transform and category when several ranks are compared."""
    comps = section.rank_comparisons()
    per: list[tuple[int | None, Finding]] = []
    for rc in comps:
        skip = {i for s in section.stops if s.rank == rc.rank for i in s.skip}
        for row in rc.rows:
            if id(row) not in skip:
                per.extend((rc.rank, f) for f in classify_row(row, frac))
        per.extend((rc.rank, f) for f in _moved(rc))
    if len(comps) == 1:
        return [f for _, f in per]
    return _fold(per, comps)


def _side(s: Side) -> str:
    if s.state is State.APPLIED:
        return "?" if s.matches is None else str(s.matches)
    word: str = s.state.value
    return word


def _values(row: TransformComparison | None) -> str:
    return "not logged" if row is None else f"{_side(row.baseline)} -> {_side(row.candidate)}"


def _rank_name(r: int | None) -> str:
    return "untagged" if r is None else str(r)


def _listing(ranks: list[int | None], values: dict[int | None, str]) -> str:
    """``rank 0: 5 -> 5; ranks 2, 3: 5 -> 4``: ranks grouped by their before -> after."""
    groups: dict[str, list[int | None]] = {}
    for r in ranks:
        groups.setdefault(values[r], []).append(r)
    parts = [f"rank{'s' if len(rs) > 1 else ''} {', '.join(map(_rank_name, rs))}: {v}"
             for v, rs in groups.items()]
    return "; ".join(parts[:6]) + ("; ..." if len(parts) > 6 else "")


_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def _fold(per: list[tuple[int | None, Finding]], comps: tuple[RankComparison, ...]) -> list[Finding]:
    """One finding per (transform, category): the worst rank's message, then which ranks and the others'
    counts (``5 -> 0 on rank 1 of 2 (rank 0: 5 -> 5)``, ``... on all ranks``)."""
    order = [rc.rank for rc in comps]
    primary = order[0]
    rows = {rc.rank: {r.transform: r for r in rc.rows} for rc in comps}
    groups: dict[tuple[str | None, str | None, str], list[tuple[int | None, Finding]]] = {}
    for rank, f in per:
        groups.setdefault((f.transform, f.stage, f.category), []).append((rank, f))
    out = []
    for items in groups.values():
        rep_rank, rep = min(items, key=lambda x: (_ORDER[x[1].severity], not x[1].collapse, x[0] != primary,
                                                  order.index(x[0])))
        hit = {r for r, _ in items}
        affected = [r for r in order if r in hit]
        values = {r: _values(rows[r].get(rep.transform or "")) for r in order}
        if len(affected) == len(order):
            odd = [r for r in order if values[r] != values[rep_rank]]
            suffix = " on all ranks" + (f" ({_listing(odd, values)})" if odd else "")
        else:
            suffix = (f"{rank_scope(affected, len(order))} "
                      f"({_listing([r for r in order if r not in hit], values)})")
        per_rank = {_rank_name(r): values[r] for r in order}
        evidence = {**dict(rep.evidence), "ranks": affected, "rank_values": per_rank}
        if primary not in hit:  # a divergence of other ranks only: the dumps (rank 0's) cannot trace it
            evidence["confined_to_ranks"] = affected
        out.append(replace(rep, message=rep.message + suffix, collapse=any(f.collapse for _, f in items),
                           evidence=tuple(sorted(evidence.items()))))
    return out
