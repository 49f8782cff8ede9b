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
