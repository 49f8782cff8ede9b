"""The HTML report's drawing of a kind's :class:`~ad_diff.core.view.SectionView`.

A kind with a page of its own (:class:`~ad_diff.core.view.Page`: a template in the kind's folder and the
data it draws) is drawn by that template, loaded from the kind's package by :class:`KindPages` and rendered
with the report's escaping, macros and :func:`figure`. A kind without one is drawn here from its document:
every piece escaped (after :func:`~ad_diff.core.sinks.visible`), nothing inserted raw.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable
from typing import Any

from jinja2 import BaseLoader, Environment, TemplateNotFound
from markupsafe import Markup, escape

from ad_diff.core.escape import code_spans
from ad_diff.core.sinks import visible
from ad_diff.core.view import (
    Aside,
    Block,
    Code,
    Details,
    Fit,
    Heading,
    Histogram,
    Items,
    Line,
    Look,
    Para,
    Quote,
    Scatter,
    SectionView,
    Stack,
    Table,
)
from ad_diff.report import svg


class KindPages(BaseLoader):
    """The pages of the kinds: template ``<package>/<file>`` is the file ``<file>`` of the Python package
    ``<package>`` (a kind's folder), read through the package's resources."""

    def get_source(self, environment: Environment, template: str
                   ) -> tuple[str, str | None, Callable[[], bool]]:
        """The template's text (raises :class:`~jinja2.TemplateNotFound` for any other name)."""
        package, _, name = template.rpartition("/")
        if not package or "/" in package or not name:
            raise TemplateNotFound(template)
        try:
            where = importlib.resources.files(package).joinpath(name)
            source = where.read_text("utf-8")  # not a run path: a template of the package
        except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError) as e:
            raise TemplateNotFound(template) from e
        return source, None, lambda: True


def page_name(view: SectionView) -> str | None:
    """The template name of the view's page (:class:`KindPages`), ``None`` without one."""
    return f"{view.page.package}/{view.page.template}" if view.page is not None else None


def figure(spec: Histogram | Scatter | None) -> svg.Histogram | svg.Scatter | None:
    """A figure of a kind's page drawn as SVG geometry (the templates read its bars, points and ticks)."""
    if isinstance(spec, Histogram):
        return svg.histogram(spec.lo, spec.hi, spec.counts, spec.atol)
    if isinstance(spec, Scatter):
        return svg.scatter(spec.xs, spec.ys)
    return None


def _e(s: str) -> Markup:
    return escape(visible(s))


def _span_html(text: str, look: Look) -> Markup:
    if look is Look.CODE:
        return Markup("<code>%s</code>") % _e(text)
    if look is Look.INLINE:
        return Markup("").join(Markup("<code>%s</code>") % _e(t) if c else _e(t) for t, c in code_spans(text))
    if look is Look.STRONG:
        return Markup("<strong>%s</strong>") % _e(text)
    if look is Look.EM:
        return Markup("<em>%s</em>") % _e(text)
    if look is Look.BREAK:
        return Markup("<br>")
    return _e(text)


def spans(line: Line) -> Markup:
    """A line of spans as HTML."""
    return Markup("").join(_span_html(s.text, s.look) for s in line)


def _block(b: Block) -> Markup:
    if isinstance(b, Heading):
        return Markup("<h%d>%s</h%d>") % (min(b.level, 6), spans(b.line), min(b.level, 6))
    if isinstance(b, Para):
        return Markup("<p>%s</p>") % spans(b.line)
    if isinstance(b, Aside):
        return Markup('<p class="note">%s</p>') % spans(b.line)
    if isinstance(b, Items):
        return Markup("<ul>%s</ul>") % Markup("").join(Markup("<li>%s</li>") % spans(i) for i in b.items)
    if isinstance(b, Quote):
        return Markup('<ul class="notes">%s</ul>') % Markup("").join(
            Markup("<li>%s</li>") % spans(ln) for ln in b.lines)
    if isinstance(b, Table):
        caption = Markup("<caption>%s</caption>") % _e(b.title) if b.title else Markup("")
        head = Markup("").join(Markup("<th>%s</th>") % spans(c.head) for c in b.columns)
        cell = (Markup("<td>%s</td>"), Markup('<td class="num">%s</td>'))
        rows = Markup("").join(
            Markup("<tr>%s</tr>") % Markup("").join(
                cell[c.right] % spans(row[i] if i < len(row) else ()) for i, c in enumerate(b.columns))
            for row in b.rows)
        return Markup("<table>%s<thead><tr>%s</tr></thead><tbody>%s</tbody></table>") % (caption, head, rows)
    if isinstance(b, Details):
        return Markup("<details><summary>%s</summary>%s</details>") % (spans(b.summary), blocks(b.body))
    if isinstance(b, Code):
        return Markup("<pre>%s</pre>") % _e(b.text)
    if isinstance(b, Stack):
        return blocks(b.blocks)
    if isinstance(b, Fit):
        return blocks(b.wide)
    raise TypeError(f"not a block: {b!r}")


def blocks(bs: tuple[Block, ...]) -> Markup:
    """Blocks as HTML, one after the other."""
    return Markup("\n  ").join(_block(b) for b in bs)


def drawn(view: SectionView) -> Markup:
    """The section of a kind without a page: its title and document."""
    return Markup('<section id="%s">\n  <h2>%s</h2>\n  %s\n</section>') % (
        _e(view.key), _e(view.title), blocks(view.document))


def page_data(view: SectionView) -> Any:
    """The data a kind's page draws (built now: only the HTML report asks for it)."""
    return view.page.data() if view.page is not None else None


__all__ = ["KindPages", "blocks", "drawn", "figure", "page_data", "page_name", "spans"]
