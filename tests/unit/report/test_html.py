"""The standalone HTML report: what it shows (verdict and root causes in the PR comment's order, timeline,
regions side by side with lost metadata marked, tensor plots, config diff), that it is self-contained and
locked down (no network, a CSP that admits only its own style and script), that hostile names stay text,
and that the 4-layer model's file stays under 2 MB."""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ad_diff import gate, pipeline
from ad_diff.core.model import Category, Finding, Severity
from ad_diff.formats import Format
from ad_diff.report import html
from ad_diff.report.common import partition
from ad_diff.result import DiffResult, regroup
from ad_diff.settings import Settings
from tests.ci_runs import pair
from tests.conftest import FIXTURES, run_cli

SIZE_LIMIT = 2 * 1024 * 1024
"""The 4-layer model's report must stay under this (issue 16)."""
TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "div", "span", "nav", "a", "label", "input",
    "main", "section", "h1", "h2", "h3", "p", "code", "br", "strong", "em", "ol", "ul", "li", "details",
    "summary", "table", "caption", "thead", "tbody", "tr", "th", "td", "pre", "svg", "rect", "line", "text",
    "circle", "figure", "figcaption", "footer", "script",
}
"""Every element the templates write (``title`` is also SVG's tooltip). A name that became markup adds
another, or a second ``script``."""


