"""The one place that decides the exit code.

0: no gated regression; 1: gated regression; 2: usage or input error (raised as ``AdDiffError`` and
turned into 2 by the CLI); 3: internal error (a bug in ad-diff).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ad_diff.core.model import Finding, Severity
from ad_diff.settings import FAIL_ON_CHOICES

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_INPUT_ERROR = 2
EXIT_INTERNAL_ERROR = 3

# An incomplete run means the data needed for a verdict is missing: it gates at every level but `never`.
_ALWAYS = frozenset({"incomplete_run"})


@dataclass(frozen=True)
class Verdict:
    """The gate's decision and the findings that caused it."""

    exit_code: int
    verdict: str
    """``pass`` or ``fail``."""
    fail_on: str
    gated: tuple[Finding, ...]

    def __bool__(self) -> bool:
        return self.exit_code == EXIT_OK


def gates(f: Finding, fail_on: str) -> bool:
    """Whether finding ``f`` fails the gate at level ``fail_on``."""
    if fail_on not in FAIL_ON_CHOICES:
        raise ValueError(f"unknown fail_on {fail_on!r}")
    if fail_on == "never" or not f.gating or f.severity is not Severity.ERROR:
        return False
    if f.category in _ALWAYS or fail_on == "error":
        return True
    if fail_on == "match_loss":
        return f.category == "match_loss"
    return f.category == "match_loss" and f.collapse  # fail_on == "collapse"


def unpaired_gates(fail_on: str) -> bool:
    """Whether a batch model with a baseline run but no candidate run fails the gate (its run is missing)."""
    return fail_on != "never"


def batch_exit_code(model_codes: Iterable[int], unpaired_baselines: int, fail_on: str) -> int:
    """A batch's exit code: the worst of its models' (3 internal error > 2 input error > 1 regression > 0),
    unpaired baselines counting as regressions when :func:`unpaired_gates`."""
    codes = list(model_codes)
    if unpaired_baselines and unpaired_gates(fail_on):
        codes.append(EXIT_REGRESSION)
    return max(codes, default=EXIT_OK)


def decide(findings: Iterable[Finding], fail_on: str) -> Verdict:
    """Apply the gate to ``findings``."""
    gated = tuple(f for f in findings if gates(f, fail_on))
    code = EXIT_REGRESSION if gated else EXIT_OK
    return Verdict(code, "fail" if gated else "pass", fail_on, gated)
