"""Per-transform classification: collapse vs partial loss, stopped transforms, incomplete runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.kinds.log import parse as log_parser
from ad_diff.kinds.log.align import pair_transforms
from ad_diff.kinds.log.rules import classify_log
from tests.conftest import v3

HEAD = v3("export", "export_to_gm", "matches=1")
TAIL = v3("compile", "compile_model", "matches=1")


def _findings(tmp_path: Path, base_body: str, cand_body: str, base_tail: str = TAIL, cand_tail: str = TAIL,
              frac: float = 0.5):
    (tmp_path / "b.log").write_text(HEAD + base_body + base_tail)
    (tmp_path / "c.log").write_text(HEAD + cand_body + cand_tail)
    b = log_parser.parse(tmp_path / "b.log")
    c = log_parser.parse(tmp_path / "c.log")
    rows = pair_transforms(b, c)
    return rows, classify_log(rows, b, c, frac)


def codes(findings) -> list[str]:
    return sorted(f.code for f in findings)


def test_identical_logs_have_no_findings(tmp_path: Path) -> None:
    body = v3("pattern_matcher", "match_rope_pattern", "matches=4")
    rows, f = _findings(tmp_path, body, body)
    assert f == [] and len(rows) == 3 and not any(r.changed for r in rows)


@pytest.mark.parametrize(
    ("before", "after", "frac", "code", "collapse"),
    [(4, 0, 0.5, "ADL001", True), (4, 2, 0.5, "ADL001", True), (4, 3, 0.5, "ADL002", False),
     (10, 6, 0.5, "ADL002", False), (10, 6, 0.3, "ADL001", True)],
)
def test_collapse_vs_partial(tmp_path: Path, before: int, after: int, frac: float, code: str, collapse: bool) -> None:
    _, f = _findings(tmp_path, v3("pattern_matcher", "match_rope_pattern", f"matches={before}"),
                     v3("pattern_matcher", "match_rope_pattern", f"matches={after}"), frac=frac)
    assert codes(f) == [code]
    assert f[0].collapse is collapse and f[0].category == "match_loss" and f[0].transform == "match_rope_pattern"
    assert dict(f[0].evidence)["before"] == before and dict(f[0].evidence)["after"] == after


@pytest.mark.parametrize("state", ["disabled", "skipped"])
def test_matching_transform_that_stops_running_is_match_loss(tmp_path: Path, state: str) -> None:
    _, f = _findings(tmp_path, v3("post_load_fusion", "fuse_gemms", "matches=8"),
                     v3("post_load_fusion", "fuse_gemms", state))
    assert codes(f) == ["ADL003"] and f[0].collapse and state in f[0].message


def test_zero_match_transform_disabled_is_only_a_state_change(tmp_path: Path) -> None:
    _, f = _findings(tmp_path, v3("post_load_fusion", "fuse_gemms", "matches=0"),
                     v3("post_load_fusion", "fuse_gemms", "disabled"))
    assert codes(f) == ["ADL005"] and f[0].severity.value == "warning"


def test_gain_is_info(tmp_path: Path) -> None:
    _, f = _findings(tmp_path, v3("pattern_matcher", "match_rope_pattern", "matches=2"),
                     v3("pattern_matcher", "match_rope_pattern", "matches=4"))
    assert codes(f) == ["ADL008"] and f[0].severity.value == "info"


@pytest.mark.parametrize("state", ["disabled", "skipped"])
def test_transform_switched_on_and_matching_is_a_gain(tmp_path: Path, state: str) -> None:
    _, f = _findings(tmp_path, v3("pattern_matcher", "match_swiglu_pattern", state),
                     v3("pattern_matcher", "match_swiglu_pattern", "matches=2"))
    assert codes(f) == ["ADL008"] and f[0].severity.value == "info"
    assert f[0].message == f"match_swiglu_pattern: matches rose 0 ({state}) -> 2"
    _, f = _findings(tmp_path, v3("pattern_matcher", "match_swiglu_pattern", state),
                     v3("pattern_matcher", "match_swiglu_pattern", "matches=0"))
    assert codes(f) == ["ADL005"]  # switched on but matching nothing: a state change to look at


def test_added_zero_match_transform_is_silent_but_added_matching_one_is_info(tmp_path: Path) -> None:
    _, f = _findings(tmp_path, "", v3("post_export", "cleanup_noop_add", "matches=0"))
    assert f == []
    _, f = _findings(tmp_path, "", v3("post_export", "cleanup_noop_add", "matches=3"))
    assert codes(f) == ["ADL006"]


def test_candidate_that_stops_early_is_incomplete_not_removed(tmp_path: Path) -> None:
    body = v3("pattern_matcher", "match_rope_pattern", "matches=4") + v3("pattern_matcher", "match_rmsnorm_pattern", "matches=5")
    _, f = _findings(tmp_path, body, "", cand_tail="")
    assert codes(f) == ["ADL009"]
    assert "3 transform(s)" in f[0].message and f[0].severity.value == "error"


def test_moved_stage_is_paired_not_added_and_removed(tmp_path: Path) -> None:
    rows, f = _findings(tmp_path, v3("post_load_fusion", "fuse_rope_into_trtllm_mla", "matches=2"),
                        v3("cache_init", "fuse_rope_into_trtllm_mla", "matches=2"))
    assert codes(f) == ["ADL013"] and len(rows) == 3
