"""The config section's page in the HTML report (``page.html.j2`` beside this module): each run's config
source, the transform and setting changes, what the logs contradict. Plain data for the template; every
name and value stays a raw string (the HTML reporter escapes it)."""

from __future__ import annotations

from typing import Any

from ad_diff.core.view import Page, ViewContext
from ad_diff.kinds.config.model import ConfigAnalysis
from ad_diff.kinds.config.section import CHECK_TEXT, change_label


def page(a: ConfigAnalysis, ctx: ViewContext) -> Page:
    """The HTML page of the config section: ``page.html.j2`` of this folder and its :func:`data`, built only
    when the HTML report is drawn."""
    return Page(__package__ or "", "page.html.j2", lambda: data(a))


def data(a: ConfigAnalysis) -> dict[str, Any]:
    """What the HTML page of the config section draws: where each run's config came from, what changed, what
    the logs contradict."""
    sources = [
        {"run": run, "kind": cfg.source.kind.value, "files": list(cfg.source.files),
         "rule": cfg.source.order_rule}
        if cfg is not None else {"run": run, "kind": "none", "files": [], "rule": ""}
        for run, cfg in (("baseline", a.baseline), ("candidate", a.candidate))
    ]
    diff = a.diff
    changes = [(t.transform, t.stage or "", change_label(c), c.before_text, c.after_text, c.origin() or "")
               for t in (diff.transforms if diff else ()) for c in t.changes]
    settings = [(s.key, s.before_text, s.after_text, s.origin() or "")
                for s in (diff.settings if diff else ())]
    checks = [(ch.run, ch.transform, CHECK_TEXT[ch.kind], ch.config_value, ch.log_value, ch.origin or "")
              for ch in a.checks]
    explained, unexplained = a.explained, a.unexplained  # as the markdown section lists them
    notes = [*a.notes] + [f"{run}: {n}" for run, cfg in (("baseline", a.baseline), ("candidate", a.candidate))
                          if cfg is not None for n in cfg.source.notes]
    return {
        "sources": sources, "identical": diff is not None and diff.identical, "changes": changes,
        "settings": settings, "checks": checks, "unexplained": [f.message for f in unexplained],
        "explained": [(f.message, f.explained_by, f.gating) for f in explained], "notes": notes,
    }


__all__ = ["data", "page"]
