"""What one configured transform did, as the fixture log writer needs it (no torch, so the benchmark
generators in ``scripts/benchgen`` can write logs without importing it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    """What one configured transform did."""

    stage: str
    key: str
    state: str
    """``applied`` | ``skipped`` | ``disabled`` | ``failed`` | ``crashed``."""
    matches: int = 0
    error: str = ""
    shape_prop: bool = False
    mem_gb: float = 0.0
