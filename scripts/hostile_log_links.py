"""Hostile input, round three (issue 14): log files and per-rank log folders that link out of the run folder,
or are FIFOs. Discovery once dropped them without a word (a linked-out ad.log became "no log found" or
another log; a dropped rank made the run look smaller) or, for a FIFO in a per-rank layout, blocked for
ever in ``open()``. Links and FIFOs cannot live in git: every case here is built at test time.

Imported by make_hostile_fixtures.py, which sets :data:`h` (its helpers) and :data:`r2` (hostile_round2,
for its link helpers and the token).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

h: Any = None
"""make_hostile_fixtures itself, set by it when it imports this module."""
r2: Any = None
"""hostile_round2 (``_link``, ``_outside``, ``TOKEN``), set by make_hostile_fixtures."""


def _secret_log() -> str:
    """A complete AD log holding a token: the file a link points at, which must never be read."""
    return h.log_text() + f"[AUTO-DEPLOY] [INFO] token {r2.TOKEN}\n"


def log_symlink_outside(d: Path) -> None:
    """The candidate's ``ad.log`` links outside; a ``run.log`` sits next to it (it was compared instead)."""
    _, c = h._pair(d)
    (c / "run.log").write_text(h.log_text())
    r2._link(c / "ad.log", r2._outside(d, "secret.log", _secret_log()))


def log_fifo(d: Path) -> None:
    """The candidate's ``ad.log`` is a FIFO (it was left out: "no *.log file")."""
    _, c = h._pair(d)
    (c / "ad.log").unlink()
    os.mkfifo(c / "ad.log")


def _ranks(run: Path, layout: str) -> Path:
    """Replace ``run/ad.log`` by two ranks' logs in a torchrun or mpirun layout; returns rank 1's folder."""
    (run / "ad.log").unlink()
    for rank in (0, 1):
        folder = run / ("logs/none_x/attempt_0" if layout == "torchrun" else "out/1") / (
            str(rank) if layout == "torchrun" else f"rank.{rank}")
        folder.mkdir(parents=True)
        name = "stdout.log" if layout == "torchrun" else "stdout"
        (folder / name).write_text(h.log_text(rank=rank))
    return folder


def rank_log_symlink_outside(d: Path) -> None:
    """torchrun --log-dir: rank 1's ``stdout.log`` links outside (rank 1 was dropped: one rank compared)."""
    b, c = h._pair(d)
    _ranks(b, "torchrun")
    rank1 = _ranks(c, "torchrun")
    r2._link(rank1 / "stdout.log", r2._outside(d, "secret.log", _secret_log()))


def rank_log_fifo(d: Path) -> None:
    """mpirun --output-filename: rank 1's ``stdout`` is a FIFO (opened: the comparison blocked for ever)."""
    b, c = h._pair(d)
    _ranks(b, "mpirun")
    rank1 = _ranks(c, "mpirun")
    (rank1 / "stdout").unlink()
    os.mkfifo(rank1 / "stdout")


def rank_folder_symlink_outside(d: Path) -> None:
    """mpirun --output-filename: the ``rank.1`` folder links outside (never walked into: rank 1 dropped)."""
    b, c = h._pair(d)
    _ranks(b, "mpirun")
    rank1 = _ranks(c, "mpirun")
    (rank1 / "stdout").write_text(_secret_log())
    away = d / "outside" / "rank.1"
    away.parent.mkdir(exist_ok=True)
    rank1.rename(away)
    r2._link(rank1, away)


CASES: dict[str, Callable[[Path], None]] = {f.__name__: f for f in (
    log_symlink_outside, log_fifo, rank_log_symlink_outside, rank_log_fifo, rank_folder_symlink_outside,
)}
RUNTIME_ONLY = frozenset(CASES)
