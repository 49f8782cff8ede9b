"""Frozen dataclasses of a history: the inputs found (leaves, runs), what was read, and what changed.

A *leaf* is one (run, model) input: a run folder or a snapshot file. A *run* is one point in time; it
holds one leaf per model. Steps, pending changes and flaky transforms are per (model, transform).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core.model import State
from ad_diff.settings import FailOn

if TYPE_CHECKING:
    import pandas as pd

    from ad_diff.gate import Verdict

#: Leaf kinds: a run folder (AD log, optional run.json) or a snapshot file written by `ad-diff snapshot`.
FOLDER, SNAPSHOT = "folder", "snapshot"

#: Leaf statuses: read completely, read but the run did not finish (its counts are not used), unreadable.
OK, INCOMPLETE, ERROR = "ok", "incomplete", "error"


@dataclass(frozen=True, slots=True)
class Leaf:
    """One input of the history: model ``model``'s run folder or snapshot file for run ``run``."""

    run: str
    model: str
    """``""`` when the history holds a single model (no ``<model>/`` level)."""
    path: Path
    kind: str
    """:data:`FOLDER` or :data:`SNAPSHOT`."""
    root: Path | None = field(default=None, compare=False)
    """The history folder: a snapshot file is opened beneath it (``None``: beneath its own folder)."""


@dataclass(frozen=True, slots=True)
class LeafMeta:
    """What a leaf says about itself: how its run ended and, from ``run.json``, when and on which commit."""

    status: str
    """:data:`OK`, :data:`INCOMPLETE` or :data:`ERROR`."""
    detail: str = ""
    """The error message, or how an incomplete run ended; empty for a complete run."""
    started: str | None = None
    """``run.json`` ``started`` (ISO 8601), when the leaf has one."""
    commit: str | None = None
    dirty: bool | None = None
    mtime_ns: int = 0
    """Modification time of the snapshot file or of the run's log (for ``--order mtime``)."""
    transforms: int = 0


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run (point in time) of the history, in history order."""

    name: str
    index: int
    started: str | None
    commit: str | None
    """The commit of the run's leaves when they agree (``None`` when unknown or mixed)."""
    models: int
    """How many models the run holds a leaf for."""


@dataclass(frozen=True, slots=True)
class Problem:
    """A leaf whose counts are not used: unreadable (``error``) or from a run that did not finish."""

    run: str
    model: str
    path: Path
    status: str
    detail: str
    in_window: bool
    """Whether the run lies at or after ``--since`` (only those affect the exit code)."""


@dataclass(frozen=True, slots=True)
class Value:
    """A transform's state and match count in one run."""

    state: State
    matches: int | None

    def text(self) -> str:
        """``5`` for an applied transform with a count, else the state (``skipped``, ``absent`` ...)."""
        if self.state is State.APPLIED and self.matches is not None:
            return str(self.matches)
        return self.state.value


@dataclass(frozen=True, slots=True)
class RunValue:
    """A value seen in one run (an unsettled run inside a step, or a flaky deviation)."""

    run: str
    value: Value


@dataclass(frozen=True, slots=True)
class Change:
    """A step (the new value held ``min_run`` runs) or a pending change (it has not held that long yet)."""

    kind: str
    """``step`` or ``pending``."""
    model: str
    stage: str
    transform: str
    occurrence: int
    before: Value
    after: Value
    last_before: str
    """The last run with the old value."""
    first_after: str
    """The first run after ``last_before`` (its value may be an unsettled one, see ``via``)."""
    confirmed: str | None
    """The run in which the new value had held ``min_run`` runs (``None`` for a pending change)."""
    held: int
    """How many runs the new value has held."""
    via: tuple[RunValue, ...]
    """Runs between the old and the new value whose value was neither (shorter than ``min_run``)."""
    category: str
    """``collapse``, ``partial_loss``, ``new_matches`` or ``state_change`` (docs/history.md)."""
    codes: tuple[str, ...]
    """Codes of the findings a pair comparison of the two values gives (``ADL001`` ...), most severe first."""
    message: str
    """The first finding's message, or ``before -> after`` when the pair comparison finds nothing."""
    gating: bool
    """Whether a pair comparison of the two values would fail the gate at ``--fail-on``."""
    in_window: bool
    """Whether the step became known (``confirmed``) at or after ``--since``."""
    commit_before: str | None = None
    commit_after: str | None = None

    @property
    def change(self) -> str:
        """``5 -> 0``, ``4 -> skipped``."""
        return f"{self.before.text()} -> {self.after.text()}"

    @property
    def gates(self) -> bool:
        """Whether this step fails the history's gate."""
        return self.kind == "step" and self.gating and self.in_window


@dataclass(frozen=True, slots=True)
class Flaky:
    """A transform whose value left its settled value for fewer than ``min_run`` runs and came back."""

    model: str
    stage: str
    transform: str
    occurrence: int
    value: Value
    """The settled value it keeps coming back to."""
    deviations: tuple[RunValue, ...]


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model's span in the history."""

    name: str
    first_run: str
    last_run: str
    runs: int
    """Runs whose counts were used (complete and readable)."""
    stale: bool
    """True when the model's last used run is not the history's last run."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of the current-counts matrix: a transform's value in its model's last used run."""

    value: Value
    mark: str
    """``""`` unchanged, ``down`` / ``up`` / ``changed`` (a step), ``pending``, ``flaky``."""


@dataclass(frozen=True)
class History:
    """Everything ``ad-diff history`` found, before rendering; ``exit_code`` is the command's exit."""

    root: Path
    layout: str
    order: str
    order_note: str
    min_run: int
    collapse_fraction: float
    fail_on: FailOn
    since: str | None
    runs: tuple[RunInfo, ...]
    models: tuple[ModelInfo, ...]
    problems: tuple[Problem, ...]
    steps: tuple[Change, ...]
    pending: tuple[Change, ...]
    flaky: tuple[Flaky, ...]
    current: dict[str, dict[tuple[str, str, int], Cell]]
    """Per model: ``(stage, transform, occurrence)`` -> cell, in pipeline order."""
    verdict: Verdict
    exit_code: int
    notes: tuple[str, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    """``leaves``, ``read``, ``cached``, ``cells``: how much was read this time."""
    table: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    """The long table (one row per run, model and transform), for ``--table`` and plots."""
