"""Small pure helpers shared by the reporters: how a side, a delta, the headline and the counts read.

The headline and the counts are decided here once for every format: the headline counts root causes
(``FAIL: 1 root cause (metadata lost at X) -> 5 match losses``), the counts say "not analysed" for a kind
that was not compared, and ignored transforms are counted as ignored.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from ad_diff.core.headline import ELLIPSIS, HEADLINE_MAX, cap_parts
from ad_diff.core.model import Category, Finding, Severity, Side, State, TransformComparison
from ad_diff.core.rules import Role
from ad_diff.explain.model import CauseGroup, TitlePart
from ad_diff.explain.roles import has
from ad_diff.gate import Band, GroupVerdict, Verdict
from ad_diff.kinds.base import Skipped, SkipReason
from ad_diff.kinds.log.model import RunLog
from ad_diff.result import DiffResult

NOUNS: dict[Category, tuple[str, str]] = {
    Category.MATCH_LOSS: ("match loss", "match losses"),
    Category.METADATA_LOSS: ("metadata loss", "metadata losses"),
    Category.SHAPE_CHANGE: ("shape change", "shape changes"),
    Category.NUMERIC_DRIFT: ("drifting tensor", "drifting tensors"),
    Category.INCOMPLETE_RUN: ("incomplete run", "incomplete runs"),
    Category.STATE_CHANGE: ("state change", "state changes"),
    Category.STRUCTURE_CHANGE: ("structure change", "structure changes"),
    Category.CONSISTENCY: ("consistency issue", "consistency issues"),
    Category.CONFIG: ("config issue", "config issues"),
    Category.INPUT: ("input problem", "input problems"),
    Category.IMPROVEMENT: ("improvement", "improvements"),
    Category.UNACCOUNTED: ("unaccounted difference", "unaccounted differences"),
    Category.EXPECTED_CHANGES: ("stale expected change", "stale expected changes"),
}
"""How many findings of a category read in a sentence (singular, plural)."""
MAIN = (Category.MATCH_LOSS, Category.METADATA_LOSS, Category.NUMERIC_DRIFT)
"""The categories the counts line always shows (analysed or not)."""
_NEEDS = {Category.METADATA_LOSS: "graph", Category.NUMERIC_DRIFT: "tensors"}


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 root cause`` / ``2 root causes``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def side_text(s: Side) -> str:
    """``16`` for applied, the state name otherwise, ``—`` when absent."""
    if s.state is State.APPLIED:
        return str(s.matches if s.matches is not None else "?")
    if s.state is State.ABSENT:
        return "—"
    word: str = s.state.value
    return word




def status_text(s: Side, conflict: bool = False) -> str:
    """A side in the words of upstream's ``ad-conf-check``: ``APPLIED 16``, ``SKIPPED``, ``DISABLED``,
    ``FAILED``, ``RESTORED``, ``INCOMPLETE``, ``ABSENT``; ``CONFLICT (APPLIED 4)`` when the run's log and its
    dumps disagree about the transform. ad-conf-check reads 0 matches as SKIPPED; here a transform that ran
    and matched nothing stays ``APPLIED 0``, apart from one that AD itself logged ``skipped``."""
    if s.state is State.APPLIED:
        word = f"APPLIED {s.matches if s.matches is not None else '?'}"
    else:
        word = s.state.value.upper()
    return f"CONFLICT ({word})" if conflict else word


def conflicts(findings: tuple[Finding, ...] | list[Finding]) -> frozenset[tuple[str, str]]:
    """``(transform, run)`` pairs whose log and dumps disagree (:attr:`Role.LOG_DUMP_CONFLICT`)."""
    out = set()
    for f in findings:
        run = dict(f.evidence).get("run")
        if has(f, Role.LOG_DUMP_CONFLICT) and f.transform and isinstance(run, str):
            out.add((f.transform, run))
    return frozenset(out)


def status_pair(r: TransformComparison, conflict: frozenset[tuple[str, str]]) -> tuple[str, str]:
    """:func:`status_text` of a row's baseline and candidate; the candidate's names the other ranks on which
    the transform changed (``APPLIED 5 (rank 1: APPLIED 5 → APPLIED 0)``)."""
    cand = status_text(r.candidate, (r.transform, "candidate") in conflict)
    if r.elsewhere:
        cand += f" ({elsewhere_text(r)})"
    return status_text(r.baseline, (r.transform, "baseline") in conflict), cand


def elsewhere_text(r: TransformComparison, limit: int = 3) -> str:
    """``rank 1: APPLIED 5 → APPLIED 0``: the other ranks on which a row changed (its sides are rank 0's)."""
    parts = [f"rank {'?' if e.rank is None else e.rank}: {status_text(e.baseline)} \u2192 "
             f"{status_text(e.candidate)}" for e in r.elsewhere[:limit]]
    if len(r.elsewhere) > limit:
        parts.append(f"{len(r.elsewhere) - limit} more rank(s)")
    return "; ".join(parts)


def in_conflict(r: TransformComparison, conflict: frozenset[tuple[str, str]]) -> bool:
    """Whether either run's log and dumps disagree about ``r`` (listed with the changed rows)."""
    return (r.transform, "baseline") in conflict or (r.transform, "candidate") in conflict


def delta_text(delta: int | None) -> str:
    """Signed delta with a real minus sign; empty when unknown."""
    if delta is None:
        return ""
    if delta == 0:
        return "0"
    return f"+{delta}" if delta > 0 else f"\u2212{-delta}"


def severity_counts(findings: tuple[Finding, ...]) -> Counter[str]:
    """Count findings per severity value."""
    return Counter(f.severity.value for f in findings)


def category_counts(findings: tuple[Finding, ...]) -> Counter[str]:
    """Count error/warning findings per category: info findings are not problems, acknowledged ones
    (expected changes) are no longer (:func:`counts` says how many were acknowledged)."""
    return Counter(f.category for f in findings if f.severity is not Severity.INFO and not f.acknowledged)


def look(f: Finding) -> str:
    """How a finding reads in every report, in one word each medium draws its own way: ``acknowledged`` for
    an expected change (never the ❌ or the ``error`` of its severity), else its severity."""
    return "acknowledged" if f.acknowledged else f.severity.value


def log_summary_parts(log: RunLog | None) -> tuple[tuple[str, bool], ...]:
    """One line describing a parsed log (formats, prefixes, rank, size, how it ended), as ``(text, strong)``
    pieces: how a run that did not complete ended (``crashed``) is the strong piece, so each report can
    emphasise it in its own way."""
    if log is None:
        return (("no log", False),)
    fmt = "/".join(log.formats) or "?"
    pre = "/".join(log.prefixes) or "?"
    rank = f"rank {log.rank}" if log.rank is not None else "no rank tags"
    if len(log.ranks_seen) > 1:
        rank += f" of {','.join(map(str, log.ranks_seen))}"
    head = f"{fmt} · {pre} · {rank} · {len(log.transforms)} transforms · "
    if log.end.value == "complete":
        return ((head + "complete", False),)
    return ((head, False), (log.end.value, True), (f": {log.end_detail}", False))


def log_summary(log: RunLog | None) -> str:
    """:func:`log_summary_parts` as plain text."""
    return "".join(text for text, _ in log_summary_parts(log))


@dataclass(frozen=True)
class Partition:
    """The groups of a verdict as the reports present them (:class:`~ad_diff.gate.Band` by band)."""

    gated: tuple[GroupVerdict, ...]
    below_gate: tuple[GroupVerdict, ...]
    """Groups with an error finding that the gate level does not fail on."""
    review: tuple[GroupVerdict, ...]
    """Groups with warnings (or ungated errors) nobody acknowledged: to review."""
    settled: tuple[GroupVerdict, ...]
    """Groups whose every problem is acknowledged or explained by config."""
    improvements: tuple[GroupVerdict, ...]
    notes: tuple[GroupVerdict, ...]
    """Info-only groups."""
    stale: tuple[GroupVerdict, ...] = ()
    """Entries of the expected-changes file that acknowledged nothing: listed apart, never a root cause."""


def partition(verdict: Verdict) -> Partition:
    """The groups of ``verdict`` by band, keeping their order."""
    return Partition(*(verdict.band(b) for b in (Band.GATED, Band.BELOW_GATE, Band.REVIEW, Band.SETTLED,
                                                 Band.IMPROVEMENT, Band.NOTE, Band.STALE)))


def stale_text(p: Partition) -> str:
    """``1 stale expected change`` (entries of the expected-changes file that matched nothing), or empty."""
    return plural(len(p.stale), *NOUNS[Category.EXPECTED_CHANGES]) if p.stale else ""


def consequence_text(groups: tuple[CauseGroup, ...] | tuple[GroupVerdict, ...]) -> str:
    """``3 match losses, 1 metadata loss``: the error consequences of ``groups`` by category."""
    total: Counter[Category] = Counter()
    for g in groups:
        total.update((g.group if isinstance(g, GroupVerdict) else g).consequence_counts())
    return ", ".join(plural(total[c], *NOUNS[c]) for c in Category if total[c])


VERDICT_MAX = HEADLINE_MAX - len("ad-diff: ")
"""Most characters of the verdict sentence: with the ``ad-diff:`` reporters put before it, a headline."""


def headline_parts(result: DiffResult, verdict: Verdict) -> tuple[TitlePart, ...]:
    """The one-sentence verdict used by every reporter, as title parts (names marked as code): a headline
    (:mod:`ad_diff.core.headline`) of at most :data:`VERDICT_MAX` characters, the cut falling in the root
    cause's title, whose whole text the report shows below."""
    parts = _verdict_parts(result, verdict)
    total = sum(len(t) for t, _ in parts)
    if total <= VERDICT_MAX:
        return parts
    # Cut the longest part (a root cause's title) by what is too much, keep the frame around it.
    k = max(range(len(parts)), key=lambda i: len(parts[i][0]))
    fit, cut = cap_parts((parts[k],), max(len(parts[k][0]) - (total - VERDICT_MAX), 1))
    rest = parts[k + 1:]
    if cut and rest and rest[0][0] == ELLIPSIS:  # the title was cut before: one ellipsis says so
        rest = rest[1:]
    parts = (*parts[:k], *fit, *rest)
    return cap_parts(parts, VERDICT_MAX)[0]


def _verdict_parts(result: DiffResult, verdict: Verdict) -> tuple[TitlePart, ...]:
    p = partition(verdict)
    said = verdict.verdict.headline_word  # the gate's word: FAIL, or PASS below
    if verdict.failed:
        n = len(p.gated)
        parts: list[TitlePart] = [(f"{said}: {plural(n, 'root cause')}", False)]
        if n == 1:
            parts += [(" (", False), *p.gated[0].group.title_parts, (")", False)]
            conseq = consequence_text(p.gated)
            if conseq:
                parts.append((f" \u2192 {conseq}", False))
        elif n > 1:
            total: Counter[Category] = Counter(
                f.category for g in p.gated for f in g.group.findings if f.severity is Severity.ERROR
            )
            parts.append(
                (" (" + ", ".join(plural(total[c], *NOUNS[c]) for c in Category if total[c]) + ")", False)
            )
        return tuple(parts)
    bits = []
    if p.below_gate:
        bits.append(f"{plural(len(p.below_gate), 'root cause')} below the gate level")
    if p.review:
        bits.append(f"{plural(len(p.review), 'warning')} to review")
    if p.settled:
        bits.append(f"{len(p.settled)} acknowledged or explained")
    if p.improvements:
        bits.append(plural(len(p.improvements), "improvement"))
    gate = f" (gate `{verdict.fail_on}`)" if p.below_gate else ""
    stale = f"; {stale_text(p)}" if p.stale else ""
    if not bits:
        return ((f"{said}{gate}: no regressions{stale}", False),)
    if p.settled and not (p.below_gate or p.review or p.improvements):
        return (
            (
                f"{said}: every finding acknowledged or explained ({plural(len(p.settled), 'root cause')})"
                + stale,
                False,
            ),
        )
    if len(p.improvements) == 1 and len(bits) == 1:
        return ((f"{said}: 1 improvement (", False), *p.improvements[0].group.title_parts,
                (")" + stale, False))
    lead = "no regressions; " if not p.below_gate else ""
    return ((f"{said}{gate}: {lead}" + ", ".join(bits) + stale, False),)


def headline(result: DiffResult, verdict: Verdict) -> str:
    """:func:`headline_parts` as plain text."""
    return "".join(text for text, _ in headline_parts(result, verdict))


def render_parts(parts: tuple[TitlePart, ...], code: Callable[[str], str], text: Callable[[str], str]) -> str:
    """Title parts rendered with ``code`` for names and ``text`` for the rest."""
    return "".join(code(s) if is_code else text(s) for s, is_code in parts)


def not_compared(result: DiffResult) -> int:
    """Transforms in the comparison that were not compared: restored from a cache, or never reached by a run
    that stopped (the incomplete-run finding lists them)."""
    names = {
        r.transform
        for r in result.transforms
        if State.RESTORED in (r.baseline.state, r.candidate.state)
        or State.INCOMPLETE in (r.baseline.state, r.candidate.state)
    }
    for f in result.findings:
        if has(f, Role.RUN_STOPPED):
            names.update(str(t) for t in dict(f.evidence).get("not_reached") or ())
    return len(names)


@dataclass(frozen=True)
class Count:
    """One entry of the counts line: a category and its count, or why it was not analysed."""

    category: Category
    count: int
    not_analysed: str | None = None
    """Why this category was not analysed (the kind that finds it was skipped)."""
    detail: str = ""

    def text(self) -> str:
        """``2 match losses`` / ``numeric drift: not analysed (no tensors/ in either run)``."""
        if self.not_analysed is not None:
            return f"{self.category.value.replace('_', ' ')}: not analysed ({self.not_analysed})"
        one, many = NOUNS[self.category]
        base = f"{self.count} {many if self.count != 1 else one}"
        return base + (f" ({self.detail})" if self.detail else "")


def skip_reason(s: Skipped) -> str:
    """Why a kind was not compared, as a short phrase."""
    if s.reason is SkipReason.ONE_SIDED:
        return f"{s.detail} in the {s.run} run only"
    if s.reason is SkipReason.UNREADABLE:
        return "its input could not be read"
    return s.detail


def counts(result: DiffResult) -> list[Count]:
    """The counts line: the main categories always (or "not analysed"), the others when they have findings.
    Acknowledged findings (expected changes) are counted apart: ``0 match losses (1 acknowledged)``."""
    cats = category_counts(result.findings)
    acked = Counter(f.category for f in result.findings if f.acknowledged and f.severity is not Severity.INFO)
    out = []
    for c in Category:
        n = cats.get(c, 0)
        kind = _NEEDS.get(c)
        skipped = result.skipped.get(kind) if kind else None
        if (
            skipped is not None
            and not n
            and not (c is Category.METADATA_LOSS and skipped.reason is SkipReason.SNAPSHOT)
        ):
            out.append(Count(c, 0, skip_reason(skipped)))
            continue
        bits = []
        if c is Category.MATCH_LOSS:
            gone = not_compared(result)
            collapses = sum(1 for f in result.findings
                            if f.collapse and f.category is c and not f.acknowledged)
            bits = [plural(collapses, "collapse")] if collapses else []
            if gone:
                bits.append(f"{gone} of {len(result.transforms)} transforms not compared")
        if acked[c]:
            bits.append(f"{acked[c]} acknowledged")
        if c in MAIN or n or acked[c]:
            out.append(Count(c, n, None, "; ".join(bits)))
    return out


def ignored_text(result: DiffResult) -> str:
    """``2 transforms ignored (--ignore-transform): a, b`` or empty."""
    t = result.ignored_transforms
    if not t:
        return ""
    return f"{plural(len(t), 'transform')} ignored (--ignore-transform): " + ", ".join(t)


def run_labels(baseline: PurePath, candidate: PurePath) -> tuple[str, str, str | None]:
    """How the two run folders read in a narrow column: relative to their common parent (returned third),
    or their folder names when they share none. Full paths stay in the JSON report."""
    b, c = os.fspath(baseline), os.fspath(candidate)
    try:
        common = os.path.commonpath([b, c])
    except ValueError:  # one absolute, one relative
        common = ""
    if common not in ("", os.sep, ".") and common not in (b, c):
        return os.path.relpath(b, common), os.path.relpath(c, common), common
    nb, nc = PurePath(b).name or b, PurePath(c).name or c
    if nb == nc:
        nb, nc = str(PurePath(PurePath(b).parent.name, nb)), str(PurePath(PurePath(c).parent.name, nc))
    return nb, nc, None
