"""Classification of the per-transform log comparison (codes ``ADL0xx``), rank by rank.

Match counts are exact, deterministic metrics: any drop is real, so there is no tolerance here. The
only judgement is whether a loss is a *collapse* (to zero, or by at least ``collapse_fraction``). Every rank
both runs have is compared; a finding about several ranks is reported once, naming its ranks. What ends a
run early is measured in :mod:`.compare`; the findings are made in :mod:`.health` and :mod:`.rows`, with
the rules of :mod:`.rules`.
"""

from __future__ import annotations

from dataclasses import replace

from ad_diff.core.model import Finding, TransformComparison
from ad_diff.kinds.log import health
from ad_diff.kinds.log.compare import compare_logs, stops
from ad_diff.kinds.log.model import LogComparison, RunLog
from ad_diff.kinds.log.rows import rank_findings


def classify_log(
    rows: tuple[TransformComparison, ...],
    baseline: RunLog,
    candidate: RunLog,
    collapse_fraction: float = 0.5,
) -> list[Finding]:
    """:func:`classify` of ``rows`` paired from the two logs (the other ranks are paired here)."""
    section = compare_logs(baseline, candidate)
    section = replace(section, rows=rows, ranks=(replace(section.ranks[0], rows=rows), *section.ranks[1:]))
    return classify(replace(section, stops=tuple(stops(section))), collapse_fraction)


def classify(section: LogComparison, collapse_fraction: float = 0.5) -> list[Finding]:
    """Turn the rank-by-rank rows and the two logs' health into findings (unsorted)."""
    findings = health.incomplete(section)
    findings += rank_findings(section, collapse_fraction)
    findings += health.consistency(section)
    return findings
