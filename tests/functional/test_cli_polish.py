"""CLI polish a new user runs into (issue 16): mistyped commands, `record` argument order, help metavars,
`--version`, and snapshots that name their run by a relative path."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from ad_diff.cli.app import COMMANDS as COMMAND_TABLE
from tests.conftest import FIXTURES, ROOT, make_run, run_cli, v3

LOG = v3("export", "export_to_gm", "matches=1") + v3("pattern_matcher", "match_rope_pattern", "matches=4")
COMMANDS = ", ".join(sorted(COMMAND_TABLE))  # the table every call dispatches on


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("comapre", "compare"), ("snaphot", "snapshot"), ("recrod", "record"), ("canidates", "candidates"),
     ("Compare", "compare")],
)
def test_mistyped_command_suggests_the_command(tmp_path: Path, typed: str, meant: str) -> None:
    res = run_cli(typed, "a", "b", cwd=tmp_path)
    assert res.code == 2
    assert res.out == ""
    assert f"did you mean '{meant}'?" in res.err
    assert f"(commands: {COMMANDS})" in res.err
    assert "Traceback" not in res.err
    assert "unexpected extra argument" not in res.err


def test_shorthand_compares_existing_folders_even_when_named_like_a_typo(tmp_path: Path) -> None:
    make_run(tmp_path / "comapre", LOG)
    make_run(tmp_path / "cand", LOG)
    res = run_cli("comapre", "cand", "-f", "json", cwd=tmp_path)
    assert res.code == 0, res.err
    assert '"verdict": "pass"' in res.out


def test_unknown_path_not_like_a_command_still_reads_as_a_run(tmp_path: Path) -> None:
    make_run(tmp_path / "cand", LOG)
    res = run_cli("runs/nope", "cand", cwd=tmp_path)
    assert res.code == 2
    assert "baseline run folder does not exist" in res.err
    assert "did you mean" not in res.err


def test_command_name_wins_over_a_folder_of_that_name_and_says_so(tmp_path: Path) -> None:
    make_run(tmp_path / "note", LOG)
    make_run(tmp_path / "cand", LOG)
    res = run_cli("note", "cand", cwd=tmp_path)  # the note command, which needs more than this
    assert res.code == 2
    assert "'note' was read as the command" in res.err
    assert "./note" in res.err
    assert "was read as the command" not in run_cli("note", "cand").err  # no folder `note` here: no note
    for args in (("./note", "cand"), ("compare", "note", "cand")):
        ok = run_cli(*args, "-f", "json", cwd=tmp_path)
        assert ok.code == 0, (args, ok.err)
        assert '"verdict": "pass"' in ok.out


def test_version_is_a_root_option_and_matches_the_package() -> None:
    version = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    res = run_cli("--version")
    assert res.code == 0
    assert res.out == f"ad-diff {version}\n"
    assert "--version" in run_cli("--help").out
    doc = (ROOT / "docs/cli.md").read_text()
    assert "ad-diff --version" in doc
    compare_table = doc.split("## `ad-diff compare`")[1].split("\n## ")[0]
    assert "`--version`" not in compare_table, "docs/cli.md lists --version as a compare option"


def _record(run: Path, *args: str) -> tuple[int, str, str]:
    res = run_cli("record", *args, cwd=run.parent)
    return res.code, res.err, (run / "ad.log").read_text() if (run / "ad.log").exists() else ""


PRINT_ARGV = "import sys; print('argv', sys.argv[1:])"


def test_record_force_after_run_as_the_docs_show(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _record(run, "run", "--", sys.executable, "-c", "print(1)")[0] == 0
    code, err, log = _record(run, "run", "--force", "--", sys.executable, "-c", PRINT_ARGV, "--", "--force",
                             "x")
    assert code == 0, err
    # Everything after the first `--` is the command's, its own `--` and options included.
    assert "argv ['--', '--force', 'x']" in log


def test_record_without_separator_keeps_the_commands_options(tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, err, log = _record(run, "--force", "run", sys.executable, "-c", PRINT_ARGV, "--model", "m")
    assert code == 0, err
    assert "argv ['--model', 'm']" in log


def test_record_option_after_run_without_separator_is_a_clear_error(tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, err, _ = _record(run, "run", "--force", sys.executable, "-c", "print(1)")
    assert code == 2
    assert "put record's options before `--`" in err
    assert "Traceback" not in err
    assert not run.exists()


def _options_with_metavar(help_text: str) -> dict[str, str]:
    """``--option -> metavar`` from a command's help (options that take a value only)."""
    out = {}
    for m in re.finditer(r"^\s+(?:-\w, )?(--[a-z][a-z-]*) (\S+)", help_text, re.M):
        if not m.group(2).startswith("/"):
            out[m.group(1)] = m.group(2)
    return out


