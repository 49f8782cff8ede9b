"""Both logs measured against each other: rows rank by rank, and every rank whose pipeline stops early.

A rank stops early (ADL009 in docs/rules.md) when its log ends inside a transform or mid-line, when a
traceback or fatal error follows its last result before the pipeline's final transform, or when the other
run (or its own run's primary rank) ran transforms after its last result and it never logged the final
transform: a clean log that simply stops is what a killed job leaves, so a tail of even one transform
counts, unless the rank visibly finished its pipeline (then a later transform the other run ran was left
out, and is compared row by row). A run whose rank stopped has that stop as its ``end``: the reports never
summarise it as complete.
"""

from __future__ import annotations

from dataclasses import replace

from ad_diff.core.model import (
    BASELINE,
    CANDIDATE,
    RUNS,
    RankSides,
    RunId,
    Side,
    State,
    TransformComparison,
)
from ad_diff.kinds.log.align import pair_records, pair_transforms
from ad_diff.kinds.log.model import LogComparison, LogEnd, RankComparison, RankLog, RunLog, Stop

_ABNORMAL = (LogEnd.CRASHED, LogEnd.TRUNCATED)


def log_of(section: LogComparison, run: RunId) -> RunLog:
    """The baseline's or the candidate's log."""
    return section.baseline if run == BASELINE else section.candidate


def _side(r: TransformComparison, run: RunId) -> Side:
    return r.baseline if run == BASELINE else r.candidate


def tail_not_reached(
    rows: tuple[TransformComparison, ...], run: RunId
) -> tuple[list[TransformComparison], str | None]:
    """Rows after this run's last logged transform that only the other run has: never reached."""
    last = max((i for i, r in enumerate(rows) if _side(r, run).state is not State.ABSENT), default=-1)
    tail = [r for r in rows[last + 1 :] if _side(r, run).state is State.ABSENT]
    return tail, (rows[last].transform if last >= 0 else None)


def stopped_early(rl: RankLog, tail: list[TransformComparison]) -> bool:
    """A tail means the rank stopped early unless its log ended normally *and* it finished its pipeline."""
    return bool(tail) and (rl.end is not LogEnd.COMPLETE or not rl.finished)


def _stop(run: RunId, rank: int | None, rl: RankLog, tail: list[TransformComparison], last: str | None,
          other: str) -> Stop:
    parts = []
    if rl.end in _ABNORMAL:
        parts.append(f"{rl.end.value} ({rl.end_detail})")
    stopped = next((r for r in reversed(rl.transforms) if r.state is State.INCOMPLETE), None)
    if tail:
        first = tail[0]
        how = "inside" if stopped is not None and stopped.transform == last else "after"
        part = (f"its log stops {how} {last or 'no transform'}; {len(tail)} transform(s) {other} ran were "
                f"never reached (first: {first.stage}/{first.transform})")
        if rl.end is LogEnd.COMPLETE:
            part += "; no error was logged (a killed job logs none)"
        parts.append(part)
    where = stopped or (rl.transforms[-1] if rl.transforms else None)
    return Stop(run, rank, "; ".join(parts), where.transform if where else None,
                where.stage if where else None, rl.end, tuple(r.transform for r in tail),
                frozenset(id(r) for r in tail))


def stops(section: LogComparison) -> list[Stop]:
    """Every rank of either run that stopped early: against the same rank of the other run, and against
    its own run's primary rank (a rank that dies while rank 0 completes)."""
    out: list[Stop] = []
    for rc in section.rank_comparisons():
        for run in RUNS:
            log = log_of(section, run)
            rl = log.rank_log(rc.rank) or log.primary
            if not rl.transforms:
                continue  # rows judged without a log behind them (history): nothing says where it stopped
            tail, last = tail_not_reached(rc.rows, run)
            tail = tail if stopped_early(rl, tail) else []
            if rl.end in _ABNORMAL or tail:
                out.append(_stop(run, rc.rank, rl, tail, last, "the other run"))
    for run in RUNS:
        log = log_of(section, run)
        primary = log.primary
        for rl in log.rank_logs():
            if rl.rank == primary.rank or any(s.run == run and s.rank == rl.rank for s in out):
                continue
            tail, last = tail_not_reached(pair_transforms(primary, rl), CANDIDATE)
            tail = tail if stopped_early(rl, tail) else []
            if rl.end in _ABNORMAL or tail:
                out.append(_stop(run, rl.rank, rl, tail, last, f"rank {primary.rank}"))
    return out


