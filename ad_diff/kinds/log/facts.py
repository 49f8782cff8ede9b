"""The log kind's facts for the accounting pass (:class:`ad_diff.core.facts.Facts`).

What a run's log says it *did*, per rank: each transform's result (state and count), whether it restored a
cached graph, restarted or stopped, and the lines each transform logged that no reader claims. How the log
printed it (format V0-V3, logger prefix, verbosity, capture prefixes, file names, compression) is no fact:
the parser read all of that into the same :class:`~ad_diff.core.runlog.RunLog`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ad_diff.core.facts import Difference, Evidence, Facts, Item, SaidKey
from ad_diff.core.model import BASELINE, CANDIDATE, State
from ad_diff.kinds.log.model import LogComparison, LogEnd, RunLog

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context


def _rank(log: RunLog, rank: int | None, primary: int | None) -> int | None:
    """The rank a fact is about: the primary ranks of both runs are paired whatever their tags say (lines
    that carry no rank tag are how a log was printed, the same rank as the other run's ``[RANK 0]``)."""
    return primary if rank == log.rank else rank


def _results(log: RunLog, ignored: frozenset[str], primary: int | None
             ) -> dict[str, tuple[str, int | None, str, str]]:
    """``{rank/transform#occurrence: (state and count, rank, stage, transform)}`` for every rank."""
    out: dict[str, tuple[str, int | None, str, str]] = {}
    for rk in log.rank_logs():
        rank = _rank(log, rk.rank, primary)
        for r in rk.transforms:
            if r.transform in ignored:
                continue
            value = r.state.value if r.matches is None else f"{r.state.value} {r.matches}"
            key = f"{'-' if rank is None else rank}/{r.transform}" + (
                f"#{r.occurrence}" if r.occurrence else "")
            out[key] = (value, rank, r.stage, r.transform)
    return out


def _said(log: RunLog, ignored: frozenset[str], primary: int | None) -> dict[SaidKey, Counter[str]]:
    """Every rank's unclaimed transform lines, by rank and transform."""
    out: dict[SaidKey, Counter[str]] = {}
    for rk in log.rank_logs():
        rank = _rank(log, rk.rank, primary)
        for r in rk.transforms:
            if r.said and r.transform not in ignored:
                out[(rank, r.stage, r.transform, r.occurrence)] = Counter(dict(r.said))
    return out


def facts(section: LogComparison, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
    """The log's facts of both runs; fills the log part of ``ev``. ``ignored``: transforms left out with
    ``--ignore-transform``."""
    out = Facts()
    logs = {BASELINE: section.baseline, CANDIDATE: section.candidate}
    primary = section.primary_rank
    b, c = _results(logs[BASELINE], ignored, primary), _results(logs[CANDIDATE], ignored, primary)
    out.sizes.append((Item.TRANSFORM, len(b), len(c)))
    for key in sorted(b.keys() | c.keys()):
        bv, cv = b.get(key), c.get(key)
        if bv is not None and cv is not None and bv[0] == cv[0]:
            continue
        _, rank, stage, transform = bv or cv  # type: ignore[misc]  # one side is set
        who = f"rank {rank} " if rank is not None else ""
        out.differences.append(Difference(Item.TRANSFORM, f"{who}{transform} result", bv and bv[0],
                                          cv and cv[0], transform=transform, stage=stage, rank=rank, key=key))
    ev.record_diffs = {d.transform for d in out.differences if d.transform}
    ev.primary.add(primary)
    for run, log in logs.items():
        if log.pipelines > 1:
            ev.restarted.add(run)
        for rk in log.rank_logs():
            rank = _rank(log, rk.rank, primary)
            ev.ranks.add((run, rank))
            if rk.end is not LogEnd.COMPLETE:
                ev.stopped.add((run, rank))
    ev.restored_transforms = {
        r.transform for rc in section.rank_comparisons() for r in rc.rows
        if State.RESTORED in (r.baseline.state, r.candidate.state)
    }
    out.said = (_said(logs[BASELINE], ignored, primary), _said(logs[CANDIDATE], ignored, primary))
    return out


__all__ = ["facts"]
