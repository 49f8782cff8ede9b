"""A move the log and the dumps both show is reported once (``REORDERED.yields_to``, read by
ad_diff/explain/roles.py); the log kind's own explain step adds nothing."""

from __future__ import annotations

from typing import Any, cast

from ad_diff.explain import roles
from ad_diff.kinds.graph.rules import TRANSFORM_MOVED
from ad_diff.kinds.log import LOG
from ad_diff.kinds.log.rules import REORDERED, STATE

_SECTION = cast(Any, object())  # explain does not read the section; it hands it back unchanged


def _reordered(transform: str) -> Any:
    return REORDERED.make(transform=transform, stage="pattern_matcher", bafter="a", cafter="b")


def test_a_move_the_dumps_report_is_reported_once_as_adg013() -> None:
    graph = TRANSFORM_MOVED.make(transform="match_rmsnorm_pattern", stage="pattern_matcher", before="x",
                                 after="y")
    other = STATE.make(transform="fuse_gemms", stage="post_load_fusion", bstate="disabled", cstate="applied")
    findings = [_reordered("match_rmsnorm_pattern"), _reordered("match_swiglu_pattern"), graph, other]
    kept = roles.yielded(findings)
    # the log's own report of the same move goes; a move only the log shows (no dump of it) stays
    assert [(f.code, f.transform) for f in kept] == [
        ("ADL015", "match_swiglu_pattern"), ("ADG013", "match_rmsnorm_pattern"), ("ADL005", "fuse_gemms")]


def test_without_dumps_the_log_reports_the_move() -> None:
    findings = [_reordered("match_rmsnorm_pattern")]
    assert roles.yielded(findings) == findings
    section, kept = LOG.explain(_SECTION, findings, cast(Any, None))
    assert (section, kept) == (_SECTION, findings)
