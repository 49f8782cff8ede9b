"""What one configured transform did, as the fixture log writer needs it (no torch, so the benchmark
generators in ``scripts/benchgen`` can write logs without importing it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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
    said: tuple[tuple[str, str], ...] = ()
    """``(level, message)`` lines the transform's own code logged while it applied (``ad_logger.info(...)``
    inside ``_apply``): the interface adds its context to them or not, depending on its version (the log
    writer decides)."""


_SINK: list[list[tuple[str, str]]] = []


def say(message: str, level: str = "info") -> None:
    """Log ``message`` from inside a transform, as its own code calls ``ad_logger``; outside :func:`saying`
    it goes nowhere."""
    if _SINK:
        _SINK[-1].append((level, message))


@contextmanager
def saying() -> Iterator[list[tuple[str, str]]]:
    """Collect what :func:`say` logs while the block runs (one transform's ``_apply``)."""
    _SINK.append([])
    try:
        yield _SINK[-1]
    finally:
        _SINK.pop()