def _tagged(log: RunLog) -> set[int]:
    return {rl.rank for rl in log.rank_logs() if rl.rank is not None}


def _rank_comparison(b: RankLog, c: RankLog, rank: int | None, ignore: tuple[str, ...]) -> RankComparison:
    rows, moved = pair_records(b.transforms, c.transforms, ignore, (b.restored, c.restored))
    return RankComparison(rank, rows, moved)


def _ended(log: RunLog, found: list[Stop], run: RunId) -> RunLog:
    """``log`` with the end of the run as a whole: the first stop of its ranks (the primary first)."""
    mine = sorted((s for s in found if s.run == run), key=lambda s: (s.rank != log.rank, s.rank or 0))
    if not mine:
        return log
    lead = mine[0]
    if lead.rank == log.rank and lead.end is not LogEnd.COMPLETE:
        return log  # the primary rank's own end already says how it stopped
    end = LogEnd.STOPPED if lead.end is LogEnd.COMPLETE else lead.end
    who = f"rank {lead.rank}: " if len(log.rank_logs()) > 1 else ""
    return replace(log, end=end, end_detail=who + lead.detail)


def _unreached(rc: RankComparison, baseline: RunLog, candidate: RunLog) -> set[int]:
    """``id`` of the rows of ``rc`` that a run's rank never reached because it stopped early (not compared:
    the stop is reported once, ADL009)."""
    out: set[int] = set()
    for run, log in ((BASELINE, baseline), (CANDIDATE, candidate)):
        rl = log.rank_log(rc.rank)
        tail, _ = tail_not_reached(rc.rows, run)
        if rl is not None and stopped_early(rl, tail):
            out |= {id(r) for r in tail}
    return out


def _with_elsewhere(primary: RankComparison, others: list[RankComparison], baseline: RunLog,
                    candidate: RunLog) -> RankComparison:
    """The primary rank's rows, each naming the other ranks on which the transform changed (rows a stopped
    rank never reached are not changes: they were not compared)."""
    skip = set().union(*(_unreached(rc, baseline, candidate) for rc in others))
    by_rank = [(rc.rank, {(r.transform, r.occurrence): r for r in rc.rows if id(r) not in skip})
               for rc in others]
    rows = []
    for r in primary.rows:
        seen = [(rank, got.get((r.transform, r.occurrence))) for rank, got in by_rank]
        diff = tuple(RankSides(rank, o.baseline, o.candidate) for rank, o in seen
                     if o is not None and o.changed)
        rows.append(replace(r, elsewhere=diff) if diff else r)
    return replace(primary, rows=tuple(rows))


def compare_logs(
    baseline: RunLog, candidate: RunLog, ignore: tuple[str, ...] = (), narrowed: bool = False
) -> LogComparison:
    """Pair both logs rank by rank (the primary ranks first: their rows are the report's, then every other
    rank both runs have, unless ``narrowed`` by ``--rank``) and find the ranks that stop early."""
    b_ranks, c_ranks = _tagged(baseline), _tagged(candidate)
    label = candidate.rank if candidate.rank is not None else baseline.rank
    primary = _rank_comparison(baseline.primary, candidate.primary, label, ignore)
    comps = [primary]
    if not narrowed:
        for r in sorted((b_ranks & c_ranks) - {baseline.rank, candidate.rank}):
            brl, crl = baseline.rank_log(r), candidate.rank_log(r)
            if brl is not None and crl is not None:  # both have it: r is in both tagged sets
                comps.append(_rank_comparison(brl, crl, r, ignore))
    if len(comps) > 1:
        primary = _with_elsewhere(primary, comps[1:], baseline, candidate)
        comps[0] = primary
    section = LogComparison(
        baseline, candidate, primary.rows, tuple(comps),
        baseline_only_ranks=tuple(sorted(b_ranks - c_ranks)) if c_ranks else (),
        candidate_only_ranks=tuple(sorted(c_ranks - b_ranks)) if b_ranks else (),
        narrowed=narrowed,
    )
    found = stops(section)
    return replace(section, baseline=_ended(baseline, found, BASELINE),
                   candidate=_ended(candidate, found, CANDIDATE), stops=tuple(found))
