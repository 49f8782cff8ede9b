"""Cross-kind passes over the classified findings, run once every kind has been classified.

0. completeness by content (``ad_diff.explain.integrity``): a candidate that is a copy of the baseline, a
   rank of a per-rank layout with no log, transforms named alike;
1. each kind's own ``explain`` (graph: root-cause hints on match losses; config: explained / unexplained),
   then the run-level events (``ad_diff.explain.events``: what a world-size change explains), then the
   accounting pass (``ad_diff.explain.accounting``): every difference between what the runs did is covered
   by a finding or a noise rule, or becomes an ``unaccounted difference`` finding;
2. the user's filters (``--ignore-code``, ``--ignore-transform``);
3. expected changes (``--expected``): matching findings become acknowledged, unused entries stale;
4. causal groups (``ad_diff.explain.groups``): every finding under the root cause it follows from, the
   findings in report order (group by group, root cause first).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from ad_diff.core.model import Finding
from ad_diff.explain.accounting.model import Accounting
from ad_diff.explain.model import CauseGroup

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context, Kind


@dataclass(frozen=True)
class Explained:
    """What the explain passes return to the pipeline."""

    findings: tuple[Finding, ...]
    """Filtered, acknowledged and grouped, in report order."""
    groups: tuple[CauseGroup, ...]
    ignored_transforms: tuple[str, ...]
    """Transforms of either log left out with ``--ignore-transform``, in pipeline order."""
    ignored_findings: int
    """Findings dropped by ``--ignore-code`` / ``--ignore-transform``."""
    accounting: Accounting | None = None
    """What the accounting pass inventoried, absorbed as noise and left unaccounted."""


def _ignored_transforms(ctx: Context) -> tuple[str, ...]:
    pats = ctx.settings.ignore_transforms
    seen: dict[str, None] = {}
    for log in (ctx.baseline_log, ctx.candidate_log):
        for r in log.transforms if log is not None else ():
            if any(fnmatchcase(r.transform, p) for p in pats):
                seen.setdefault(r.transform, None)
    return tuple(seen)


def run(ctx: Context, findings: list[Finding], kinds: tuple[Kind[Any], ...]) -> Explained:
    """Explain, filter, acknowledge and group ``findings``; kinds may update their sections."""
    # lazy: the passes load when a comparison runs, not when a reader imports explain's model
    from ad_diff.explain import events, groups, integrity, roles
    from ad_diff.explain.accounting import account

    # one event two kinds saw (a transform moved: the log's order, the dumps' order) is reported once
    findings = roles.yielded([*findings, *integrity.check(ctx)])
    for kind in kinds:
        section = ctx.sections.get(kind.key.name)
        if section is not None:
            section, findings = kind.explain(section, findings, ctx)
            ctx.sections[kind.key.name] = section
    findings = events.world_size(ctx, findings)
    unaccounted, accounting = account(ctx, findings, kinds)
    findings = [*findings, *unaccounted]
    settings = ctx.settings
    kept = [
        f for f in findings
        if not any(fnmatchcase(f.code, pat) for pat in settings.ignore_codes)
        and not (f.transform and any(fnmatchcase(f.transform, p) for p in settings.ignore_transforms))
    ]
    dropped = len(findings) - len(kept)
    if settings.expected_changes is not None:
        # lazy: the passes load when a comparison runs, not when a reader imports explain's model
        from ad_diff.explain import expected

        kept = expected.apply(expected.load(settings.expected_changes), kept, ctx.rows, settings.model)
    kept.sort(key=Finding.sort_key)  # a deterministic input order; the groups decide the report order
    ordered, grouped = groups.build(kept, ctx.rows, settings.fail_on, graph_compared="graph" in ctx.sections,
                                    from_snapshot=ctx.from_snapshot)
    return Explained(tuple(ordered), grouped, _ignored_transforms(ctx), dropped, accounting)


__all__ = ["Explained", "run"]
