"""The PR comment's drawing of a kind's :class:`~ad_diff.core.view.SectionView`: its document, as markdown.

Every piece is escaped here, by what it is: words with :func:`~ad_diff.core.escape.md_escape`, names as
code spans (``<code>`` elements in table cells and in a fold's summary, where a code span would not
render), ad-diff's own sentences with :func:`~ad_diff.core.escape.md_inline`. Blocks stand a blank line
apart; a fold's summary is raw HTML text (:func:`~ad_diff.core.escape.html_text`).
"""

from __future__ import annotations

from ad_diff.core.escape import fence_block, html_code, html_text, md_code, md_escape, md_inline
from ad_diff.core.view import (
    Aside,
    Block,
    Code,
    Details,
    Fit,
    Heading,
    Items,
    Line,
    Look,
    Para,
    Quote,
    SectionView,
    Span,
    Stack,
    Table,
)


def _span(s: Span, cell: bool) -> str:
    if s.look is Look.CODE:
        return html_code(s.text) if cell else md_code(s.text)
    if s.look is Look.INLINE:
        return md_inline(s.text)
    if s.look is Look.STRONG:
        return f"**{md_escape(s.text)}**"
    if s.look is Look.EM:
        return f"*{md_escape(s.text)}*"
    if s.look is Look.BREAK:
        return "<br>"
    return md_escape(s.text)


def inline(line: Line, cell: bool = False) -> str:
    """A line of spans as markdown (``cell``: inside a table cell)."""
    return "".join(_span(s, cell) for s in line)


def _summary(line: Line) -> str:
    return "".join(html_code(s.text) if s.look is Look.CODE else html_text(s.text) for s in line)


def _row(cells: tuple[Line, ...], columns: int) -> str:
    # a short row leaves the rest of its cells empty
    return "| " + " | ".join(inline(c, cell=True) for c in cells) + " |" + " |" * (columns - len(cells))


def _lines(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return ["#" * b.level + " " + inline(b.line)]
    if isinstance(b, Para):
        return [inline(b.line)]
    if isinstance(b, Aside):
        return [f"_{inline(b.line)}_"]
    if isinstance(b, Items):
        return [f"- {inline(i)}" for i in b.items]
    if isinstance(b, Quote):
        return [f"> {inline(ln)}" for ln in b.lines]
    if isinstance(b, Table):
        head = _row(tuple(c.head for c in b.columns), len(b.columns))
        rule = "|" + "|".join("---:" if c.right else "---" for c in b.columns) + "|"
        return [head, rule, *(_row(r, len(b.columns)) for r in b.rows)]
    if isinstance(b, Details):
        top = (["<details>", f"<summary>{_summary(b.summary)}</summary>"] if b.summary_apart
               else [f"<details><summary>{_summary(b.summary)}</summary>"])
        return [*top, "", *blocks(b.body), "", "</details>"]
    if isinstance(b, Code):
        return fence_block(b.text, b.lang).split("\n")
    if isinstance(b, Stack):
        return [ln for inner in b.blocks for ln in _lines(inner)]
    if isinstance(b, Fit):
        return blocks(b.wide)
    raise TypeError(f"not a block: {b!r}")


def blocks(bs: tuple[Block, ...]) -> list[str]:
    """Blocks as markdown lines, a blank line between each two."""
    out: list[str] = []
    for i, b in enumerate(bs):
        if i:
            out.append("")
        out += _lines(b)
    return out


def section(view: SectionView) -> str:
    """The section of the PR comment: ``### <title>`` and the document."""
    return "\n".join([f"### {md_escape(view.title)}", "", *blocks(view.document)]) + "\n"


__all__ = ["blocks", "inline", "section"]
