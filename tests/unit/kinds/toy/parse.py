"""The toy kind's parse stage: a run's ``toy.txt`` holds one whole number."""

from __future__ import annotations

from pathlib import Path


def parse(root: Path) -> int | None:
    """The number in ``root/toy.txt``; ``None`` when the run has none."""
    path = root / "toy.txt"
    return int(path.read_text().strip()) if path.is_file() else None
