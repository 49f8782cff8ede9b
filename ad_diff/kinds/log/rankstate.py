"""The log parser's state per rank (:class:`RankState`), a transform it saw start (:class:`Pending`) and an
error it read (:class:`Error`): the values :mod:`.state` updates line by line and :mod:`.ranks` reads."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ad_diff.core.model import TransformRecord
from ad_diff.core.runlog import Restore, RunEvent


@dataclass
class Pending:
    """A transform seen starting (cleanup/apply lines) whose result line has not come yet."""

    stage: str
    transform: str
    line: int
    pos: int
    """Position over all files of ``line``."""
    failure: str | None = None


@dataclass
class RankState:
    """Per-rank state machine: records of the current pipeline plus the ones before a restart."""

    path: Path
    records: list[TransformRecord] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    pending: Pending | None = None
    pipelines: int = 1
    restarts: list[int] = field(default_factory=list)
    last_pos: int = 0
    """Position (over all files) of its last result line: what came after it came after the pipeline."""
    restored: Restore | None = None
    said: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    """(stage, transform) -> the unclaimed lines it logged (``TransformRecord.said``), this pipeline."""
    loose: Counter[str] | None = None
    """Unclaimed lines without transform context since the last result or start marker: a V0 log has no
    start markers, so they belong to the next result; a start marker shows they were outside any transform."""
    events: list[RunEvent] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Error:
    """A traceback's last line or a fatal signal: where (position, file, line), whose, and whether Python
    reported it as ignored (``Exception ignored in: ...``)."""

    pos: int
    rank: int | None
    path: Path
    line: int
    text: str
    ignored: bool


__all__ = ["Error", "Pending", "RankState"]
