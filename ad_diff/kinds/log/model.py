"""Frozen dataclasses of a parsed AutoDeploy log: how it ended, what it could not read, its records."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ad_diff.core.model import TransformRecord


class LogEnd(str, Enum):
    """How a log ended, which decides whether its transforms can be trusted to be complete."""

    COMPLETE = "complete"
    """The last transform finished and nothing suggests a crash."""
    CRASHED = "crashed"
    """A Python traceback or fatal error follows the last transform result."""
    TRUNCATED = "truncated"
    """The log stops inside a transform or mid-line."""
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


@dataclass(frozen=True, slots=True)
class Restore:
    """A pipeline-cache restore: ``Restored AutoDeploy pipeline snapshot for '<boundary>' from <dir>``.

    The transforms up to and including ``boundary`` never ran in this run (FORMATS.md section 7).
    """

    boundary: str
    """The transform key the snapshot was saved at."""
    source: str
    """The snapshot folder the log names."""
    line: int


@dataclass(frozen=True, slots=True)
class RunLog:
    """Everything ad-diff knows about one run's log."""

    path: Path
    transforms: tuple[TransformRecord, ...]
    """Records of the selected rank, in pipeline (log) order."""
    rank: int | None
    """The rank whose lines were used (``None`` when lines carry no rank tag)."""
    ranks_seen: tuple[int, ...]
    rank_disagreement: tuple[str, ...]
    """Transforms whose state or count differs between ranks (``stage/transform``), empty if none."""
    formats: tuple[str, ...]
    """Message formats seen: ``V0``..``V3``."""
    prefixes: tuple[str, ...]
    """Line prefixes seen: ``L1`` (TRT-LLM logger), ``L2``/``L3`` (standalone), ``bare``."""
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
    their records are named ``#<n>`` until :func:`ad_diff.parsers.log.attribute` names them from dumps."""