class _Page(HTMLParser):
    """The elements and the text of a page, as a browser's parser reads them."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.data.append(data)

    def text(self) -> str:
        return "".join(self.data)

    def count(self, tag: str, cls: str | None = None) -> int:
        return sum(1 for t, a in self.tags
                   if t == tag and (cls is None or cls in (a.get("class") or "").split()))


def _run(base: Path, cand: Path, **kw: object) -> tuple[DiffResult, gate.Verdict]:
    result = pipeline.run(Settings(base, cand, tensor_plots=True, **kw))  # type: ignore[arg-type]
    return result, gate.judge(result.findings, result.groups, "error")


def _scenario(name: str) -> tuple[DiffResult, gate.Verdict]:
    return _run(FIXTURES / "scenarios" / name / "baseline", FIXTURES / "scenarios" / name / "candidate")


@functools.cache
def _scenario_once(name: str) -> DiffResult:
    """The scenario's result, computed once for the property test's examples (each swaps its own names into
    this frozen result, so sharing it changes nothing)."""
    return _scenario(name)[0]


def test_root_causes_come_first_in_the_pr_comments_order_and_words() -> None:
    result, verdict = _scenario("metadata_loss")
    text = html.render(result, verdict)
    page = _Page(text)
    gated = partition(verdict).gated
    assert [g.group.title for g in gated] == ["metadata lost at match_rope_pattern"]
    words = page.text()
    assert "ad-diff: FAIL: 1 root cause (metadata lost at match_rope_pattern) \u2192 1 match loss" in words
    # the verdict, then the root causes, then the evidence they rest on (the lost metadata in the graphs)
    assert text.index('id="causes"') < text.index('id="graph"') < text.index('id="timeline"')
    md = Format.markdown.render(result, verdict)
    assert "1. \u274c **metadata lost at `match_rope_pattern`**" in md  # the same title, number and icon
    assert page.count("li", "cause") == len(gated)
    assert page.count("li", "finding") == len(result.findings)  # every finding, once


SCENARIOS = sorted(p.name for p in (FIXTURES / "scenarios").iterdir() if (p / "candidate").is_dir())
SECTION_OF = {"L": "transforms", "G": "graph", "T": "tensors", "C": "config"}
"""The page section that shows a finding's evidence, by its code's letter (ADL: the log, ...)."""


@pytest.mark.parametrize("scenario", [*SCENARIOS, "tensors/gpu/beyond"])
def test_sections_come_in_the_order_of_what_the_verdict_rests_on(scenario: str) -> None:
    if scenario.startswith("tensors/"):
        base, cand = FIXTURES / "tensors/gpu/baseline", FIXTURES / scenario
    else:
        base, cand = (FIXTURES / "scenarios" / scenario / run for run in ("baseline", "candidate"))
    try:
        result = pipeline.run(Settings(base, cand))
    except Exception:  # noqa: BLE001 - a scenario of an input error: no page to order
        pytest.skip("input error")
    verdict = gate.judge(result.findings, result.groups, "error")
    page = _Page(html.render(result, verdict))
    sections = [a["id"] for tag, a in page.tags if tag == "section"]
    assert sections[:2] == ["verdict", "causes"]
    assert sections[-1] == "inputs"
    evidence = sections[2:-1]
    nav = [a["href"][1:] for tag, a in page.tags if tag == "a" and (a.get("href") or "").startswith("#")
           and a["href"][1:] in evidence]
    assert nav[: len(evidence)] == evidence  # the menu follows the page
    unchanged = not any(r.changed for r in result.transforms)
    if unchanged:  # nothing to see there: last, folded
        assert evidence[-2:] == ["timeline", "transforms"]
        assert not any(tag == "details" and a.get("id") == "all-transforms" and "open" in a
                       for tag, a in page.tags)
    first = next((f for gv in verdict.groups if gv.gated for f in gv.group.findings
                  if f.severity is not Severity.INFO), None)
    want = SECTION_OF.get(first.code[2]) if first is not None else None
    if want is not None and want in evidence and not (unchanged and want == "transforms"):
        # the gate's first evidence leads (the log's is the timeline, drawn just before its table)
        assert evidence[0] == ("timeline" if want == "transforms" else want), (scenario, first.code, evidence)


def test_a_drift_only_page_shows_the_tensors_first_and_folds_the_unchanged_pipeline() -> None:
    result = pipeline.run(Settings(FIXTURES / "tensors/gpu/baseline", FIXTURES / "tensors/gpu/beyond"))
    verdict = gate.judge(result.findings, result.groups, "error")
    assert verdict.failed
    assert not any(r.changed for r in result.transforms)
    text = html.render(result, verdict)
    assert text.index('<section id="tensors">') < text.index('<section id="timeline">')
    timeline = text.split('<section id="timeline">', 1)[1].split("</section>")[0]
    assert "<details><summary>Unchanged: all" in timeline


def test_timeline_marks_the_changed_transforms() -> None:
    result, verdict = _scenario("failed_transform")
    page = _Page(html.render(result, verdict))
    changed = [i for i, r in enumerate(result.transforms, 1) if r.changed]
    assert changed
    cols = [a for t, a in page.tags if t == "a" and "col" in (a.get("class") or "").split()]
    assert len(cols) == len(result.transforms)
    marked = [int((a["href"] or "")[3:]) for a in cols if "is-changed" in (a.get("class") or "")]
    assert marked == changed
    assert "F" in page.text()  # the failed transform's state letter


def test_regions_side_by_side_with_lost_metadata_highlighted() -> None:
    result, verdict = _scenario("metadata_loss")
    page = _Page(html.render(result, verdict))
    assert page.count("div", "side-base") == page.count("div", "side-cand") == 2  # two regions, both sides
    lost = [a for t, a in page.tags if t == "span" and "lost" in (a.get("class") or "").split()]
    # torch_rope_1 and torch_rope_3 lost their metadata at match_rope_pattern; the next transform rewrote them
    assert [a["title"] for a in lost] == ["metadata lost at pattern_matcher/match_rope_pattern"] * 2
    assert "%torch_rope_1 = auto_deploy.torch_rope.default(" in page.text()
    assert page.count("td", "lost-cell") == 2  # the table of the nodes that lost metadata


def test_tensor_table_holds_the_drift_plots() -> None:
    result, verdict = _run(FIXTURES / "tensors/gpu/baseline", FIXTURES / "tensors/gpu/beyond")
    text = html.render(result, verdict)
    page = _Page(text)
    assert page.count("rect", "hist") > 0
    assert page.count("circle", "pt") > 0
    # the output first (its plots right below its row), then drifting node captures up to the cap
    assert text.index("Plots of <code>logits</code>") < text.index("Drifting node captures")
    assert page.count("details", "plots") == 12
    assert "Plots are drawn for the first 12 drifting tensors" in page.text()


def test_config_diff_is_shown() -> None:
    result, verdict = _scenario("config_unexplained")
    words = _Page(html.render(result, verdict)).text()
    assert "Config applied? (each run's config against its own log)" in words
    assert "enabled in config, logged disabled" in words


def test_self_contained_and_locked_down() -> None:
    text = html.render(*_scenario("metadata_loss"))
    page = _Page(text)
    assert not re.search(r"https?://|src=|<link|@import|url\(", text)
    csp = next(a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") ==
               "Content-Security-Policy")
    assert csp is not None
    for tag in ("style", "script"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.S)
        assert body is not None
        digest = base64.b64encode(hashlib.sha256(body.group(1).encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp, f"the CSP does not admit the page's own {tag}"
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives["default-src"] == ["'none'"]
    # nothing but the page's own style and script (docs/html-report.md: "no other source at all")
    assert set(directives) == {"default-src", "style-src", "script-src"}
    for key in ("style-src", "script-src"):
        assert len(directives[key]) == 1
        assert directives[key][0].startswith("'sha256-")


def test_hostile_names_stay_text() -> None:
    # fixtures/hostile/markup_names: names with <script>, |, backticks, rich markup, in dumps and tensors
    case = FIXTURES / "hostile/markup_names"
    text = html.render(*_run(case / "baseline", case / "candidate"))
    page = _Page(text)
    assert {t for t, _ in page.tags} <= TAGS
    assert page.count("script") == 1
    assert "<script>alert" not in text
    assert "<b>" not in text
    words = page.text()
    assert "fuse_<script>alert(1)</script>|`x`|[bold]red[/bold]" in words  # shown as written
    assert "evil.<b>|```op```|[red]x[/red]" in words


NAME = st.lists(
    st.sampled_from(list("ab_|`<>&*[]\\\"' -#!()") + ["<script>", "</td>", "[bold]", "```", "-->"]),
    min_size=1, max_size=12,
).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(st.tuples(NAME, NAME, NAME, NAME), min_size=1, max_size=4))
def test_any_name_stays_text(names: list[tuple[str, str, str, str]]) -> None:
    base = _scenario_once("metadata_loss")
    findings = tuple(Finding(code="ADG005", category=Category.STRUCTURE_CHANGE, severity=Severity.ERROR,
                             message=f"{t}: {m}", transform=t, node=n, tensor=x) for t, n, x, m in names)
    rows = tuple(dataclasses.replace(r, transform=names[i % len(names)][0], stage=names[i % len(names)][1])
                 for i, r in enumerate(base.transforms))
    result = regroup(dataclasses.replace(base, findings=findings, transforms=rows, groups=()), "error")
    page = _Page(html.render(result, gate.judge(result.findings, result.groups, "error")))
    assert {t for t, _ in page.tags} <= TAGS
    assert page.count("script") == 1
    words = page.text()
    for t, n, x, m in names:
        for name in (t, n, x, m):
            assert name.strip() in words


def test_four_layer_model_stays_under_2_mb(moe4_pair: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    res = run_cli(*moe4_pair, "--html", out, "-f", "json")
    assert res.code == 1, res.err
    size = out.stat().st_size
    assert size < SIZE_LIMIT, f"{size} bytes"
    page = _Page(out.read_text())
    assert page.count("a", "col") == 90  # every transform in the timeline
    assert page.count("div", "region") > 0


def test_every_finding_acknowledged_says_so(tmp_path: Path) -> None:
    base, cand = pair(tmp_path)
    exp = tmp_path / "expected.yaml"
    exp.write_text(
        "expected:\n  - transform: match_rope_pattern\n    reason: rope moved into attention\n"
        "  - transform: fuse_gemms\n    after: disabled\n    reason: disabled on purpose\n"
    )
    result = pipeline.run(Settings(base, cand, expected_changes=exp))
    verdict = gate.judge(result.findings, result.groups, "error")
    headline = "PASS: every finding acknowledged or explained (2 root causes)"
    words = _Page(html.render(result, verdict)).text()
    assert f"ad-diff: {headline}" in words
    assert "acknowledged: rope moved into attention" in words
    assert Format.terminal.render(result, verdict).startswith(f"ad-diff: {headline}")


@pytest.mark.parametrize("model", ["plain", "../../escape", "index", "a/b", "<b>x</b>"])
def test_batch_page_names_stay_in_the_folder(model: str) -> None:
    name = html.page_name(model)
    assert re.fullmatch(r"[A-Za-z0-9_.-]+\.html", name)
    assert name != html.INDEX
    assert not name.startswith(".")
    assert html.page_name(model) != html.page_name(model + "_")
