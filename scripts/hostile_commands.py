"""Hostile input, round four (issue 14): the commands besides the comparison. ``ad-diff candidates`` read a
dump linked out of the run folder and dropped a FIFO without a word; ``ad-diff batch`` followed a model
folder or snapshot linked out of its root and dropped a FIFO named like a model. Links and FIFOs cannot
live in git: every case here is built at test time. The manifest's ``command`` says which command a case
runs; for ``batch``, ``baseline/`` and ``candidate/`` are the two roots, one run folder per model.

Imported by make_hostile_fixtures.py, which sets :data:`h` (its helpers) and :data:`r2` (hostile_round2,
for its link helpers and the canary).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

h: Any = None
"""make_hostile_fixtures itself, set by it when it imports this module."""
r2: Any = None
"""hostile_round2 (``_link``, ``_outside``, ``CANARY``), set by make_hostile_fixtures."""


def _canary_dump() -> str:
    """A final dump whose nodes are named :data:`hostile_round2.CANARY`: read, the name would show up."""
    return h.dump_text("compile", "compile_model").replace("%mm", f"%{r2.CANARY}")


def candidates_dump_symlink_outside(d: Path) -> None:
    """The candidate's final dump links outside the run folder (it was scanned as if it were the run's)."""
    _, c = h._pair(d)
    r2._link(c / "graphs" / "004_compile_compile_model.txt", r2._outside(d, "dump.txt", _canary_dump()))


def candidates_dump_fifo(d: Path) -> None:
    """A FIFO named like the last dump (it was left out: the dump before it was scanned as the final one)."""
    _, c = h._pair(d)
    os.mkfifo(c / "graphs" / "005_compile_late.txt")


def candidates_earlier_dump_refused(d: Path) -> None:
    """An earlier dump linked outside and one a FIFO: not the dump scanned, so notes, and never read."""
    _, c = h._pair(d)
    r2._link(c / "graphs" / "001_export_export_to_gm.txt", r2._outside(d, "dump.txt", _canary_dump()))
    (c / "graphs" / "002_post_export_cleanup_noop_slice.txt").unlink()
    os.mkfifo(c / "graphs" / "002_post_export_cleanup_noop_slice.txt")


def _roots(d: Path, *models: str) -> tuple[Path, Path]:
    """Batch roots ``d/baseline`` and ``d/candidate``: run folder ``ok`` in both, ``models`` in the baseline
    only (the case adds what stands for them in the candidate root)."""
    for name in ("ok", *models):
        h.write_run(d / "baseline" / name, graphs=False)
    h.write_run(d / "candidate" / "ok", graphs=False)
    return d / "baseline", d / "candidate"


def batch_model_symlink_outside(d: Path) -> None:
    """The candidate root's model folder ``far`` links to a run outside the root (it was compared); that
    run's log has one more transform, named :data:`hostile_round2.CANARY` (compared, it would show)."""
    _, c = _roots(d, "far")
    h.write_run(d / "outside" / "far", h.log_text() + h.v3("compile", r2.CANARY, "matches=1"), graphs=False)
    r2._link(c / "far", d / "outside" / "far")


def batch_snapshot_symlink_outside(d: Path) -> None:
    """The baseline root's snapshot ``snap.yaml`` links outside the root (it was read as the baseline)."""
    b, c = _roots(d)
    h.write_run(c / "snap", graphs=False)
    snap = ("ad_diff_snapshot: 1\nsource: elsewhere\ntransforms:\n"
            f"  - {{stage: compile, transform: {r2.CANARY}, state: applied, matches: 1}}\n")
    r2._link(b / "snap.yaml", r2._outside(d, "snap.yaml", snap))


def batch_model_fifo(d: Path) -> None:
    """A FIFO named like a model in each root: the candidate's ``piped`` (once "baseline only") and the
    baseline's ``snap.yaml`` (once left out: its model was listed as new, not compared)."""
    b, c = _roots(d, "piped")
    os.mkfifo(c / "piped")
    os.mkfifo(b / "snap.yaml")
    h.write_run(c / "snap", graphs=False)


CASES: dict[str, Callable[[Path], None]] = {f.__name__: f for f in (
    candidates_dump_symlink_outside, candidates_dump_fifo, candidates_earlier_dump_refused,
    batch_model_symlink_outside, batch_snapshot_symlink_outside, batch_model_fifo,
)}
RUNTIME_ONLY = frozenset(CASES)
