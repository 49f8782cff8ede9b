"""report/common.py: every category can be counted in the headline."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.core.model import Category
from ad_diff.report.common import NOUNS, Count


@pytest.mark.parametrize("category", list(Category))
def test_every_category_reads_in_the_counts_line(category: Category) -> None:
    # a category without a noun crashed every report that counted one (found by fuzzing: shape_change)
    assert category in NOUNS
    assert Count(category, 2).text().startswith("2 ")


# ------------------------------------------------------------- ad-conf-check's status words (issue 31)

@pytest.mark.parametrize(("state", "matches", "word"), [
    ("applied", 16, "APPLIED 16"), ("applied", 0, "APPLIED 0"), ("skipped", None, "SKIPPED"),
    ("disabled", None, "DISABLED"), ("failed", None, "FAILED"), ("restored", None, "RESTORED"),
    ("incomplete", None, "INCOMPLETE"), ("absent", None, "ABSENT"),
])
def test_status_words(state: str, matches: int | None, word: str) -> None:
    from ad_diff.core.model import Side, State
    from ad_diff.report.common import status_text

    side = Side(State(state), matches)
    assert status_text(side) == word
    assert status_text(side, conflict=True) == f"CONFLICT ({word})"


def test_every_state_has_a_word_the_schema_accepts() -> None:
    import re

    from ad_diff.core.model import Side, State
    from ad_diff.report.common import status_text
    from ad_diff.report.schema import STATUS_PATTERN

    for state in State:
        for conflict in (False, True):
            assert re.match(STATUS_PATTERN, status_text(Side(state, 3), conflict)), state


def test_conflict_is_shown_in_every_format(tmp_path: Path) -> None:
    """The log_dump_conflict scenario: the candidate's log says match_rope_pattern matched, its dumps say
    nothing changed. Every format's transform table says CONFLICT for the candidate side only (one run of
    the CLI writes all three: the terminal table on stdout, markdown and JSON to their files)."""
    import json

    from tests.conftest import FIXTURES, run_cli

    pair = FIXTURES / "scenarios/log_dump_conflict"
    want = "CONFLICT (APPLIED 4)"
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    res = run_cli(pair / "baseline", pair / "candidate", "-f", "terminal", "--markdown", md, "--json", js,
                  "--no-color", env={"COLUMNS": "200"})
    assert res.code == 1, res.err
    row = next(r for r in json.loads(js.read_text())["transforms"] if r["transform"] == "match_rope_pattern")
    assert (row["baseline"]["status"], row["candidate"]["status"]) == ("APPLIED 4", want)
    for text in (res.out, md.read_text()):
        line = next(ln for ln in text.splitlines() if "match_rope_pattern" in ln and "APPLIED" in ln)
        assert want in line
        assert line.index("APPLIED 4") < line.index(want)  # the baseline side is not in conflict
