"""A new kind costs one folder and one registration line: the toy kind of ``tests/unit/kinds/toy/`` runs end
to end through :func:`ad_diff.pipeline.run`, the gate and the reports, and changes nothing for the others."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ad_diff import gate, pipeline
from ad_diff.formats import COMPARISON, Format
from ad_diff.kinds import KINDS
from ad_diff.settings import Settings
from tests.unit.kinds.toy import TOY

WITH_TOY = (*KINDS, TOY)  # the one registration line

SCEN = Path("fixtures/scenarios/identical")


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of a scenario whose runs are identical, each with a ``toy.txt``."""
    base, cand = tmp_path / "baseline", tmp_path / "candidate"
    shutil.copytree(SCEN / "baseline", base)
    shutil.copytree(SCEN / "candidate", cand)
    (base / "toy.txt").write_text("1\n")
    (cand / "toy.txt").write_text("2\n")
    return base, cand


def test_a_toy_kind_runs_end_to_end(runs: tuple[Path, Path]) -> None:
    base, cand = runs
    result = pipeline.run(Settings(base, cand), kinds=WITH_TOY)
    toy = [f for f in result.findings if f.code == "ADX001"]
    assert [f.message for f in toy] == [f"toy number 1 -> 2 ({len(result.transforms)} transforms paired)"]
    assert len(result.transforms) > 0  # the toy read the log kind's rows through the context
    verdict = gate.judge(result.findings, result.groups, "error")
    assert verdict.exit_code == gate.EXIT_REGRESSION
    assert json.loads(Format.json.render(result, verdict))["sections"]["toy"] == {
        "baseline": 1, "candidate": 2, "transforms": len(result.transforms)}


def test_the_toy_section_is_drawn_in_every_medium(runs: tuple[Path, Path]) -> None:
    """Its one view (tests/unit/kinds/toy/section.py) reaches every report through the seam: no reporter
    names the toy, and no line of the toy's lives outside its folder."""
    result = pipeline.run(Settings(*runs), kinds=WITH_TOY)
    verdict = gate.judge(result.findings, result.groups, "error")
    md = Format.markdown.render(result, verdict)
    assert "toy number 1 -> 2" in md  # the finding
    assert "### Toy numbers\n\nbaseline 1, candidate 2" in md  # the section, though no reporter names it
    assert "### Toy numbers\n\nbaseline 1, candidate 2" in Format.step_summary.render(result, verdict)
    term = Format.terminal.render(result, verdict)
    assert "toy number 1 -> 2" in term
    assert "Toy numbers\nbaseline 1, candidate 2" in term  # the title and the document: no glance of its own
    page = Format.html.render(result, verdict)
    assert '<section id="toy">\n  <h2>Toy numbers</h2>\n  <p>baseline 1, candidate 2</p>' in page
    assert '<a href="#toy">Toy numbers</a>' in page  # in the navigation, in pipeline order
    junit = Format.junit.render(result, verdict)
    assert 'type="ADX001"' in junit  # its finding gates, in the run suite


def test_the_registered_kinds_alone_render_no_toy(runs: tuple[Path, Path]) -> None:
    result = pipeline.run(Settings(*runs))
    verdict = gate.judge(result.findings, result.groups, "error")
    for fmt in COMPARISON.formats:
        assert "Toy numbers" not in fmt.render(result, verdict), fmt


def test_without_the_toy_the_same_runs_pass(runs: tuple[Path, Path]) -> None:
    result = pipeline.run(Settings(*runs))
    assert "toy" not in result.sections
    assert gate.decide(result.findings, "error").exit_code == gate.EXIT_OK


def test_a_toy_kind_without_data_is_skipped(runs: tuple[Path, Path]) -> None:
    base, cand = runs
    (cand / "toy.txt").unlink()
    result = pipeline.run(Settings(base, cand), kinds=WITH_TOY)
    assert result.skipped["toy"].reason == "no_data"
    assert not [f for f in result.findings if f.code == "ADX001"]
