"""Naming the anonymous results of an L2 log (no ``[stage=..., transform=...]``): from the run's dumps, then
from the other run's pipeline.

A logger that drops the transform context prints what each transform did without saying which transform it
was; the results are still in pipeline order, so their names follow from where they stand. Which transform
stood there is a fact of the run (its dumps say it, or the other run's pipeline around the same neighbours
says it); how the logger printed it is not. Every rank is named: all ranks run the same pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from ad_diff.core.model import State, TransformRecord
from ad_diff.kinds.log.model import LogEnd, RankLog, RunLog

Names = Sequence[tuple[str, str]]
"""``(stage, transform)`` in pipeline order."""


def _anonymous(records: Sequence[TransformRecord], finished: bool = False) -> list[int]:
    """Indexes of the unnamed records (``finished``: only those whose result came, so a dump was written)."""
    return [i for i, r in enumerate(records)
            if r.stage == "?" and not (finished and r.state is State.INCOMPLETE)]


def _renamed(log: RunLog, name: Callable[[RankLog], tuple[TransformRecord, ...]]) -> RunLog:
    """``log`` with every rank's records named by ``name`` (the primary's up front as well)."""
    ranks = tuple(replace(rl, transforms=name(rl)) for rl in log.rank_logs())
    primary = next((rl for rl in ranks if rl.rank == log.rank), ranks[0])
    return replace(log, transforms=primary.transforms, ranks=ranks if log.ranks else ())


def attribute(log: RunLog, names: Names) -> tuple[RunLog, str]:
    """Name a log's anonymous (``#n``) records from ``names`` = the (stage, transform) of each dump file.

    AD writes one dump per transform in pipeline order, except transforms that see no GraphModule (the
    factory stage's ``build_model``), which write none. So the dumps name the *last* ``len(names)`` results;
    earlier extra results stay unattributed (:func:`from_other` may name them). Returns the new log and a
    sentence saying what was done.
    """
    anon = _anonymous(log.transforms, finished=True)
    if not anon:
        return log, ""
    what = f"{len(anon)} result line(s) name no transform (L2 logger)"
    if not names:
        return log, f"{what} and there are no dumps to name them"
    if len(names) > len(anon):
        return log, f"{what} but graphs/ holds {len(names)} dumps; they were left unattributed"

    def name(rl: RankLog) -> tuple[TransformRecord, ...]:
        recs = list(rl.transforms)
        mine = _anonymous(recs, finished=True)
        offset = len(mine) - len(names)
        if offset < 0:
            return rl.transforms
        for k, (stage, transform) in enumerate(names):
            recs[mine[offset + k]] = replace(recs[mine[offset + k]], stage=stage, transform=transform)
        return tuple(recs)

    offset = len(anon) - len(names)
    return _renamed(log, name), (
        f"{what}; {len(names)} named from the graphs/ dump order"
        + (f", the first {offset} left unattributed" if offset else ""))


def _from(records: tuple[TransformRecord, ...], other: Sequence[TransformRecord], prefix: bool = False,
          ids: bool = False) -> tuple[TransformRecord, ...]:
    """Each run of anonymous records between two named ones takes the names the other run has between the
    same two, where it has exactly as many; a run at the start (end) takes the names right before (after)
    the same neighbour, pipeline order being the same on both sides of it; a log with no named record takes
    the other's names only when it has as many (``prefix``: or fewer, from the start: another rank of the
    same run, which runs the same pipeline and may have stopped early). ``ids``: the other's unnamed records
    lend their position id (``#n``) too, which names the same result in both (another rank of one run)."""
    where = {(r.transform, r.occurrence): i for i, r in enumerate(other) if r.stage != "?"}
    recs = list(records)
    i = 0
    while i < len(recs):
        if recs[i].stage != "?":
            i += 1
            continue
        j = i
        while j < len(recs) and recs[j].stage == "?":
            j += 1
        n = j - i
        left = where.get((recs[i - 1].transform, recs[i - 1].occurrence), -2) + 1 if i else None
        right = where.get((recs[j].transform, recs[j].occurrence), -1) if j < len(recs) else None
        if left is None and right is None:
            theirs = other if len(other) == n else other[:n] if prefix and n < len(other) else ()
        elif left is None:
            theirs = other[max(0, right - n):right] if right is not None and right >= 0 else ()
        elif right is None:
            theirs = other[left:left + n] if left >= 0 else ()
        else:
            theirs = other[left:right] if left >= 0 and right >= 0 else ()
        if len(theirs) == n and (ids or all(r.stage != "?" for r in theirs)):
            for k, r in enumerate(theirs):
                recs[i + k] = replace(recs[i + k], stage=r.stage, transform=r.transform)
        i = j
    return tuple(recs)


def from_other(log: RunLog, other: RunLog) -> tuple[RunLog, str]:
    """Name the anonymous records the dumps did not from the other run's pipeline (same rank, else its
    primary) and then every other rank from this run's own primary, and say how many were named."""
    before = sum(len(_anonymous(rl.transforms)) for rl in log.rank_logs())
    if not before:
        return log, ""

    def name(rl: RankLog) -> tuple[TransformRecord, ...]:
        theirs = other.rank_log(rl.rank) or other.primary
        return _from(rl.transforms, theirs.transforms)

    named = _same_as_primary(_renamed(log, name))
    n = before - sum(len(_anonymous(rl.transforms)) for rl in named.rank_logs())
    return named, (f"{n} result line(s) that name no transform named from the pipeline around the same "
                   "neighbours" if n else "")


def _same_as_primary(log: RunLog) -> RunLog:
    """Every other rank's unnamed records named as the primary rank's at the same position (positional ids
    included): the ranks of one run run the same pipeline."""
    own = log.primary.transforms
    return _renamed(log, lambda rl: rl.transforms if rl.rank == log.rank
                    else _from(rl.transforms, own, prefix=True, ids=True))


def _by_position(log: RunLog, other: RunLog) -> RunLog | None:
    """``log`` with every record of its primary named as the other run's at the same position (positional
    ids included) and the other ranks as the primary; ``None`` where the primaries differ in length."""
    mine, theirs = log.primary.transforms, other.primary.transforms
    if len(mine) != len(theirs) or not _anonymous(mine):
        return None
    named = tuple(replace(r, stage=t.stage, transform=t.transform) if r.stage == "?" else r
                  for r, t in zip(mine, theirs, strict=True))
    return _same_as_primary(_renamed(log, lambda rl: named if rl.rank == log.rank else rl.transforms))


def _dumps_fit(log: RunLog, names: Names) -> bool:
    """Every dump names a finished record, in order: the dumps are a subsequence of the log's names."""
    seq = iter((r.stage, r.transform) for r in log.transforms if r.state is not State.INCOMPLETE)
    return all(any(n == got for got in seq) for n in names)


def _configured(pipeline: Names) -> RunLog:
    """The run's configured pipeline as a log to name results from (one rank, names only)."""
    recs = tuple(TransformRecord(stage, t, 0, State.APPLIED, None, 0) for stage, t in pipeline)
    return RunLog(Path("config"), recs, None, (), (), (), (), LogEnd.COMPLETE, "")


def name_results(log: RunLog, names: Names | None, other: RunLog, pipeline: Names = ()
                 ) -> tuple[RunLog, list[str]]:
    """``log`` with its anonymous results named, and sentences saying how.

    Where the other run is as long, its pipeline names every result by position (an unnamed one of it lends
    its position id), if the dumps (``names``, ``None`` when the run has none) fit that naming; else the
    dumps name the last results they can (:func:`attribute`), and the other run's pipeline, then the run's
    own configured ``pipeline`` (its complete config, in AD's order), name the rest around their
    neighbours."""
    if not any(_anonymous(rl.transforms) for rl in log.rank_logs()):
        return log, []
    trial = _by_position(log, other)
    if trial is not None and _dumps_fit(trial, names or []):
        return trial, ["result lines that name no transform named by position from the other run's pipeline"]
    notes = []
    if names is not None:
        log, said = attribute(log, names)
        notes.append(said)
    log, said = from_other(log, other)
    notes.append(said)
    if pipeline:
        log, said = from_other(log, _configured(pipeline))
        notes.append(said.replace("from the pipeline", "from the run's configured pipeline"))
    return log, [n for n in notes if n]


__all__ = ["attribute", "from_other", "name_results"]
