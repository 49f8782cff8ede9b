"""What history reads of the kinds (ad_diff/history/logkind.py): anonymous results named from the dumps."""

from __future__ import annotations

from pathlib import Path

from ad_diff.history.logkind import attribute, read_log
from tests.conftest import FIXTURES

L2 = FIXTURES / "scenarios/formats_v3_l2/candidate"


def test_result_lines_without_a_transform_are_named_from_the_dumps() -> None:
    log = read_log(L2 / "ad.log")
    assert log.anonymous  # the L2 logger drops the [stage=..., transform=...] context
    named = attribute(log, L2 / "graphs")
    # build_model (factory stage) writes no dump, so the first result stays positional; the rest are named
    assert [r.transform for r in named.transforms[:3]] == ["#1", "export_to_gm", "cleanup_noop_slice"]
    assert not any(r.transform.startswith("#") for r in named.transforms[1:])


def test_a_log_without_anonymous_lines_or_without_dumps_is_kept() -> None:
    log = read_log(L2 / "ad.log")
    assert attribute(log, None) is log  # no graphs/ folder: nothing to name them from
    named = attribute(log, L2 / "graphs")
    assert attribute(named, L2 / "graphs") is named  # nothing anonymous left to name


def test_unreadable_dumps_leave_the_results_positional(tmp_path: Path) -> None:
    log = read_log(L2 / "ad.log")
    assert attribute(log, tmp_path / "missing") is log  # the listing raises: positional, as in compare