#: Options declared in cli/options.py (shared by compare and batch) whose metavars are not set there yet.
SHARED_WITHOUT_METAVAR = {
    "--rank", "--fail-on", "--collapse-fraction", "--markdown", "--json", "--ignore-transform",
    "--ignore-code", "--config", "--expected", "--junit", "--step-summary", "--comment-limit",
}


@pytest.mark.parametrize("command", ["compare", "snapshot", "batch", "record"])
def test_help_shows_readable_metavars(command: str) -> None:
    opts = _options_with_metavar(run_cli(command, "--help").out)
    raw = {o: m for o, m in opts.items() if m in ("<str>", "<path>", "<int>", "<float>", "<list[str]>")}
    assert set(raw) <= SHARED_WITHOUT_METAVAR, f"{command}: options with a raw type as metavar: {raw}"


def test_choices_are_listed_and_checked() -> None:
    help_text = run_cli("compare", "--help").out
    assert "--tensor-device <cpu|cuda|auto>" in help_text
    assert "--plots DIR" in help_text
    assert "--tol [GLOB:]KEY=VALUE,..." in help_text
    assert "--baseline-log FILE" in help_text
    res = run_cli("compare", "a", "b", "--tensor-device", "gpu")
    assert res.code == 2
    assert "'gpu' is not one of 'cpu', 'cuda', 'auto'" in res.err


def test_snapshot_names_its_run_relative_to_the_snapshot_file(tmp_path: Path) -> None:
    run = make_run(tmp_path / "runs" / "base", LOG)
    golden = tmp_path / "ci" / "golden" / "model.yaml"
    res = run_cli("snapshot", run.resolve(), "-o", golden)  # absolute run path, from another folder
    assert res.code == 0, res.err
    text = golden.read_text()
    assert yaml.safe_load(text)["source"] == "../../runs/base"
    assert str(tmp_path) not in text
    on_stdout = run_cli("snapshot", run.resolve(), cwd=tmp_path)
    assert yaml.safe_load(on_stdout.out)["source"] == "runs/base"
    # The committed file still checks a candidate from anywhere.
    check = run_cli(golden, run, "-f", "json")
    assert check.code == 0
    assert "snapshot of ../../runs/base" in check.out


def test_snapshot_baseline_says_why_a_loss_is_not_traced(tmp_path: Path) -> None:
    """Against a golden snapshot the candidate's dumps are read (metadata coverage), so an untraced loss
    says the baseline is a snapshot, never that the comparison was log-only."""
    pair = FIXTURES / "scenarios/metadata_loss"
    golden = tmp_path / "golden.yaml"
    assert run_cli("snapshot", pair / "baseline", "-o", golden).code == 0
    res = run_cli(golden, pair / "candidate", "--no-color", "-f", "markdown")
    assert res.code == 1, res.err
    assert "metadata lost at" in res.out
    assert "log-only comparison" not in res.out
    assert "the baseline is a snapshot (counts and metadata coverage only)" in res.out
