"""Reading one run folder of a history (ad_diff/history/load.py)."""

from __future__ import annotations

from ad_diff.history.load import _attribute
from ad_diff.kinds.log import parse as log_parser
from tests.conftest import FIXTURES

L2 = FIXTURES / "scenarios/formats_v3_l2/candidate"


def test_result_lines_without_a_transform_are_named_from_the_dumps() -> None:
    log = log_parser.parse(L2 / "ad.log")
    assert log.anonymous  # the L2 logger drops the [stage=..., transform=...] context
    named = _attribute(log, L2 / "graphs")
    # build_model (factory stage) writes no dump, so the first result stays positional; the rest are named
    assert [r.transform for r in named.transforms[:3]] == ["#1", "export_to_gm", "cleanup_noop_slice"]
    assert not any(r.transform.startswith("#") for r in named.transforms[1:])
