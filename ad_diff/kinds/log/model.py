"""The log kind's model: a parsed AutoDeploy log (:mod:`ad_diff.core.runlog`) and the kind's section, both
runs' logs with their transforms paired into rows rank by rank.

The log's classes live in ``core`` because every kind reads the run's log (the graph kind pairs dumps with its
records, the config kind checks it against the config); this module names them for the log kind's own
stages and for the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ad_diff.core.jsonable import json_omit
from ad_diff.core.model import RunId, TransformComparison
from ad_diff.core.runlog import (
    FINAL_TRANSFORMS,
    AfterEnd,
    IssueKind,
    LogEnd,
    LogIssue,
    RankLog,
    Restore,
    RunLog,
    pipeline_finished,
)


@dataclass(frozen=True, slots=True)
class Moved:
    """A transform both runs ran, at another place in the candidate's pipeline than in the baseline's."""

    stage: str
    transform: str
    occurrence: int
    baseline_after: str | None
    """The transform it followed in the baseline (``None``: it ran first)."""
    candidate_after: str | None


@dataclass(frozen=True, slots=True)
class RankComparison:
    """One rank of the baseline paired with the same rank of the candidate."""

    rank: int | None
    rows: tuple[TransformComparison, ...] = field(metadata=json_omit())
    """One row per transform seen in either run on this rank, in merged pipeline order."""
    moved: tuple[Moved, ...] = ()
    """Transforms both runs ran on this rank, at another position in the candidate's pipeline."""

    @property
    def changed(self) -> list[dict[str, object]]:
        """The rows whose state or match count differs, as the JSON report lists them per rank."""
        return [{"stage": r.stage, "transform": r.transform, "occurrence": r.occurrence,
                 "baseline": {"state": r.baseline.state.value, "matches": r.baseline.matches},
                 "candidate": {"state": r.candidate.state.value, "matches": r.candidate.matches}}
                for r in self.rows if r.changed]

    __json_extra__ = ("changed",)


@dataclass(frozen=True, slots=True)
class Stop:
    """One rank of one run whose transform sequence stops early (the rule: ad_diff.kinds.log.compare)."""

    run: RunId
    rank: int | None
    detail: str
    transform: str | None
    """Where it stopped: the transform it stopped inside, else its last one."""
    stage: str | None
    end: LogEnd
    """How its log ended (``complete`` for a clean log that simply stops: a killed job)."""
    not_reached: tuple[str, ...]
    skip: frozenset[int] = field(default=frozenset(), metadata=json_omit())
    """``id`` of the rows (of this rank's comparison) it never reached: not classified row by row."""


@dataclass(frozen=True, slots=True)
class LogComparison:
    """Both runs' parsed logs and their transforms paired into rows, in pipeline order.

    :attr:`rows` are the primary rank's (rank 0, or ``--rank``): the rows every report shows. :attr:`ranks`
    pairs every rank both runs have, the primary first; findings carry which ranks they are about.
    """

    baseline: RunLog = field(metadata=json_omit())
    candidate: RunLog = field(metadata=json_omit())
    rows: tuple[TransformComparison, ...] = field(metadata=json_omit())
    """One row per transform seen in either run (the rows every report shows)."""
    ranks: tuple[RankComparison, ...] = ()
    """Every rank compared, the primary first."""
    baseline_only_ranks: tuple[int, ...] = ()
    """Ranks only the baseline has (a world size change): not compared."""
    candidate_only_ranks: tuple[int, ...] = ()
    narrowed: bool = False
    """``--rank`` limited the comparison to one rank."""
    stops: tuple[Stop, ...] = ()
    """Every rank of either run whose transform sequence stops early."""

    @property
    def primary_rank(self) -> int | None:
        """The rank whose rows the reports show."""
        return self.ranks[0].rank if self.ranks else self.baseline.rank

    __json_extra__ = ("primary_rank",)

    def rank_comparisons(self) -> tuple[RankComparison, ...]:
        """:attr:`ranks`, or the primary rank's rows alone for a section built from rows only."""
        return self.ranks or (RankComparison(self.candidate.rank, self.rows),)


__all__ = ["FINAL_TRANSFORMS", "AfterEnd", "IssueKind", "LogComparison", "LogEnd", "LogIssue", "Moved",
           "RankComparison", "RankLog", "Restore", "RunLog", "Stop", "pipeline_finished"]
