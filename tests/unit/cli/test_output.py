"""An input error reaches the report files the command was asked to write (ad_diff/cli/output.py): the
markdown report and the step summary say what went wrong and what to do, the JSON report is the error
object. So a CI job posts the error as it would a verdict (docs/github-actions.md)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURES, run_cli


def test_an_input_error_reaches_the_markdown_the_summary_and_the_json(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    res = run_cli(tmp_path / "nope1", tmp_path / "nope2", "--markdown", tmp_path / "c.md",
                  "--step-summary", summary, "--json", tmp_path / "r.json")
    assert res.code == 2
    md = (tmp_path / "c.md").read_text()
    assert md.startswith("## \u26d4 ad-diff: ERROR (exit 2)")
    assert "nope1" in md
    assert "nope2" in md
    assert "never a pass" in md
    assert summary.read_text() == "earlier step\n" + md  # appended, as every step's summary is
    error = json.loads((tmp_path / "r.json").read_text())
    assert (error["verdict"], error["exit_code"]) == ("error", 2)
    assert "nope1" in error["error"]["message"]


def test_an_error_about_the_output_itself_is_still_a_clean_error(tmp_path: Path) -> None:
    pair = FIXTURES / "scenarios/metadata_loss"
    inside = pair / "candidate" / "report.md"  # refused: never written into a run folder
    res = run_cli(pair / "baseline", pair / "candidate", "--markdown", inside)
    assert res.code == 2
    assert res.err.startswith("ad-diff: error: ")
    assert "Traceback" not in res.err
    assert not inside.exists()
