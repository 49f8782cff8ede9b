"""Headlines (the verdict, each root cause's title) hold at most 160 characters in every format, are cut as
plain text (never inside an escape), and name the ranks of a rank-specific loss."""

from __future__ import annotations

import dataclasses
import html as html_lib
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ad_diff import gate, pipeline
from ad_diff.core.headline import ELLIPSIS, HEADLINE_MAX, cap_parts, rank_scope
from ad_diff.core.model import Category, Finding, Severity
from ad_diff.report import html, markdown, terminal
from ad_diff.report.common import VERDICT_MAX, headline
from ad_diff.result import DiffResult, regroup
from ad_diff.settings import Settings
from tests.conftest import FIXTURES

SCEN = FIXTURES / "scenarios"
_BASE: dict[str, DiffResult] = {}


def _result(name: str) -> DiffResult:
    if name not in _BASE:
        _BASE[name] = pipeline.run(Settings(SCEN / name / "baseline", SCEN / name / "candidate"))
    return _BASE[name]


LONG_PATH = "/very/long/path/to/tensors/reference/logits.safetensors"
WORD = st.sampled_from(["a", "bb", "node_12", "x" * 40, "|", "`", "<b>", "&", "*", "_", "[", "]", "\\", "#",
                        "NRMSE=0.0912", LONG_PATH, "max|diff|"])
TEXT = st.lists(WORD, min_size=1, max_size=80).map(" ".join)
NAME = st.lists(st.sampled_from(["fuse", "_", "moe", "`", "|", "x" * 30, "<i>"]), min_size=1, max_size=8).map(
    "".join)


def _visible_md(line: str) -> str:
    """The text a reader sees of one markdown line (escapes and emphasis removed, entities decoded)."""
    line = re.sub(r"<[^>]+>", "", line)
    line = html_lib.unescape(re.sub(r"\\(.)", r"\1", line))
    return line.replace("**", "").replace("`", "")


CATS = st.sampled_from([Category.INPUT, Category.MATCH_LOSS, Category.NUMERIC_DRIFT])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(st.tuples(NAME, TEXT, CATS), min_size=1, max_size=3))
def test_every_headline_fits_in_every_format(items: list[tuple[str, str, Category]]) -> None:
    base = _result("partial_loss")
    findings = tuple(Finding(code="ADX999", category=cat, severity=Severity.ERROR, message=f"{t}: {m}",
                             transform=t if cat is Category.MATCH_LOSS else None) for t, m, cat in items)
    result = regroup(dataclasses.replace(base, findings=findings, groups=()), "error")
    verdict = gate.judge(result.findings, result.groups, "error")
    assert len(headline(result, verdict)) <= VERDICT_MAX
    groups = tuple(verdict.causes())
    assert all(len(g.title) <= HEADLINE_MAX for g in groups)
    md = markdown.render(result, verdict).splitlines()
    assert len(_visible_md(md[0]).removeprefix("## ❌ ")) <= HEADLINE_MAX
    for line in md:
        m = re.match(r"^\d+\. \S+ \*\*(.*?)\*\* <sub>", line) or re.match(r"^\d+\. \S+ \*\*(.*)\*\*", line)
        if m:
            assert len(_visible_md(m.group(1))) <= HEADLINE_MAX, line
    term = terminal.render(result, verdict, width=1000).splitlines()
    assert len(term[0]) <= HEADLINE_MAX
    page = html.render(result, verdict)
    title = re.search(r"<h1[^>]*>(.*?)</h1>", page, re.S)
    assert title is not None
    # The verdict icon is a decoration, as in markdown's "## ❌ " (hypothesis found a 159-character title).
    shown = html_lib.unescape(re.sub(r"<[^>]+>", "", title.group(1))).strip()
    assert len(shown.removeprefix("❌ ").removeprefix("✅ ")) <= HEADLINE_MAX


@given(parts=st.lists(st.tuples(TEXT, st.booleans()), min_size=1, max_size=5), limit=st.integers(20, 200))
def test_a_cut_headline_is_a_prefix_of_its_parts(parts: list[tuple[str, bool]], limit: int) -> None:
    got, cut = cap_parts(parts, limit)
    text = "".join(t for t, _ in got)
    assert len(text) <= limit
    assert cut == (sum(len(t) for t, _ in parts) > limit)
    if cut:
        assert text.endswith(ELLIPSIS)
        kept = got[:-1]
        for (t, code), (t0, code0) in zip(kept, parts, strict=False):
            assert code == code0
            assert t0.startswith(t)
            assert t == t0 or not code or len(kept) == 1  # a name is kept whole, or it is all there is
    else:
        assert got == tuple(parts)


def test_rank_scope() -> None:
    assert rank_scope([2], 4) == " on rank 2 of 4"
    assert rank_scope([1, 3], 4) == " on ranks 1, 3 of 4"
    assert rank_scope([0, 1], 2) == ""
    assert rank_scope([0], 1) == ""


def test_a_loss_on_one_rank_says_so_in_its_headline() -> None:
    result = _result("rank2_of_4_loss")
    verdict = gate.judge(result.findings, result.groups, "error")
    groups = tuple(verdict.causes())
    assert groups[0].title == "match_swiglu_pattern stopped matching on rank 2 of 4 (2 \u2192 0)"
    assert "on rank 2 of 4" in headline(result, verdict)
    loss = next(f for f in result.findings if f.category is Category.MATCH_LOSS)
    assert "on rank 2 of 4" in loss.message
