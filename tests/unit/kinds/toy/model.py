"""The toy kind's measurement: both runs' numbers (no verdict)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToyComparison:
    """Both runs' toy numbers, and how many transforms the log kind paired (read from the context)."""

    baseline: int
    candidate: int
    transforms: int
