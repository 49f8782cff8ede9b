"""``--html``: the CLI writes the HTML report where asked (a folder of reports for ``batch``), names it in the
markdown as the place for detail, and changes nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import FIXTURES, run_cli

ML = FIXTURES / "scenarios/metadata_loss"
DRIFT = (FIXTURES / "tensors/gpu/baseline", FIXTURES / "tensors/gpu/beyond")


def test_compare_writes_the_report_and_the_markdown_names_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = run_cli(ML / "baseline", ML / "candidate", "--html", out / "report.html", "--markdown",
                  out / "c.md")
    assert res.code == 1, res.err
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "metadata lost at <code>match_rope_pattern</code>" in page
    md = (out / "c.md").read_text()
    assert "**Details**: pipeline timeline, rewritten regions side by side and drift plots are in the HTML " \
           "report `report.html`" in md
    first_screen = md.split("\n### ", 1)[0]
    assert "`report.html`" in first_screen
    assert sorted(p.name for p in out.iterdir()) == ["c.md", "report.html"]


def test_html_changes_no_other_report(tmp_path: Path) -> None:
    plain = run_cli(*DRIFT, "-f", "json")
    with_html = run_cli(*DRIFT, "-f", "json", "--html", tmp_path / "r.html")
    assert plain.code == with_html.code == 1
    assert json.loads(plain.out) == json.loads(with_html.out)  # the plot data it collects is not in the JSON


def test_plots_are_named_not_linked(tmp_path: Path) -> None:
    res = run_cli(*DRIFT, "--markdown", tmp_path / "c.md", "--plots", tmp_path / "plots",
                  "--html", tmp_path / "r.html")
    assert res.code == 1, res.err
    md = (tmp_path / "c.md").read_text()
    assert ".png)" not in md  # no relative link: dead in a PR comment
    assert "inline in the HTML report `r.html`" in md
    assert "Plots of <code>logits</code>" in (tmp_path / "r.html").read_text()


def test_batch_writes_a_folder_of_reports(tmp_path: Path) -> None:
    evil = "evil..<b>[x]"
    for side, run in (("b", "baseline"), ("c", "candidate")):
        (tmp_path / side).mkdir()
        # copies, not links: batch refuses a model folder that links outside its root (issue 14)
        shutil.copytree(ML / run, tmp_path / side / "metadata_loss", symlinks=True)
        shutil.copytree(FIXTURES / "scenarios/identical" / run, tmp_path / side / "identical", symlinks=True)
        shutil.copytree(FIXTURES / "hostile/markup_names" / run, tmp_path / side / evil, symlinks=True)
    out = tmp_path / "out"
    res = run_cli("batch", tmp_path / "b", tmp_path / "c", "--html", out / "html", "--markdown", out / "c.md",
                  "--jobs", "1")
    assert res.code == 1, res.err
    pages = sorted(p.name for p in (out / "html").iterdir())
    assert len(pages) == 4
    assert "index.html" in pages
    assert sorted(p.name for p in out.iterdir()) == ["c.md", "html"]  # nothing written elsewhere
    index = (out / "html/index.html").read_text()
    for page in pages:
        if page != "index.html":
            assert f'href="{page}"' in index
    assert "evil..&lt;b&gt;[x]" in index
    md = (out / "c.md").read_text()
    assert "one HTML report per model, listed in `html/index.html`" in md
    assert "report `html/metadata_loss-" in md  # each model's details name its own page


def test_batch_html_must_be_a_folder(tmp_path: Path) -> None:
    for side, run in (("b", "baseline"), ("c", "candidate")):
        (tmp_path / side).mkdir()
        shutil.copytree(ML / run, tmp_path / side / "m", symlinks=True)
    taken = tmp_path / "report.html"
    taken.write_text("mine")
    res = run_cli("batch", tmp_path / "b", tmp_path / "c", "--html", taken)
    assert res.code == 2
    assert "batch --html needs a folder" in res.err
    assert taken.read_text() == "mine"


def test_html_from_the_config_file(tmp_path: Path) -> None:
    (tmp_path / ".ad-diff.yaml").write_text("html: out/report.html\n")
    res = run_cli(ML / "baseline", ML / "candidate", cwd=tmp_path)
    assert res.code == 1, res.err
    assert (tmp_path / "out/report.html").is_file()
