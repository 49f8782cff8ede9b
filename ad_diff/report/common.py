"""Small pure helpers shared by the reporters: how a side, a delta, a count summary reads."""

from __future__ import annotations

from collections import Counter

from ad_diff.core.model import Finding, Severity, Side, State
from ad_diff.gate import Verdict
from ad_diff.kinds.log.model import RunLog
from ad_diff.result import DiffResult


def side_text(s: Side) -> str:
    """``16`` for applied, the state name otherwise, ``—`` when absent."""
    if s.state is State.APPLIED:
        return str(s.matches if s.matches is not None else "?")
    if s.state is State.ABSENT:
        return "—"
    return s.state.value


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
    """Count error/warning findings per category (info findings are not problems)."""
    return Counter(f.category for f in findings if f.severity is not Severity.INFO)


def log_summary(log: RunLog | None) -> str:
    """One line describing a parsed log: formats, prefixes, rank, size and how it ended."""
    if log is None:
        return "no log"
    fmt = "/".join(log.formats) or "?"
    pre = "/".join(log.prefixes) or "?"
    rank = f"rank {log.rank}" if log.rank is not None else "no rank tags"
    if len(log.ranks_seen) > 1:
        rank += f" of {','.join(map(str, log.ranks_seen))}"
    end = log.end.value if log.end.value == "complete" else f"**{log.end.value}**: {log.end_detail}"
    return f"{fmt} · {pre} · {rank} · {len(log.transforms)} transforms · {end}"


def headline(result: DiffResult, verdict: Verdict) -> str:
    """The one-sentence verdict used by every reporter."""
    cats = category_counts(result.findings)
    n = len(verdict.gated)
    if verdict.verdict == "fail":
        return f"FAIL: {n} gated regression{'s' if n != 1 else ''}"
    errors = sum(1 for f in result.findings if f.severity is Severity.ERROR)
    if errors:
        return f"PASS (gate `{verdict.fail_on}`): {errors} error finding(s) not gated"
    if cats:
        return "PASS: no regressions; warnings to review"
    return "PASS: no regressions"
