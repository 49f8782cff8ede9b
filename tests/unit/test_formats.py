"""The one registry of output formats (ad_diff.formats): every choice a command offers has a reporter, a
format a subject has no report in is a usage error, and the registry loads no reporter it does not use."""

from __future__ import annotations

import subprocess
import sys
from typing import get_args

import pytest

from ad_diff.errors import UsageError
from ad_diff.formats import (
    BATCH,
    COMPARISON,
    FAILURE,
    HISTORY,
    NOTE,
    PRINTED,
    Failure,
    Format,
    Options,
    Printed,
    Reporters,
    choices,
)
from ad_diff.settings import FORMAT_CHOICES


def test_every_format_choice_of_a_command_has_a_reporter() -> None:
    for printed, reporters in PRINTED.items():
        assert set(choices(printed)) <= set(reporters.formats), reporters.what
    assert set(choices(Printed)) <= set(BATCH.formats)
    assert set(choices(Printed)) <= set(HISTORY.formats)


def test_the_config_files_format_values_are_the_printed_choices() -> None:
    assert get_args(Printed) == FORMAT_CHOICES


def test_every_report_file_is_a_format_of_its_subject() -> None:
    for reporters in (COMPARISON, BATCH, HISTORY):
        assert set(reporters.files) <= set(reporters.formats), reporters.what


def test_a_format_without_a_report_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="an iteration note has no junit report"):
        NOTE.render(Format.junit, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'pdf' is not a valid Format"):
        NOTE.render("pdf", None)  # type: ignore[arg-type]


def test_a_table_calls_the_reporter_of_the_format_with_the_options() -> None:
    seen: list[tuple[object, Options]] = []
    table: Reporters[str] = Reporters("a word", {Format.text: lambda s, o: seen.append((s, o)) or s.upper()})
    assert table.render("text", "hi", Options(width=7)) == "HI"
    assert seen == [("hi", Options(width=7))]


def test_an_error_reaches_each_file_in_its_format() -> None:
    failure = Failure("bad input", 2, '{"error": 1}')
    assert FAILURE.render(Format.json, failure) == '{"error": 1}\n'
    md = FAILURE.render(Format.markdown, failure)
    assert md.startswith("## \u26d4 ad-diff: ERROR (exit 2)")
    assert FAILURE.render(Format.step_summary, failure) == md


def test_only_the_step_summary_appends_and_only_json_is_for_programs() -> None:
    assert [f for f in Format if f.appends] == [Format.step_summary]
    assert [f for f in Format if f.machine] == [Format.json]


def test_the_registry_loads_no_reporter_until_one_is_asked_for() -> None:
    code = ("import sys, ad_diff.formats; "
            "print(sorted(m for m in sys.modules if m.startswith(('ad_diff.report.', 'ad_diff.history', "
            "'ad_diff.candidates', 'ad_diff.workflows', 'ad_diff.kinds'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
