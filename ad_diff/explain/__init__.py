"""Cross-kind passes over the classified findings, run once every kind has been classified.

1. each kind's own ``explain`` (graph: root-cause hints on match losses; config: explained / unexplained);
2. the user's filters (``--ignore-code``, ``--ignore-transform``);
3. expected changes (``--expected``): matching findings become acknowledged, unused entries stale;
4. a deterministic order.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from ad_diff.core.model import Finding

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context, Kind


def run(ctx: Context, findings: list[Finding], kinds: tuple[Kind[Any], ...]) -> list[Finding]:
    """Return ``findings`` explained, filtered, acknowledged and sorted; kinds may update their sections."""
    for kind in kinds:
        section = ctx.sections.get(kind.key.name)
        if section is not None:
            section, findings = kind.explain(section, findings, ctx)
            ctx.sections[kind.key.name] = section
    settings = ctx.settings
    kept = [
        f for f in findings
        if not any(fnmatchcase(f.code, pat) for pat in settings.ignore_codes)
        and not (f.transform and any(fnmatchcase(f.transform, p) for p in settings.ignore_transforms))
    ]
    if settings.expected_changes is not None:
        from ad_diff.explain import expected

        kept = expected.apply(expected.load(settings.expected_changes), kept, ctx.rows, settings.model)
    kept.sort(key=Finding.sort_key)
    return kept
