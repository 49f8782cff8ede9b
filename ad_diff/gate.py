"""The one place that decides the verdict: which findings gate, what each root-cause group is, the words
``pass`` / ``fail`` / ``error``, and the exit code.

0: no gated regression; 1: gated regression; 2: usage or input error (raised as ``AdDiffError`` and
turned into 2 by the CLI); 3: internal error (a bug in ad-diff).

:func:`judge` computes a :class:`Verdict` once per comparison; reporters, workflows and the CLI only read it
(a finding's ``gated`` flag, a group's :class:`Band`, the word, the exit code). :func:`decide_batch` does the
same for a batch. :func:`decide` gates a plain list of findings (``history``, a kind's tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from ad_diff.core.model import Finding, Severity
from ad_diff.core.words import WordEnum
from ad_diff.explain.model import CauseGroup, CauseKind
from ad_diff.settings import FailOn

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_INPUT_ERROR = 2
EXIT_INTERNAL_ERROR = 3

# An incomplete run means the data needed for a verdict is missing: it gates at every level but `never`.
_ALWAYS = frozenset({"incomplete_run"})


class VerdictWord(WordEnum):
    """The verdict in one word (JSON ``verdict``, a batch model's ``status``)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    """Input or internal error: no verdict on the runs could be reached."""

    @property
    def headline_word(self) -> str:
        """The word as a headline starts with it: ``PASS``, ``FAIL``, ``ERROR``."""
        return self.value.upper()


def word(exit_code: int) -> VerdictWord:
    """The word of an exit code: the only place the words are derived."""
    if exit_code == EXIT_OK:
        return VerdictWord.PASS
    return VerdictWord.FAIL if exit_code == EXIT_REGRESSION else VerdictWord.ERROR


def gates(f: Finding, fail_on: FailOn) -> bool:
    """Whether finding ``f`` fails the gate at level ``fail_on`` (the rule; outside this module read it from a
    :class:`Verdict`). A level given as its word is read as the :class:`FailOn` of that word (an unknown one
    is a ``ValueError``)."""
    level = FailOn(fail_on)
    if level is FailOn.NEVER or not f.gating or f.severity is not Severity.ERROR:
        return False
    if f.category in _ALWAYS or level is FailOn.ERROR:
        return True
    if level is FailOn.MATCH_LOSS:
        return f.category == "match_loss"
    return f.category == "match_loss" and f.collapse  # FailOn.COLLAPSE


class Band(str, Enum):
    """Where a root-cause group stands in the verdict (the bands the reports show, in this order)."""

    GATED = "gated"
    """A finding of it fails the gate."""
    BELOW_GATE = "below_gate"
    """An error finding that the gate level does not fail on."""
    REVIEW = "review"
    """Warnings (or ungated errors) nobody acknowledged: to review."""
    SETTLED = "settled"
    """Every problem of it is acknowledged or explained by config."""
    IMPROVEMENT = "improvement"
    STALE = "stale"
    """Entries of the expected-changes file that acknowledged nothing: the file to prune, not the runs."""
    NOTE = "note"
    """Info only."""


def _band(g: CauseGroup, gated: bool) -> Band:
    if gated:
        return Band.GATED
    if g.cause is CauseKind.STALE_EXPECTATION:
        return Band.STALE
    if g.cause is CauseKind.IMPROVEMENT and g.severity is Severity.INFO:
        return Band.IMPROVEMENT
    if g.settled:
        return Band.SETTLED
    if any(f.severity is Severity.ERROR and f.gating for f in g.findings):
        return Band.BELOW_GATE
    return Band.REVIEW if g.severity is not Severity.INFO else Band.NOTE


def report_rank(g: CauseGroup, fail_on: FailOn) -> int:
    """The band a group is listed in by ``ad_diff.explain.groups`` (which orders the groups before any verdict
    exists): 0 gating, 1 to review, 2 settled, 3 improvement, 4 stale expected changes, 5 notes. A stale
    entry is about the expected-changes file, so it never comes before a change in the runs."""
    if any(gates(f, fail_on) for f in g.findings):
        return 0
    if g.cause is CauseKind.IMPROVEMENT:
        return 3
    if g.cause is CauseKind.STALE_EXPECTATION:
        return 4
    if g.settled:
        return 2
    return 1 if g.severity is not Severity.INFO else 5


@dataclass(frozen=True)
class FindingVerdict:
    """One finding and whether it fails the gate."""

    finding: Finding
    gated: bool
    role: str | None = None
    """``root`` or ``consequence`` within its group; ``None`` for findings gated without groups."""


@dataclass(frozen=True)
class GroupVerdict:
    """One root-cause group, its band and the verdict on each of its findings (root findings first)."""

    group: CauseGroup
    band: Band
    findings: tuple[FindingVerdict, ...]

    @property
    def gated(self) -> bool:
        """Whether a finding of the group fails the gate."""
        return self.band is Band.GATED


@dataclass(frozen=True)
class Verdict:
    """The gate's decision on one comparison: computed once (:func:`judge`), read by every reporter."""

    exit_code: int
    verdict: VerdictWord
    """``pass`` or ``fail``."""
    fail_on: FailOn
    gated: tuple[Finding, ...]
    groups: tuple[GroupVerdict, ...] = ()
    """Every root-cause group of the result in report order with its band (empty from :func:`decide`)."""

    def __bool__(self) -> bool:
        return self.exit_code == EXIT_OK

    @property
    def failed(self) -> bool:
        """Whether the gate failed (a regression)."""
        return self.verdict is VerdictWord.FAIL

    @property
    def findings(self) -> tuple[FindingVerdict, ...]:
        """Every finding in report order (group by group, root findings first) with its gate state."""
        return tuple(fv for g in self.groups for fv in g.findings)

    def band(self, band: Band) -> tuple[GroupVerdict, ...]:
        """The groups of one band, in report order."""
        return tuple(g for g in self.groups if g.band is band)

    def causes(self) -> Iterator[CauseGroup]:
        """The groups themselves, in report order."""
        return (g.group for g in self.groups)


def decide(findings: Iterable[Finding], fail_on: FailOn) -> Verdict:
    """Apply the gate to a plain list of ``findings`` (no groups)."""
    fail_on = FailOn(fail_on)
    gated = tuple(f for f in findings if gates(f, fail_on))
    code = EXIT_REGRESSION if gated else EXIT_OK
    return Verdict(code, word(code), fail_on, gated)


def _judge_group(g: CauseGroup, fail_on: FailOn) -> GroupVerdict:
    fvs = tuple(FindingVerdict(f, gates(f, fail_on), "root" if i < len(g.root) else "consequence")
                for i, f in enumerate(g.findings))
    return GroupVerdict(g, _band(g, any(fv.gated for fv in fvs)), fvs)


def judge(findings: Sequence[Finding], groups: Sequence[CauseGroup], fail_on: FailOn) -> Verdict:
    """The verdict on one comparison's ``findings`` at gate level ``fail_on``, grouped by root cause as
    ``groups`` (every finding in exactly one, as ``ad_diff.explain.groups`` built them: a comparison's
    ``result.findings`` and ``result.groups``)."""
    if sum(len(g.findings) for g in groups) != len(findings):
        raise ValueError("the groups do not cover the findings: build them with ad_diff.explain.groups")
    base = decide(findings, fail_on)
    judged = tuple(_judge_group(g, base.fail_on) for g in groups)
    return Verdict(base.exit_code, base.verdict, base.fail_on, base.gated, judged)


def exit_with_input_errors(verdict: Verdict, input_errors: bool) -> int:
    """The exit code when some inputs could not be read (``history``): an input error outranks a
    regression."""
    return max(verdict.exit_code, EXIT_INPUT_ERROR if input_errors else EXIT_OK)


def unpaired_gates(fail_on: FailOn) -> bool:
    """Whether a batch model with a baseline run but no candidate run fails the gate (its run is missing)."""
    return FailOn(fail_on) is not FailOn.NEVER


@dataclass(frozen=True)
class BatchVerdict:
    """The gate's decision on a batch: the worst model's exit code, unpaired baselines gating."""

    exit_code: int
    verdict: VerdictWord
    fail_on: FailOn
    unpaired_gate: bool
    """Whether a model with a baseline but no candidate run fails the gate."""

    def __bool__(self) -> bool:
        return self.exit_code == EXIT_OK


def decide_batch(model_codes: Iterable[int], unpaired_baselines: int, fail_on: FailOn) -> BatchVerdict:
    """A batch's verdict: the worst of its models' codes (3 internal error > 2 input error > 1 regression >
    0), unpaired baselines counting as regressions when :func:`unpaired_gates`."""
    level = FailOn(fail_on)
    codes = list(model_codes)
    unpaired = unpaired_gates(level)
    if unpaired_baselines and unpaired:
        codes.append(EXIT_REGRESSION)
    code = max(codes, default=EXIT_OK)
    return BatchVerdict(code, word(code), level, unpaired)


def batch_exit_code(model_codes: Iterable[int], unpaired_baselines: int, fail_on: FailOn) -> int:
    """:func:`decide_batch`'s exit code."""
    return decide_batch(model_codes, unpaired_baselines, fail_on).exit_code


__all__ = [
    "EXIT_INPUT_ERROR", "EXIT_INTERNAL_ERROR", "EXIT_OK", "EXIT_REGRESSION", "Band", "BatchVerdict", "FailOn",
    "FindingVerdict", "GroupVerdict", "Verdict", "VerdictWord", "decide", "decide_batch", "judge",
    "report_rank", "word",
]
