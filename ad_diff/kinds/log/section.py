"""The log kind's section: both runs' parsed logs and their transforms paired into rows."""

from __future__ import annotations

from dataclasses import dataclass

from ad_diff.core.model import TransformComparison
from ad_diff.kinds.log.model import RunLog


@dataclass(frozen=True, slots=True)
class LogComparison:
    """Both runs' parsed logs and their transforms paired into rows, in pipeline order."""

    baseline: RunLog
    candidate: RunLog
    rows: tuple[TransformComparison, ...]
    """One row per transform seen in either run (the rows every report shows)."""
