"""Findings about the inputs themselves (codes ``ADI0xx``): artifacts present in one run only."""

from __future__ import annotations

from ad_diff.classify.base import Rule
from ad_diff.model import Severity

ONE_SIDED = Rule(
    "ADI001", "artifact-one-sided", "input", Severity.ERROR,
    "{what} present in the {present} run only; the {missing} run has none, so {analysis} was not done",
    "One run folder holds graph dumps (or recorded tensors) and the other does not. The analysis that "
    "needs both was skipped, so its conclusions are missing: this gates, because a verdict without the "
    "data must not read as a pass. Re-run the other side with AD_DUMP_GRAPHS_DIR set (or record tensors).",
)

RULES: tuple[Rule, ...] = (ONE_SIDED,)
