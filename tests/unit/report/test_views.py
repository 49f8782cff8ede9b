"""Every kind's SectionView is drawn by one renderer per medium (ad_diff.report.md_view, terminal_view,
html_view): each piece escaped by what it is, the layout rules the kinds rely on, and the property that
holds the seam honest: a name from the inputs reaches a report only through that report's escaper, in any
block of any view."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import TemplateNotFound
from rich.console import Console

from ad_diff.core.view import (
    BREAK,
    Aside,
    Block,
    Code,
    Column,
    Details,
    Fit,
    Heading,
    Histogram,
    Items,
    Para,
    Quote,
    Scatter,
    SectionView,
    Stack,
    Table,
    Tone,
    code,
    em,
    inline,
    line,
    names,
    strong,
    text,
)
from ad_diff.report import html_view, md_view, svg, terminal_view

HOSTILE = "x|y <b>@alice `tick` *em* [l](u) #12 \u202e"


def _md(*blocks: Block) -> str:
    return md_view.section(SectionView("k", "Kind", tuple(blocks)))


def _term(view: SectionView, width: int = 120) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, no_color=True).print(terminal_view.section(view))
    return buf.getvalue()


def test_markdown_marks_each_piece_by_what_it_is() -> None:
    md = md_view.inline(line("a ", code("n_1"), " ", inline("uses `op`"), " ", strong("s"), " ", em("e")))
    assert md == "a `n_1` uses `op` **s** *e*"
    assert md_view.inline(line(code("n|1"), BREAK), cell=True) == "<code>n&#124;1</code><br>"


def test_markdown_blocks_stand_a_blank_line_apart_and_an_empty_list_keeps_its_place() -> None:
    md = _md(Heading(line(code("t"))), Items(()), Details(line("r"), (Code("- a\n+ b", "diff"),),
                                                          summary_apart=True))
    assert md == ("### Kind\n\n#### `t`\n\n\n<details>\n<summary>r</summary>\n\n```diff\n- a\n+ b\n```\n\n"
                  "</details>\n")
    assert _md(Stack((Para(line("lead:")), Items((line("a"),))))) == "### Kind\n\nlead:\n- a\n"
    assert _md(Aside(line("aside")), Quote((line("q"),))) == "### Kind\n\n_aside_\n\n> q\n"


def test_a_markdown_table_aligns_its_figures_and_pads_a_short_row() -> None:
    t = Table((Column(line("Name")), Column(line("n"), right=True), Column(line("m"), right=True)),
              ((line(code("a")), line("1"), ()), (line("… 2 more"),)))
    assert _md(t).split("\n")[2:] == ["| Name | n | m |", "|---|---:|---:|", "| <code>a</code> | 1 |  |",
                                      "| … 2 more | | |", ""]


def test_names_lists_at_most_some_and_counts_the_rest() -> None:
    assert md_view.inline(names(["a", "b", "c"], 2)) == "`a`, `b` and 1 more"


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40), st.sampled_from(["para", "item", "cell", "summary", "heading"]))
def test_a_name_reaches_markdown_only_through_the_escaper(name: str, where: str) -> None:
    spans = line("see ", code(name), " and ", text(name))
    blocks: dict[str, Block] = {"para": Para(spans), "item": Items((spans,)), "heading": Heading(spans),
                                "cell": Table((Column(line("c")),), ((spans,),)),
                                "summary": Details(spans, (Para(line("x")),))}
    block = blocks[where]
    md = _md(block)
    body = md.split("\n", 2)[2]
    outside_code = re.sub(r"(`+).*?\1|<code>.*?</code>", "", body, flags=re.S)
    # no raw HTML or mention from the name outside a code span or element (ad-diff's own tags aside)
    assert "<" not in re.sub(r"</?(details|summary|code|br)>", "", outside_code)
    assert not re.search(r"(?<![\w`])@[A-Za-z0-9]", outside_code)  # a mention would notify someone
    assert "\u202e" not in md


def test_the_terminal_draws_the_glance_literally_with_its_tones() -> None:
    view = SectionView("k", "Kind", (Para(line("doc")),),
                       (Para(line(text("[bold]not markup[/bold] ", Tone.BAD), inline("uses `op`"))),))
    out = _term(view)
    assert "[bold]not markup[/bold] uses op" in out
    assert "doc" not in out  # the glance, not the document
    styled = terminal_view.styled(line(text("a", Tone.ALERT), text("b")))
    assert styled.plain == "ab"
    assert str(styled.spans[0].style) == "bold yellow"


def test_the_terminal_draws_the_title_and_document_of_a_view_without_a_glance() -> None:
    out = _term(SectionView("k", "Kind", (Para(line("doc")), Items((line("a"),)))))
    assert out.split("\n")[:3] == ["Kind", "doc", "- a"]


def test_a_fit_picks_its_layout_by_the_width() -> None:
    wide = Table(tuple(Column(line(f"column {i}")) for i in range(8)),
                 ((tuple(line("v") for _ in range(8))),))
    narrow = Table((Column(line("one")),), ((line("v"),),))
    view = SectionView("k", "Kind", (), (Fit((wide,), (narrow,), at=150),))
    assert "column 7" in _term(view, 200)
    assert "column 7" not in _term(view, 60)
    assert "one" in _term(view, 60)


def test_html_draws_a_view_without_a_page_escaped() -> None:
    view = SectionView("k", "Kind <x>", (Heading(line("h")), Para(line(text(HOSTILE), code(HOSTILE))),
                                         Table((Column(line("n"), right=True),), ((line("1"),),), "t")))
    out = str(html_view.drawn(view))
    assert out.startswith('<section id="k">\n  <h2>Kind &lt;x&gt;</h2>\n  <h4>h</h4>')
    assert "<b>" not in out
    assert "&lt;b&gt;" in out
    assert "\u202e" not in out
    assert "\\u202e" in out
    assert '<td class="num">1</td>' in out
    assert "<caption>t</caption>" in out


def test_a_kinds_page_is_read_from_its_package_and_nothing_else() -> None:
    source, _, _ = html_view.KindPages().get_source(None, "ad_diff.kinds.graph/page.html.j2")  # type: ignore[arg-type]
    assert '<section id="graph">' in source
    for bad in ("page.html.j2", "ad_diff.kinds.graph/missing.j2", "no.such.package/page.html.j2",
                "ad_diff/kinds/graph/page.html.j2"):
        with pytest.raises(TemplateNotFound):
            html_view.KindPages().get_source(None, bad)  # type: ignore[arg-type]


def test_the_html_report_draws_a_pages_figures() -> None:
    hist = html_view.figure(Histogram(-6.0, -2.0, (3, 0, 1), 1e-4))
    assert isinstance(hist, svg.Histogram)
    assert hist.total == 4
    assert html_view.figure(Scatter((1.0, float("nan")), (1.5, 2.0))) is not None
    assert html_view.figure(Scatter((float("nan"),), (1.0,))) is None  # no finite pair: nothing to draw
    assert html_view.figure(None) is None
