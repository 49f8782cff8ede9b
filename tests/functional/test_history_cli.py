"""`ad-diff history` end to end: exit codes, report files, the long table, plots, clear input errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, make_run, run_cli, v3
from tests.unit.history.scenario import Event, make_history, scenario


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scenario(tmp_path_factory.mktemp("cli") / "nightly")


def test_history_gates_on_the_collapse(nightly: Path, tmp_path: Path) -> None:
    res = run_cli(
        "history",
        nightly,
        "--markdown",
        tmp_path / "h.md",
        "--json",
        tmp_path / "h.json",
        "--table",
        tmp_path / "cells.csv",
        "--no-color",
    )
    assert res.code == 1, res.err
    assert res.out.startswith("ad-diff history: FAIL: 2 gating step(s) (1 collapse, 1 partial loss)")
    data = json.loads((tmp_path / "h.json").read_text())
    assert [(s["model"], s["transform"], s["change"], s["first_after"]) for s in data["steps"]] == [
        ("llama", "fuse_moe", "8 -> 0", "run-040"),
        ("mixtral", "match_rmsnorm_pattern", "10 -> 8", "run-080"),
        ("mixtral", "fuse_gemms", "0 -> 6", "run-100"),
    ]
    assert (tmp_path / "h.md").read_text().startswith("## ad-diff history: FAIL")
    assert (
        (tmp_path / "cells.csv")
        .read_text()
        .splitlines()[0]
        .startswith("run,run_index,model,stage,transform,occurrence,state,count")
    )
    assert "long table written to" in data["notes"][-1]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--fail-on", "collapse", "--since", "run-045"], 0),
        (["--since", "run-045"], 1),
        (["--fail-on", "never"], 0),
    ],
)
def test_gate_options(nightly: Path, args: list[str], code: int) -> None:
    res = run_cli("history", nightly, "-f", "json", *args)
    assert res.code == code, res.err
    assert json.loads(res.out)["exit_code"] == code


def test_fail_on_from_the_config_file(nightly: Path, tmp_path: Path) -> None:
    (tmp_path / ".ad-diff.yaml").write_text("fail_on: never\n")
    assert run_cli("history", nightly, "-f", "json", cwd=tmp_path).code == 0
    assert run_cli("history", nightly, "-f", "json", "--fail-on", "error", cwd=tmp_path).code == 1


def test_markdown_on_stdout_and_plots(nightly: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    res = run_cli(
        "history",
        nightly,
        "-f",
        "markdown",
        "--plots",
        tmp_path / "plots",
        "--markdown",
        tmp_path / "report" / "h.md",
    )
    assert res.code == 1, res.err
    assert len(list((tmp_path / "plots").glob("*.png"))) == 3
    md = (tmp_path / "report" / "h.md").read_text()
    assert "`fuse_moe` [plot](../plots/llama-fuse_moe-" in md
    assert "3 plot(s) written to" in res.out


def test_cache_rerun(nightly: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    first = json.loads(run_cli("history", nightly, "-f", "json", "--cache", cache).out)
    again = json.loads(run_cli("history", nightly, "-f", "json", "--cache", cache).out)
    assert (first["stats"]["read"], again["stats"]["read"], again["stats"]["cached"]) == (300, 0, 300)
    assert again["steps"] == first["steps"]


def test_broken_run_is_a_row_not_a_crash(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    make_history(
        root,
        runs=6,
        models=["m"],
        n_transforms=8,
        kind="folder",
        layout="flat",
        events=[Event("m", "fuse_moe", 0, 8)],
    )
    (root / "run-003" / "ad.log").write_bytes(b"\x00" * 64)
    res = run_cli("history", root, "--no-color")
    assert res.code == 2
    assert "Traceback" not in res.err + res.out
    assert "ERROR: 1 unreadable run(s)" in res.out
    assert "looks binary" in res.out
    assert run_cli("history", root, "--since", "run-004").code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{root}/missing"], "history folder does not exist"),
        (["{root}", "--since", "run-999"], "--since 'run-999' is not a run of this history"),
        (["{root}", "--table", "{root}/../t.xlsx"], "must end in .csv, .csv.gz or .parquet"),
        (["{root}", "--order", "sideways"], "--order must be one of"),
        (["{root}", "--min-run", "0"], "--min-run must be at least 1"),
        (["{root}", "--fail-on", "sometimes"], "--fail-on must be one of"),
    ],
)
def test_input_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    make_history(tmp_path / "h", runs=3, models=["m"], n_transforms=4, layout="flat")
    res = run_cli("history", *[a.format(root=tmp_path / "h") for a in args])
    assert res.code == 2, res.err
    assert message in res.err
    assert "Traceback" not in res.err


def test_compare_never_imports_pandas(tmp_path: Path) -> None:
    base = make_run(tmp_path / "base", v3("pattern_matcher", "match_rope_pattern", "matches=4"))
    cand = make_run(tmp_path / "cand", v3("pattern_matcher", "match_rope_pattern", "matches=4"))
    code = (
        "import sys\nfrom ad_diff.cli import main\n"
        "try:\n    main([sys.argv[1], sys.argv[2], '-f', 'json'])\n"
        "except SystemExit as e:\n    code = e.code\n"
        "print(code, 'pandas' in sys.modules, 'numpy' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(base), str(cand)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        timeout=120,
    )
    assert proc.stdout.split()[-3:] == ["0", "False", "False"], proc.stderr


def test_history_names_the_config_file_in_use(nightly: Path, tmp_path: Path) -> None:
    """A working-folder config may relax the history gate too, but stderr and both reports say which file."""
    (tmp_path / ".ad-diff.yaml").write_text("fail_on: never\n")
    res = run_cli("history", nightly, "--markdown", tmp_path / "h.md", "--json", tmp_path / "h.json",
                  "--no-color", cwd=tmp_path)
    assert res.code == 0, res.err
    note = f"settings from {tmp_path / '.ad-diff.yaml'} (found in the current folder): fail_on=never"
    assert f"ad-diff: {note}" in res.err
    assert note in json.loads((tmp_path / "h.json").read_text())["notes"]
    assert "(found in the current folder): fail_on=never" in (tmp_path / "h.md").read_text()


@pytest.mark.parametrize("columns", [60, 80, 132])
def test_terminal_report_follows_columns(nightly: Path, columns: int) -> None:
    """The tables fit the width COLUMNS gives (a piped or CI log has no terminal to ask)."""
    res = run_cli("history", nightly, "--no-color", env={"COLUMNS": str(columns)})
    assert res.code == 1, res.err
    widths = [len(line) for line in res.out.splitlines()]
    assert max(widths) <= columns
    assert max(widths) > columns - 20  # the tables use the width they are given
