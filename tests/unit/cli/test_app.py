"""``suggest_command``: which first words read as a mistyped command, and which as a path."""

from __future__ import annotations

import pytest

from ad_diff.cli.app import suggest_command

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
