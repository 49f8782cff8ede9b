"""Expected changes read the right way up in every report (terminal, markdown, HTML, JSON, JUnit).

Metamorphic, over failing scenarios of every kind: acknowledging every finding of a comparison in an
expected-changes file (and adding stale entries) must turn it into a pass in which

* every acknowledged finding reads as acknowledged: no ❌ anywhere, no ``error`` in the terminal's findings
  table, no JUnit failure, and the counts line (JSON ``summary.categories``) counts no loss, only how many
  were acknowledged;
* a stale entry is no root cause and no input problem: it is counted as a stale expected change, listed
  apart after the root causes ("Expected-changes file"), and never numbered among them.

And with the real change left unacknowledged, the stale entries still come after it, never above it.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES, run_cli

SCENARIOS = ["metadata_loss", "match_collapse", "failed_transform", "config_unexplained", "crash_midway",
             "disabled_transform", "op_form_change"]
STALE = [{"transform": "no_such_transform_anywhere", "reason": "stale on purpose"},
         {"code": "ADL00*", "transform": "fuse_*", "before": 99, "after": 98, "reason": "stale too"}]


def _entries(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One entry per finding, as narrow as the finding allows."""
    out = []
    for f in report["findings"]:
        entry = {"code": f["code"], "reason": f"acknowledged in the test ({f['code']})"}
        for key in ("transform", "node", "tensor"):
            if f.get(key):
                entry[key] = f[key].replace("[", "[[]")  # fnmatch globs: a literal '['
        out.append(entry)
    return out


def _run(scenario: str, tmp_path: Path, expected: list[dict[str, Any]] | None) -> dict[str, Any]:
    pair = FIXTURES / "scenarios" / scenario
    args: list[str | Path] = [pair / "baseline", pair / "candidate", "--no-color", "--no-config",
                              "--markdown", tmp_path / "c.md", "--json", tmp_path / "r.json",
                              "--junit", tmp_path / "j.xml", "--html", tmp_path / "r.html"]
    if expected is not None:
        (tmp_path / "exp.yaml").write_text(yaml.safe_dump({"expected": expected}))
        args += ["--expected", tmp_path / "exp.yaml"]
    res = run_cli(*args, env={"COLUMNS": "160"})
    assert res.code in (0, 1), res.err
    return {"code": res.code, "terminal": res.out, "md": (tmp_path / "c.md").read_text(),
            "json": json.loads((tmp_path / "r.json").read_text()), "junit": (tmp_path / "j.xml").read_text(),
            "html": (tmp_path / "r.html").read_text()}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_everything_acknowledged_reads_acknowledged_stale_entries_apart(scenario: str,
                                                                      tmp_path: Path) -> None:
    before = _run(scenario, tmp_path, None)
    assert before["code"] == 1, "the scenario must hold a gating change"
    after = _run(scenario, tmp_path, [*_entries(before["json"]), *STALE])
    report = after["json"]
    assert after["code"] == 0
    assert report["verdict"] == "pass"
    problems = [f for f in report["findings"] if f["severity"] != "info"]
    assert all(f["acknowledged"] for f in problems if f["code"] != "ADX001")
    # the counts count no loss: only the stale entries, under their own category
    counted = {k: n for k, n in report["summary"]["categories"].items() if n}
    assert counted == {"expected_changes": len(STALE)}
    assert report["summary"]["root_causes"] == 0
    # no ❌, no 'error' for an acknowledged finding, no JUnit failure
    for name in ("md", "html", "terminal"):
        assert "\u274c" not in after[name], name
    table = after["terminal"].split("Findings (", 1)[1].split("* = gates", 1)[0]
    assert not re.search(r"│\s*\d*\s*│\s*(error|warning)\*?\s*│\s*AD[^X]", table)
    assert ET.fromstring(after["junit"]).find(".//failure") is None
    # stale entries: counted as such, never an input problem, never a numbered root cause, listed after
    for text in (after["md"], after["terminal"]):
        assert f"{len(STALE)} stale expected changes" in text
        assert "input problem" not in text
    first_screen = after["md"].split("<sub>Runs:", 1)[0]
    numbered = re.findall(r"^\d+\. .*$", first_screen, re.M)
    assert not [ln for ln in numbered if "expected change at" in ln]
    assert after["md"].index("### Expected-changes file") > after["md"].index("### Findings")
    assert "<h3>Expected-changes file</h3>" in after["html"]
    causes = [g["cause"] for g in report["groups"]]
    stale_at = [i for i, c in enumerate(causes) if c == "stale_expectation"]
    assert len(stale_at) == len(STALE)
    assert all(c == "stale_expectation" or i < min(stale_at) or g["severity"] == "info"
               for i, (c, g) in enumerate(zip(causes, report["groups"], strict=True)))


@pytest.mark.parametrize("scenario", ["metadata_loss", "match_collapse"])
def test_stale_entries_never_come_above_the_real_change(scenario: str, tmp_path: Path) -> None:
    after = _run(scenario, tmp_path, STALE)
    report = after["json"]
    assert after["code"] == 1
    assert report["groups"][0]["gated"]
    assert report["groups"][0]["cause"] != "stale_expectation"
    assert "input" not in report["summary"]["categories"]
    head = after["md"].split("<sub>Runs:", 1)[0]
    assert re.search(r"^1\. \u274c", head, re.M)
    assert "expected change at" not in head.split("\u26a0")[0]
    assert after["terminal"].index(" x 1. ") < after["terminal"].index(" ! expected change at")
