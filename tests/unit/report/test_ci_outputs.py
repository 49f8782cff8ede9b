"""CI outputs: PR comment under 65,536 characters (folding least important first), step summary under 1 MiB,
batch markdown folding passing models first, and all outputs written from the CLI."""

from __future__ import annotations

from pathlib import Path

from ad_diff import gate, pipeline
from ad_diff.formats import Format
from ad_diff.report import STEP_SUMMARY_LIMIT
from ad_diff.report import batch as batch_report
from ad_diff.report.markdown import COMMENT_LIMIT
from ad_diff.settings import Settings
from ad_diff.workflows.batch import run_batch
from tests.ci_runs import BASE_LOG, REGRESSED_LOG, pair
from tests.conftest import make_run, v3


def _huge(tmp_path: Path, n: int = 2500):
    base = "".join(
        v3("pattern_matcher", f"match_pattern_with_a_long_name_{i:05d}", "matches=8") for i in range(n)
    )
    cand = "".join(v3("pattern_matcher", f"match_pattern_with_a_long_name_{i:05d}", f"matches={i % 3 * 4}")
                   for i in range(n))
    b, c = make_run(tmp_path / "b", base), make_run(tmp_path / "c", cand)
    result = pipeline.run(Settings(b, c))
    return result, gate.judge(result.findings, result.groups, "error")


def test_comment_folds_to_fit_and_says_what_was_folded(tmp_path: Path) -> None:
    result, verdict = _huge(tmp_path)
    texts = {f.value: f.render(result, verdict, comment_limit=COMMENT_LIMIT)
             for f in (Format.markdown, Format.step_summary)}
    # the report would otherwise be far over the limit: the step summary (its own limit is 1 MiB) holds it
    # unfolded. Measured on it, not on the JSON report, whose 3.8 MB took 4 of the test's 7 CPU-seconds.
    assert len(texts["step_summary"]) > 9 * COMMENT_LIMIT
    md = texts["markdown"]
    assert len(md) <= COMMENT_LIMIT
    # the verdict survives
    assert md.startswith("## \u274c ad-diff: FAIL: 1667 root causes (1667 match losses)")
    folded_line = next(
        line for line in md.splitlines() if line.startswith("_Folded to fit the comment limit")
    )
    assert "unchanged transforms" in folded_line
    assert "root-cause details" in folded_line
    # the first screen is whole: the first root causes by name, the rest counted
    assert "1. \u274c **`match_pattern_with_a_long_name_00000` stopped matching (8 \u2192 0)**" in md
    assert "_and 1657 more root causes, listed below._" in md
    summary = texts["step_summary"]
    assert len(summary.encode("utf-8")) <= STEP_SUMMARY_LIMIT
    assert len(summary) > len(md)  # the step summary has room for more detail


def _first_screen(md: str) -> str:
    """Everything before the first section heading (verdict, counts, root causes, runs line)."""
    return md.split("\n### ", 1)[0]


def test_comment_limit_drops_details_from_the_bottom_never_the_first_screen(tmp_path: Path) -> None:
    base, cand = pair(tmp_path)
    result = pipeline.run(Settings(base, cand))
    verdict = gate.judge(result.findings, result.groups, "error")
    full = Format.markdown.render(result, verdict)
    assert len(full) > 1500
    assert "2 root causes" in full.splitlines()[0]
    folded = []
    for limit in (len(full) - 1, 1400, 1200):
        md = Format.markdown.render(result, verdict, comment_limit=limit)
        assert len(md) <= limit
        assert _first_screen(md) == _first_screen(full)  # verdict, counts and both root causes, untouched
        folded.append(md.split("_Folded to fit the comment limit: ", 1)[1].split("._", 1)[0].split(", "))
    assert folded[0] == ["inputs"]  # the bottom goes first
    assert "root-cause details" not in folded[1]  # details go last
    assert "root-cause details" in folded[2]


def test_batch_markdown_folds_passing_models_first(tmp_path: Path) -> None:
    b, c = tmp_path / "b", tmp_path / "c"
    for i in range(6):
        make_run(b / f"m{i}", BASE_LOG)
        make_run(c / f"m{i}", REGRESSED_LOG if i == 0 else BASE_LOG)
    batch = run_batch(b, c, lambda n, x, y: Settings(x, y), jobs=1)
    full = batch_report.render_markdown(batch)
    limit = len(full) - 100
    md = batch_report.render_markdown(batch, limit=limit)
    assert len(md) <= limit
    assert "Details folded to fit the comment limit: m5" in md
    assert "<summary>\u274c m0" in md  # the failing model's details are kept
    for i in range(6):  # every model stays in the summary table
        assert f"| <code>m{i}</code> |" in md


def test_cli_writes_step_summary_by_appending(tmp_path: Path, cli) -> None:
    base, cand = pair(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step output\n")
    res = cli(
        base, cand, "--step-summary", summary, "--comment-limit", "2000", "--markdown", tmp_path / "c.md"
    )
    assert res.code == 1
    text = summary.read_text()
    assert text.startswith("# earlier step output\n")
    assert "ad-diff: FAIL" in text
    assert len((tmp_path / "c.md").read_text()) <= 2000
