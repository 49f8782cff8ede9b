"""The seam every input kind implements, and the context the stages share.

A *kind* is one sort of run artifact (the log, graph dumps, recorded tensors, the AD config). Each kind lives
in its own folder with the same modules (model, parse, align, measure, rules, section) and exposes one
:class:`Kind` object; :data:`ad_diff.kinds.KINDS` lists them in the order the pipeline runs them. The
pipeline only ever calls the methods below, so a new kind costs one folder and one registry line.

Stages: ``analyze`` parses, aligns and measures (numbers only, no verdicts); ``classify`` turns the
measurement into findings through the kind's rules; ``explain`` may annotate findings with what this kind
knows (graph hints, config explanations) after every kind was classified; ``facts`` gives the accounting pass
what its input holds; ``view`` says what the reports show of its section (:mod:`ad_diff.core.view`), which
every reporter draws its own way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ad_diff.core.facts import Evidence, Facts
from ad_diff.core.model import Finding, TransformComparison
from ad_diff.core.rules import Rule
from ad_diff.core.words import WordEnum
from ad_diff.discover import RunArtifacts
from ad_diff.progress import ProgressFn, no_progress
from ad_diff.settings import Settings

if TYPE_CHECKING:
    from ad_diff.core.kindfacts import ConfigFacts, GraphFacts
    from ad_diff.core.runlog import RunLog
    from ad_diff.core.view import SectionView, ViewContext  # a comparison that renders no view never loads it

S = TypeVar("S")


@dataclass(frozen=True)
class SectionKey(Generic[S]):
    """The typed name of a kind's section in :class:`~ad_diff.result.DiffResult` (``result.section(KEY)``)."""

    name: str
    """Key in the JSON report's ``sections`` (``graph``, ``tensors``, ``config``)."""
    title: str
    """Heading of the section in the reports."""


class SkipReason(WordEnum):
    """Why a kind was not compared: the JSON report's ``skipped.<kind>.reason``."""

    NO_DATA = "no_data"
    """Neither run holds the kind's input."""
    DISABLED = "disabled"
    """Turned off by an option (``--no-graphs``, ``--no-tensors``)."""
    ONE_SIDED = "one_sided"
    """One run holds the input, the other does not (``run`` names the one that does)."""
    EMPTY = "empty"
    """Both runs hold the input's folder, and both are empty."""
    EMPTY_ONE = "empty_one"
    """One run's folder is empty (``run``) while the other's holds ``count`` files."""
    UNREADABLE = "unreadable"
    """The input could not be read; ``detail`` says why."""
    SNAPSHOT = "snapshot"
    """The baseline is a snapshot, which holds counts and coverage only."""


@dataclass(frozen=True)
class Skipped:
    """A kind (or part of one) that was not compared, and why: the one shape of a partial result.

    ``reason`` says why for a program, ``detail`` in the sentence a report shows; a number the reason
    carries is ``count``, never text to parse.
    """

    reason: SkipReason
    detail: str
    run: str | None = None
    """The run the reason is about, when it is about one."""
    path: Path | None = None
    count: int | None = None
    """For :attr:`SkipReason.EMPTY_ONE`: how many files the other run's folder holds."""


class ConfigLookup(Protocol):
    """What a kind other than the config kind may ask of a run's AD config. The config kind implements it and
    the pipeline passes it in the :class:`Context`, so no kind imports the config kind (or another)."""

    def enables(self, root: Path, explicit: Path | None, transform: str) -> bool:
        """Whether the AD config of the run at ``root`` (``explicit``: the one given on the command line)
        enables ``transform``; ``False`` without a config, or with one that cannot be read (the config kind
        reports that)."""
        ...

    def world_size(self, root: Path, explicit: Path | None) -> int | None:
        """The ``world_size`` the run's AD config declares (a positive integer), ``None`` without one."""
        ...

    def pipeline(self, root: Path, explicit: Path | None) -> tuple[tuple[str, str], ...]:
        """``(stage, transform)`` of every transform the run's complete AD config configures, in the order AD
        runs them (stable by stage); empty without a complete config."""
        ...

    def setting(self, root: Path, explicit: Path | None, key: str) -> Any:
        """The value at the dotted ``key`` of the run's effective AD config
        (``model_kwargs.num_hidden_layers``), ``None`` when it says nothing there."""
        ...


class NoConfig:
    """The :class:`ConfigLookup` of a comparison without the config kind: no run has a config."""

    def enables(self, root: Path, explicit: Path | None, transform: str) -> bool:
        """Never: there is no config to enable anything."""
        return False

    def world_size(self, root: Path, explicit: Path | None) -> int | None:
        """None: no config declares one."""
        return None

    def pipeline(self, root: Path, explicit: Path | None) -> tuple[tuple[str, str], ...]:
        """None: no config configures a pipeline."""
        return ()

    def setting(self, root: Path, explicit: Path | None, key: str) -> Any:
        """None: no config says anything."""
        return None


@dataclass
class Context:
    """What the stages of one comparison share: settings, both runs, the log spine and earlier sections."""

    settings: Settings
    baseline: RunArtifacts
    candidate: RunArtifacts
    from_snapshot: bool = False
    """The baseline is a snapshot file (counts only): node-level comparisons do not run."""
    progress: ProgressFn = no_progress
    baseline_log: RunLog | None = None
    candidate_log: RunLog | None = None
    rows: tuple[TransformComparison, ...] = ()
    """The per-transform comparison (set by the log kind, read by every later kind)."""
    sections: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, Skipped] = field(default_factory=dict)
    """Kinds the pipeline did not compare, by key name, with why (switched off, no data, unreadable...)."""
    notes: list[str] = field(default_factory=list)
    config: ConfigLookup = field(default_factory=NoConfig)
    """The config lookup other kinds read (the tensors kind: is the logits gather enabled?)."""
    graph_facts: GraphFacts | None = None
    """What the graph kind measured that other kinds use (set by it when it compared the dumps)."""
    config_facts: ConfigFacts | None = None
    """The config keys that differ (set by the config kind when it compared configs)."""

    def section(self, key: SectionKey[S]) -> S | None:
        """The section of an earlier kind, when it ran."""
        got: S | None = self.sections.get(key.name)
        return got


class Kind(Protocol[S]):
    """One input kind (see the module docstring)."""

    key: SectionKey[S]
    rules: tuple[Rule, ...]

    def analyze(self, ctx: Context) -> S | Skipped:
        """Parse, align and measure both runs' artifacts of this kind (or say why not)."""
        ...

    def classify(self, section: S | Skipped, ctx: Context) -> list[Finding]:
        """The findings this kind's rules draw from its measurement (or from why it was skipped)."""
        ...

    def explain(self, section: S, findings: list[Finding], ctx: Context) -> tuple[S, list[Finding]]:
        """Annotate ``findings`` with what this kind knows; may return an updated section."""
        ...

    def facts(self, section: S, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
        """The facts of this kind's input for the accounting pass (differences between the runs, inventory
        sizes, noise its own normalisation absorbed), filling this kind's part of ``ev``; ``ignored``:
        transforms left out with ``--ignore-transform``, whose facts are none."""
        ...

    def view(self, section: S, ctx: ViewContext) -> SectionView | None:
        """What the reports show of this kind's section (``None``: the report's frame shows it, as the log's
        per-transform table)."""
        ...
