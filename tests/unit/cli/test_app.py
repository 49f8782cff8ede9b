"""``suggest_command``: which first words read as a mistyped command, and which as a path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ad_diff.cli.app import suggest_command
from tests.conftest import FIXTURES, run_cli

COMMANDS = ("batch", "candidates", "compare", "note", "record", "snapshot")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("comapre", "compare"), ("compar", "compare"), ("SNAPHOT", "snapshot"), ("recrod", "record"),
        ("bacth", "batch"), ("notes", "note"), ("candidate", "candidates"),
        # run folders and files: never a command, whatever their spelling
        ("base", None), ("cand", None), ("baseline", None), ("runs/comapre", None), ("compare.yaml", None),
        ("./snapshot", None), ("", None),
    ],
)
def test_suggest_command(word: str, expected: str | None) -> None:
    assert suggest_command(word, COMMANDS) == expected


def test_command_table_is_what_the_modules_register() -> None:
    """``app.COMMANDS`` (which module a call imports) equals the commands each module registers, in the order
    ``--help`` lists them; a command added to a module but not to the table would be unreachable."""
    import json
    import subprocess
    import sys

    from ad_diff.cli.app import COMMANDS as TABLE
    from tests.conftest import ROOT

    probe = (
        "import importlib, json, sys\n"
        "from ad_diff.cli.app import app, COMMANDS\n"
        "out = []\n"
        "for module in dict.fromkeys(COMMANDS.values()):\n"
        "    before = len(app.registered_commands)\n"
        "    importlib.import_module('ad_diff.cli.' + module)\n"
        "    out += [[c.name or c.callback.__name__, module] for c in app.registered_commands[before:]]\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    registered = json.loads(proc.stdout)
    assert registered == [[name, module] for name, module in TABLE.items()]


# ------------------------------------------------------------------------------ help words, usage errors

@pytest.mark.parametrize(("args", "usage"), [
    (["-h"], "Usage: ad-diff [OPTIONS] COMMAND"),
    (["help"], "Usage: ad-diff [OPTIONS] COMMAND"),
    (["help", "history"], "Usage: ad-diff history [OPTIONS]"),
    (["compare", "-h"], "Usage: ad-diff compare [OPTIONS]"),
    (["snapshot", "-h"], "Usage: ad-diff snapshot [OPTIONS]"),
])
def test_help_words(args: list[str], usage: str, tmp_path: Path) -> None:
    res = run_cli(*args, cwd=tmp_path)
    assert res.code == 0, res.err
    assert res.out.startswith(usage)


@pytest.mark.parametrize("command", ["compare", "batch", "history"])
def test_fail_on_lists_its_values_in_help(command: str) -> None:
    res = run_cli(command, "--help", env={"COLUMNS": "200"})
    assert "--fail-on [error|match_loss|collapse|never]" in res.out


@pytest.mark.parametrize("fmt", [["-f", "json"], ["--format", "json"], ["--format=json"]])
def test_usage_error_under_json_is_a_json_object_on_stdout(fmt: list[str]) -> None:
    pair = FIXTURES / "scenarios/identical"
    res = run_cli(pair / "baseline", pair / "candidate", *fmt, "--fial-on", "never")
    assert res.code == 2
    body = json.loads(res.out)
    assert body["verdict"] == "error"
    assert body["exit_code"] == 2
    assert "--fial-on" in body["error"]["message"]
    assert "--fail-on" in body["error"]["message"]
    assert "No such option" in res.err  # the usage error still reaches stderr


def test_usage_error_without_json_prints_nothing_on_stdout() -> None:
    pair = FIXTURES / "scenarios/identical"
    res = run_cli(pair / "baseline", pair / "candidate", "--fial-on", "never")
    assert (res.code, res.out) == (2, "")
