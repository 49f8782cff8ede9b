"""Frozen dataclasses of a parsed AutoDeploy log: how each rank's pipeline ended, what the parser could not
read, the records of every rank. Shared by every kind (the run's log is the spine of a comparison); the log
kind parses it (:mod:`ad_diff.kinds.log.parse`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ad_diff.core.model import TransformRecord
from ad_diff.core.words import WordEnum

FINAL_TRANSFORMS = frozenset({"compile_model"})
"""Transforms that end every AutoDeploy pipeline known (FORMATS.md §4.1: the compile stage's last key). A rank
that logged one of them, or a transform of the ``export_onnx`` stage that only runs after them, finished its
pipeline: an error printed after that is printed at shutdown, and a transform the other run ran after it
was left out, not missed."""


def pipeline_finished(records: Sequence[TransformRecord]) -> bool:
    """Whether ``records`` reach the end of the pipeline (see :data:`FINAL_TRANSFORMS`)."""
    return any(r.transform in FINAL_TRANSFORMS or r.stage == "export_onnx" for r in reversed(records))


class LogEnd(str, Enum):
    """How a rank's pipeline ended, which decides whether its transforms can be trusted to be complete."""

    COMPLETE = "complete"
    """The last transform finished and nothing suggests a crash (an error printed after the pipeline's final
    transform, or an exception Python reports as ignored, is no crash: see ``RankLog.after_end``)."""
    CRASHED = "crashed"
    """A Python traceback or fatal error follows the last transform result, before the pipeline's final
    transform (or inside a transform)."""
    TRUNCATED = "truncated"
    """The log stops inside a transform or mid-line."""
    STOPPED = "stopped"
    """The log ends cleanly, but before transforms the other run (or the run's primary rank) reached and
    without the pipeline's final transform: what a killed job leaves. Set only by comparing the runs
    (:mod:`ad_diff.kinds.log.compare`), never by the parser."""
    EMPTY = "empty"
    """The log holds no AutoDeploy transform line at all."""


class IssueKind(str, Enum):
    """What sort of thing a :class:`LogIssue` records."""

    UNRECOGNISED = "unrecognised"
    """A line that looks like an AutoDeploy transform result but matches no known format."""
    NO_RESULT = "no_result"
    """A transform started (cleanup/apply lines) and the next one began without its result line."""
    RETRY = "retry"
    """A transform key came again: the pipeline started over here (the last pipeline is used)."""
    ENCODING = "encoding"
    """Lines held bytes that are not UTF-8 (shown as U+FFFD)."""


@dataclass(frozen=True, slots=True)
class LogIssue:
    """Something the log parser noticed but could not (or should not) turn into a record."""

    line: int
    kind: IssueKind
    text: str


class Cache(WordEnum):
    """Which of AD's caches a run restored its graph from (FORMATS.md section 7)."""

    PIPELINE = "pipeline_cache"
    """The pipeline cache (``pipeline_cache`` transform config): a snapshot saved at a boundary transform,
    logged ``Restored AutoDeploy pipeline snapshot for '<boundary>' from <dir>``."""
    GRAPH = "graph_cache"
    """The graph cache (``AD_ENABLE_CACHING=1``): the graph from before weight loading, logged
    ``[cache] Loaded graph from <dir>/graph.pt``; no boundary is named."""

    @property
    def label(self) -> str:
        """How a sentence names it."""
        return "AD's pipeline cache" if self is Cache.PIPELINE else "AD's graph cache"


@dataclass(frozen=True, slots=True)
class Restore:
    """A run-level event: the run restored a cached graph instead of running the transforms before it.

    The transforms up to the restore point never ran in this run (FORMATS.md section 7): no result lines, no
    dumps. The point is ``boundary`` when the cache names it (the pipeline cache), else the first transform
    the rank logged after the restore line (``after`` results were logged before it).
    """

    boundary: str | None
    """The transform key the snapshot was saved at (``None``: the cache names none)."""
    source: str
    """The snapshot folder or file the log names."""
    line: int
    cache: Cache = Cache.PIPELINE
    after: int = 0
    """How many results the rank had logged (in its current pipeline) before the restore line."""


class EventKind(WordEnum):
    """Run-level events read from a log besides transform results (what the run did, not how it printed)."""

    SNAPSHOT_SAVED = "snapshot_saved"
    """The run saved a pipeline-cache snapshot (a later run may restore it)."""
    CACHE_SAVED = "cache_saved"
    """The run saved its graph to the graph cache."""
    CACHE_REBUILT = "cache_rebuilt"
    """A cache entry was corrupt or its manifest did not match, so the run ran the transforms itself."""
    CACHE_OTHER = "cache_other"
    """Other cache book-keeping (eviction, a failed write): no effect on what ran."""


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One run-level event of one rank (see :class:`EventKind`); the restore that took effect is
    :attr:`RankLog.restored`."""

    kind: EventKind
    line: int
    text: str
    """The message, bounded (no logger prefix)."""


@dataclass(frozen=True, slots=True)
class AfterEnd:
    """An error printed after a rank's last transform result that did not stop its pipeline.

    Either Python's ``Exception ignored in: ...`` (a ``__del__`` or ``atexit`` hook failing at shutdown,
    which never ends the program) or any traceback once the pipeline's final transform had run.
    """

    line: int
    text: str
    """The error's last line (``AttributeError: 'NoneType' object has no attribute 'shutdown'``)."""
    ignored: bool
    """Python reported it as ``Exception ignored ...``."""
    path: Path | None = None
    """The file it is in, when the log has several."""


