"""Each compared kind's :class:`~ad_diff.core.view.SectionView` of a result, as every reporter draws them."""

from __future__ import annotations

from ad_diff.core.view import SectionView, ViewContext
from ad_diff.result import DiffResult


def view_context(result: DiffResult) -> ViewContext:
    """What the kinds' views may read of this report: ignored transforms, where the HTML and plots went."""
    return ViewContext(result.ignored_transforms, result.written.html, result.written.plots)


def views(result: DiffResult) -> list[SectionView]:
    """The views of the kinds the comparison ran after the log, in pipeline order (a kind whose section the
    report's frame draws, the log's, has none)."""
    ctx = view_context(result)
    out = []
    for kind in result.section_kinds:
        section = result.sections.get(kind.key.name)
        if section is not None and (v := kind.view(section, ctx)) is not None:
            out.append(v)
    return out


__all__ = ["view_context", "views"]
