"""What the library returns, before rendering and gating: one comparison (``DiffResult``) or a batch."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from ad_diff.core.model import Finding, TransformComparison
from ad_diff.discover import RunArtifacts
from ad_diff.explain import groups as explain_groups
from ad_diff.explain.accounting.model import Accounting
from ad_diff.explain.model import CauseGroup
from ad_diff.gate import BatchVerdict, Verdict, VerdictWord, decide_batch, word
from ad_diff.kinds.base import Kind, SectionKey, Skipped, SkipReason
from ad_diff.kinds.log.model import RunLog
from ad_diff.settings import FailOn

S = TypeVar("S")


@dataclass(frozen=True)
class Written:
    """Where this invocation wrote the outputs a report names in a sentence (set by the CLI; paths relative to
    the markdown report's folder, since a link to a file of the job would be dead in a PR comment)."""

    html: str | None = None
    """The HTML report (for a batch: its summary page)."""
    plots: str | None = None
    """The folder ``--plots`` wrote drift PNGs to (only when it wrote some)."""


@dataclass(frozen=True, slots=True)
class DiffResult:
    """The outcome of one baseline/candidate comparison, before any rendering or gating."""

    baseline: RunArtifacts
    candidate: RunArtifacts
    baseline_log: RunLog | None
    candidate_log: RunLog | None
    transforms: tuple[TransformComparison, ...]
    findings: tuple[Finding, ...]
    sections: dict[str, Any] = field(default_factory=dict)
    """Each kind's section by its key name; read it typed with :meth:`section`. An absent key means that
    kind was not compared (no data, disabled, or unreadable: the notes and findings say which)."""
    skipped: dict[str, Skipped] = field(default_factory=dict)
    """Kinds that were not compared, by key name, with why (no data, disabled, one-sided, unreadable...)."""
    notes: tuple[str, ...] = ()
    """Sentences about the inputs (what was found, what was skipped) shown in every report."""
    written: Written = Written()
    """Outputs this invocation wrote that the markdown report names (``--html``, ``--plots``)."""
    groups: tuple[CauseGroup, ...] = ()
    """The findings grouped by root cause, in report order (``ad_diff.explain.groups``); every finding is in
    exactly one, its ``group`` field naming it."""
    ignored_transforms: tuple[str, ...] = ()
    """Transforms left out of the comparison with ``--ignore-transform`` (pipeline order)."""
    ignored_findings: int = 0
    """Findings dropped by ``--ignore-code`` / ``--ignore-transform``."""
    accounting: Accounting | None = None
    """The accounting pass (``ad_diff.explain.accounting``): inventory sizes, what each noise rule absorbed,
    how many differences were left unaccounted. ``None`` for a snapshot baseline."""
    section_kinds: tuple[Kind[Any], ...] = ()
    """The kinds compared after the log, in pipeline order: the reports render their sections from these
    (a kind the pipeline was given shows in every report without the reporters naming it)."""

    def section(self, key: SectionKey[S]) -> S | None:
        """The section of one kind, typed (``result.section(GRAPH)`` is a ``GraphAnalysis | None``)."""
        got: S | None = self.sections.get(key.name)
        return got


def regroup(result: DiffResult, fail_on: FailOn) -> DiffResult:
    """``result`` with its findings grouped anew: for a result built or edited by hand (tests, tools), whose
    groups no longer cover its findings; the pipeline's results are grouped already."""
    findings, groups = explain_groups.build(
        result.findings, result.transforms, fail_on, graph_compared="graph" in result.sections,
        from_snapshot=getattr(result.skipped.get("graph"), "reason", None) is SkipReason.SNAPSHOT,
    )
    return dataclasses.replace(result, findings=tuple(findings), groups=groups)


@dataclass(frozen=True)
class ModelOutcome:
    """The comparison of one model's pair of runs."""

    name: str
    exit_code: int
    result: DiffResult | None = None
    verdict: Verdict | None = None
    error: str | None = None

    @property
    def status(self) -> VerdictWord:
        """``pass``, ``fail`` (gated regression) or ``error`` (input or internal error; see ``error``): the
        gate's word for the model's exit code."""
        return word(self.exit_code)


@dataclass(frozen=True)
class BatchResult:
    """All models of a batch, sorted by name, and the folders that had no partner."""

    baseline_root: Path
    candidate_root: Path
    fail_on: FailOn
    models: tuple[ModelOutcome, ...]
    baseline_only: tuple[str, ...] = ()
    """Models with a baseline but no candidate run: gate unless ``fail_on`` is ``never``."""
    candidate_only: tuple[str, ...] = ()
    """Models new in the candidate root: listed, not compared, not gating."""
    written: Written = Written()
    """Outputs this invocation wrote that the batch's markdown names (the HTML summary page)."""

    @cached_property
    def judged(self) -> BatchVerdict:
        """The gate's decision on the batch (:func:`ad_diff.gate.decide_batch`), computed once."""
        return decide_batch((m.exit_code for m in self.models), len(self.baseline_only), self.fail_on)

    @property
    def exit_code(self) -> int:
        """The worst exit code of all models (3 internal error > 2 input error > 1 regression > 0), unpaired
        baselines gating."""
        return self.judged.exit_code

    @property
    def verdict(self) -> VerdictWord:
        """``pass``, ``fail`` or ``error``."""
        return self.judged.verdict