@dataclass(frozen=True, slots=True)
class RankLog:
    """One rank's pipeline as its log lines tell it."""

    rank: int | None
    """``None`` for lines that carry no rank tag (and no launcher or file tells the rank)."""
    path: Path
    """The file its transform lines are in."""
    transforms: tuple[TransformRecord, ...]
    """In pipeline order; a transform it stopped inside comes last, state ``incomplete``."""
    end: LogEnd
    end_detail: str
    pipelines: int = 1
    restored: Restore | None = None
    after_end: AfterEnd | None = None
    finished: bool = False
    """It logged the pipeline's final transform (:func:`pipeline_finished`)."""
    events: tuple[RunEvent, ...] = ()
    """Run-level events of this rank other than the restore (cache saves and rebuilds), in log order."""
    error: str | None = None
    """For a crashed rank: the error that ended it (a traceback's last line, a fatal AD message)."""


@dataclass(frozen=True, slots=True)
class RunLog:
    """Everything ad-diff knows about one run's log: the compared (primary) rank up front, every rank in
    :attr:`ranks`."""

    path: Path
    transforms: tuple[TransformRecord, ...]
    """Records of the primary rank, in pipeline (log) order."""
    rank: int | None
    """The primary rank: the one whose rows the reports show (``None`` when lines carry no rank tag)."""
    ranks_seen: tuple[int, ...]
    rank_disagreement: tuple[str, ...]
    """Transforms where another rank logged a different state or count than the primary rank
    (``stage/transform (rank n)``), empty if none."""
    formats: tuple[str, ...]
    """Message formats seen: ``V0``..``V3``."""
    prefixes: tuple[str, ...]
    """AD logger prefixes seen: ``L1`` (TRT-LLM logger), ``L2``/``L3`` (standalone), ``bare``."""
    end: LogEnd
    end_detail: str
    """Human sentence explaining ``end`` (e.g. the traceback's last line)."""
    issues: tuple[LogIssue, ...] = ()
    pipelines: int = 1
    """How many pipeline starts were seen (``>1`` means a retry in the same log; the last one is used)."""
    lines: int = 0
    restored: Restore | None = None
    """Set when the run restored a pipeline-cache snapshot instead of running the transforms before it."""
    anonymous: int = 0
    """Result lines that named no transform (the L2 logger drops the ``[stage=..., transform=...]`` prefix);
    their records are named ``#<n>`` until :func:`ad_diff.kinds.log.attribute.attribute` names them."""
    ranks: tuple[RankLog, ...] = ()
    """Every rank with transform lines (the primary included), by rank; empty for a snapshot baseline."""
    sources: tuple[Path, ...] = ()
    """Every file read (one per rank, or stdout and stderr, when the run was captured that way)."""
    capture: tuple[str, ...] = ()
    """Capture prefixes stripped from its lines (``iso-timestamp``, ``mpirun``, ...; see discover.capture)."""

    def rank_logs(self) -> tuple[RankLog, ...]:
        """:attr:`ranks`, or the primary rank alone for a log built without them (a snapshot baseline)."""
        if self.ranks:
            return self.ranks
        return (RankLog(self.rank, self.path, self.transforms, self.end, self.end_detail, self.pipelines,
                        self.restored, None, pipeline_finished(self.transforms)),)

    def rank_log(self, rank: int | None) -> RankLog | None:
        """The :class:`RankLog` of ``rank`` (``None`` if this run has no lines of it)."""
        return next((r for r in self.rank_logs() if r.rank == rank), None)

    @property
    def primary(self) -> RankLog:
        """The primary rank's :class:`RankLog`."""
        got = self.rank_log(self.rank)
        return got if got is not None else self.rank_logs()[0]
