"""CLI end to end on small synthetic runs: exit codes, output files, and clear errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import make_run, run_cli, v3

HEAD = v3("export", "export_to_gm", "matches=1")
TAIL = v3("compile", "compile_model", "matches=1")


def _pair(tmp_path: Path, before: str, after: str) -> tuple[Path, Path]:
    b = make_run(tmp_path / "base", HEAD + v3("pattern_matcher", "match_rope_pattern", before) + TAIL)
    c = make_run(tmp_path / "cand", HEAD + v3("pattern_matcher", "match_rope_pattern", after) + TAIL)
    return b, c


def test_pass_exit_0_and_json_contract(tmp_path: Path) -> None:
    b, c = _pair(tmp_path, "matches=4", "matches=4")
    res = run_cli(b, c, "-f", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["schema_version"] == 2
    assert data["verdict"] == "pass"
    assert data["exit_code"] == 0
    assert data["findings"] == []
    assert data["groups"] == []
    row = data["transforms"][1]
    assert {k: row[k] for k in ("stage", "transform")} == {
        "stage": "pattern_matcher",
        "transform": "match_rope_pattern",
    }
    assert row["baseline"]["state"] == "applied"
    assert row["baseline"]["matches"] == 4


def test_collapse_exit_1_with_markdown_and_json_files(tmp_path: Path) -> None:
    b, c = _pair(tmp_path, "matches=4", "matches=0")
    md, js = tmp_path / "out/report.md", tmp_path / "out/report.json"
    res = run_cli(b, c, "--markdown", md, "--json", js)
    assert res.code == 1
    assert "FAIL" in res.out
    assert "ADL001" in res.out
    text = md.read_text()
    assert text.startswith(
        "## \u274c ad-diff: FAIL: 1 root cause (`match_rope_pattern` stopped matching (4 \u2192 0))"
    )
    assert "| 2 | <code>match_rope_pattern</code> | APPLIED 4 \u2192 APPLIED 0 | \u22124 |" in text
    f = json.loads(js.read_text())["findings"][0]
    assert set(f) >= {"code", "category", "severity", "transform", "node", "tensor", "message"}
    assert (f["code"], f["category"], f["severity"], f["node"], f["tensor"]) == (
        "ADL001",
        "match_loss",
        "error",
        None,
        None,
    )


@pytest.mark.parametrize(
    ("fail_on", "code"), [("error", 1), ("match_loss", 1), ("collapse", 0), ("never", 0)]
)
def test_fail_on_levels_on_partial_loss(tmp_path: Path, fail_on: str, code: int) -> None:
    b, c = _pair(tmp_path, "matches=10", "matches=8")
    assert run_cli(b, c, "--fail-on", fail_on).code == code


def test_ignore_code_and_transform(tmp_path: Path) -> None:
    b, c = _pair(tmp_path, "matches=10", "matches=8")
    assert run_cli(b, c, "--ignore-code", "ADL00*").code == 0
    assert run_cli(b, c, "--ignore-transform", "match_rope_*").code == 0


def test_shorthand_and_explicit_compare_agree(tmp_path: Path) -> None:
    b, c = _pair(tmp_path, "matches=4", "matches=3")
    assert run_cli(b, c, "-f", "json").out == run_cli("compare", b, c, "-f", "json").out


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "candidate run folder does not exist"),
        ("empty_log", "is empty; expected an AutoDeploy log"),
        ("binary_log", "looks binary"),
        ("no_log", "no *.log file at the top of the run folder"),
        ("graphs_file", "is a file; expected the graph dumps folder"),
        ("noise_only", "holds no AutoDeploy transform lines"),
    ],
)
def test_bad_input_exit_2_without_traceback(tmp_path: Path, setup: str, message: str) -> None:
    b = make_run(tmp_path / "base", HEAD + TAIL)
    c = tmp_path / "cand"
    if setup == "empty_log":
        make_run(c, "")
    elif setup == "binary_log":
        c.mkdir()
        (c / "ad.log").write_bytes(b"\x00\x01\x02\xff" * 100)
    elif setup == "no_log":
        c.mkdir()
    elif setup == "graphs_file":
        make_run(c, HEAD + TAIL)
        (c / "graphs").write_text("not a folder")
    elif setup == "noise_only":
        make_run(c, "Loading...\nDone\n")
    res = run_cli(b, c)
    assert res.code == 2
    assert message in res.err
    assert "Traceback" not in res.err
    assert res.out == ""


def test_crashed_candidate_never_passes(tmp_path: Path) -> None:
    b = make_run(tmp_path / "base", HEAD + v3("pattern_matcher", "match_rope_pattern", "matches=4") + TAIL)
    c = make_run(
        tmp_path / "cand", HEAD + "Traceback (most recent call last):\n  File x\nRuntimeError: boom\n"
    )
    for level in ("error", "match_loss", "collapse"):
        res = run_cli(b, c, "--fail-on", level, "-f", "json")
        assert res.code == 1
        assert [f["code"] for f in json.loads(res.out)["findings"]] == ["ADL009"]


def test_one_sided_graphs_gates(tmp_path: Path) -> None:
    b, c = _pair(tmp_path, "matches=4", "matches=4")
    (b / "graphs").mkdir()
    res = run_cli(b, c, "-f", "json")
    assert res.code == 1
    assert json.loads(res.out)["findings"][0]["code"] == "ADI001"


def test_markdown_escapes_hostile_names(tmp_path: Path) -> None:
    b = make_run(tmp_path / "base", HEAD + v3("pattern_matcher", "match_x", "matches=4") + TAIL)
    evil = (
        "[AUTO-DEPLOY] [INFO] [RANK 0] [stage=pattern_matcher, transform=match_x] "
        "[SUMMARY] matches=1<script>\n"
    )
    c = make_run(tmp_path / "cand", HEAD + evil + TAIL)
    res = run_cli(b, c, "-f", "markdown")
    assert "<script>" not in res.out
