"""Per-transform classification: collapse vs partial loss, stopped transforms, incomplete runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.kinds.log import parse as log_parser
from ad_diff.kinds.log.align import pair_transforms
from ad_diff.kinds.log.classify import classify_log
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
    assert f == []
    assert len(rows) == 3
    assert not any(r.changed for r in rows)


@pytest.mark.parametrize(
    ("before", "after", "frac", "code", "collapse"),
    [(4, 0, 0.5, "ADL001", True), (4, 2, 0.5, "ADL001", True), (4, 3, 0.5, "ADL002", False),
     (10, 6, 0.5, "ADL002", False), (10, 6, 0.3, "ADL001", True)],
)
def test_collapse_vs_partial(
    tmp_path: Path, before: int, after: int, frac: float, code: str, collapse: bool
) -> None:
    _, f = _findings(tmp_path, v3("pattern_matcher", "match_rope_pattern", f"matches={before}"),
                     v3("pattern_matcher", "match_rope_pattern", f"matches={after}"), frac=frac)
    assert codes(f) == [code]
    assert f[0].collapse is collapse
    assert f[0].category == "match_loss"
    assert f[0].transform == "match_rope_pattern"
    assert dict(f[0].evidence)["before"] == before
    assert dict(f[0].evidence)["after"] == after


@pytest.mark.parametrize("state", ["disabled", "skipped"])
def test_matching_transform_that_stops_running_is_match_loss(tmp_path: Path, state: str) -> None:
    _, f = _findings(tmp_path, v3("post_load_fusion", "fuse_gemms", "matches=8"),
                     v3("post_load_fusion", "fuse_gemms", state))
    assert codes(f) == ["ADL003"]
    assert f[0].collapse
    assert state in f[0].message


def test_zero_match_transform_disabled_is_only_a_state_change(tmp_path: Path) -> None:
    _, f = _findings(tmp_path, v3("post_load_fusion", "fuse_gemms", "matches=0"),
                     v3("post_load_fusion", "fuse_gemms", "disabled"))
    assert codes(f) == ["ADL005"]
    assert f[0].severity.value == "warning"


def test_gain_is_info(tmp_path: Path) -> None:
    _, f = _findings(tmp_path, v3("pattern_matcher", "match_rope_pattern", "matches=2"),
                     v3("pattern_matcher", "match_rope_pattern", "matches=4"))
    assert codes(f) == ["ADL008"]
    assert f[0].severity.value == "info"


@pytest.mark.parametrize("state", ["disabled", "skipped"])
def test_transform_switched_on_and_matching_is_a_gain(tmp_path: Path, state: str) -> None:
    _, f = _findings(tmp_path, v3("pattern_matcher", "match_swiglu_pattern", state),
                     v3("pattern_matcher", "match_swiglu_pattern", "matches=2"))
    assert codes(f) == ["ADL008"]
    assert f[0].severity.value == "info"
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
    body = (v3("pattern_matcher", "match_rope_pattern", "matches=4")
            + v3("pattern_matcher", "match_rmsnorm_pattern", "matches=5"))
    _, f = _findings(tmp_path, body, "", cand_tail="")
    assert codes(f) == ["ADL009"]
    assert "3 transform(s)" in f[0].message
    assert f[0].severity.value == "error"


def test_moved_stage_is_paired_not_added_and_removed(tmp_path: Path) -> None:
    rows, f = _findings(tmp_path, v3("post_load_fusion", "fuse_rope_into_trtllm_mla", "matches=2"),
                        v3("cache_init", "fuse_rope_into_trtllm_mla", "matches=2"))
    assert codes(f) == ["ADL013"]
    assert len(rows) == 3


# -- every rank compared (issue 18) and how runs end (issue 13) ---------------------------------------------

def _ranked(body: dict[int, list[tuple[str, str, str]]], tail: bool = True) -> str:
    """An interleaved multi-rank log: ``{rank: [(stage, transform, result)]}`` (+ compile_model per rank)."""
    lines = []
    longest = max(len(v) for v in body.values())
    for i in range(longest):
        for r, items in sorted(body.items()):
            if i < len(items):
                lines.append(v3(*items[i], rank=r))
    if tail:
        lines += [v3("compile", "compile_model", "matches=1", rank=r) for r in sorted(body)]
    return "".join(lines)


def _classify(tmp_path: Path, base: str, cand: str, rank: int | None = None):
    from ad_diff.kinds.log.classify import classify
    from ad_diff.kinds.log.compare import compare_logs

    (tmp_path / "b.log").write_text(base)
    (tmp_path / "c.log").write_text(cand)
    b = log_parser.parse(tmp_path / "b.log", rank=rank)
    c = log_parser.parse(tmp_path / "c.log", rank=rank)
    return classify(compare_logs(b, c, narrowed=rank is not None))


RMS = ("pattern_matcher", "match_rmsnorm_pattern")
FUSE = ("post_load_fusion", "fuse_rmsnorm")
BOTH5 = [(*RMS, "matches=5"), (*FUSE, "matches=5")]


def test_loss_on_rank_1_only_gates_and_names_its_ranks(tmp_path: Path) -> None:
    base = _ranked({0: BOTH5, 1: BOTH5})
    cand = _ranked({0: BOTH5, 1: [(*RMS, "matches=0"), (*FUSE, "matches=0")]})
    f = _classify(tmp_path, base, cand)
    assert codes(f) == ["ADL001", "ADL001"]
    msgs = sorted(x.message for x in f)
    assert msgs == ["fuse_rmsnorm: matches collapsed 5 -> 0 on rank 1 of 2 (rank 0: 5 -> 5)",
                    "match_rmsnorm_pattern: matches collapsed 5 -> 0 on rank 1 of 2 (rank 0: 5 -> 5)"]
    assert all(x.collapse for x in f)
    assert dict(f[0].evidence)["ranks"] == [1]


def test_loss_on_every_rank_is_one_finding_on_all_ranks(tmp_path: Path) -> None:
    base = _ranked({0: [(*RMS, "matches=7")], 1: [(*RMS, "matches=7")]})
    cand = _ranked({0: [(*RMS, "matches=5")], 1: [(*RMS, "matches=4")]})
    f = _classify(tmp_path, base, cand)
    assert len(f) == 1
    # the same kind of loss everywhere: rank 0 leads, the other rank's numbers follow
    assert f[0].message == ("match_rmsnorm_pattern: matches dropped 7 -> 5 (29% lost) on all ranks "
                            "(rank 1: 7 -> 4)")
    base = _ranked({0: [(*RMS, "matches=7")], 1: [(*RMS, "matches=7")]})
    cand = _ranked({0: [(*RMS, "matches=5")], 1: [(*RMS, "matches=0")]})
    f = _classify(tmp_path, base, cand)
    # a collapse on rank 1 outranks rank 0's partial loss: it leads, and the finding is a collapse
    assert f[0].message == "match_rmsnorm_pattern: matches collapsed 7 -> 0 on all ranks (rank 0: 7 -> 5)"
    assert f[0].collapse


def test_disagreement_already_in_the_baseline_is_a_warning_only(tmp_path: Path) -> None:
    both = _ranked({0: [(*RMS, "matches=5")], 1: [(*RMS, "matches=4")]})
    f = _classify(tmp_path, both, both)
    assert codes(f) == ["ADL010"]
    assert f[0].severity.value == "warning"
    assert f[0].message == ("baseline and candidate logs: ranks disagree on "
                            "pattern_matcher/match_rmsnorm_pattern (rank 0: 5, rank 1: 4); unchanged by the "
                            "candidate")


def test_narrowed_to_one_rank_a_new_disagreement_is_a_warning(tmp_path: Path) -> None:
    base = _ranked({0: [(*RMS, "matches=5")], 1: [(*RMS, "matches=5")]})
    cand = _ranked({0: [(*RMS, "matches=5")], 1: [(*RMS, "matches=4")]})
    assert codes(_classify(tmp_path, base, cand)) == ["ADL002"]
    f = _classify(tmp_path, base, cand, rank=0)
    assert codes(f) == ["ADL010"]
    assert "not compared with the baseline" in f[0].message


def test_world_size_change_names_both_sizes_and_compares_shared_ranks(tmp_path: Path) -> None:
    base = _ranked({0: [(*RMS, "matches=5")], 1: [(*RMS, "matches=5")]})
    cand = _ranked({r: [(*RMS, "matches=5" if r != 1 else "matches=3")] for r in range(4)})
    f = _classify(tmp_path, base, cand)
    assert codes(f) == ["ADL002", "ADL014"]
    ws = next(x for x in f if x.code == "ADL014")
    assert ws.message == ("world size changed: baseline logged 2 rank(s) (0, 1), candidate 4 (0, 1, 2, 3); "
                          "ranks 0, 1 compared; candidate-only rank(s) 2, 3 not compared")
    assert "on rank 1 of 2 (rank 0: 5 -> 5)" in next(x for x in f if x.code == "ADL002").message


def test_rank_that_dies_while_rank_0_completes_is_incomplete_and_named(tmp_path: Path) -> None:
    base = _ranked({0: BOTH5, 1: BOTH5})
    cand = (v3(*RMS, "matches=5", rank=0) + v3(*RMS, "matches=5", rank=1)
            + "Traceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of memory\n"
            + v3(*FUSE, "matches=5", rank=0) + v3("compile", "compile_model", "matches=1", rank=0))
    f = _classify(tmp_path, base, cand)
    assert codes(f) == ["ADL009"]
    assert f[0].message.startswith(
        "candidate run is incomplete: rank 1 of 2: crashed (line 4: torch.OutOfMemoryError")
    assert f[0].transform == "match_rmsnorm_pattern"


def test_rank_killed_without_traceback_is_incomplete_against_its_own_rank_0(tmp_path: Path) -> None:
    # the baseline has no rank 1 to compare with: the candidate's rank 1 still stops short of rank 0
    base = _ranked({0: [(*RMS, "matches=5"), (*FUSE, "matches=5")]})
    cand = _ranked({0: [(*RMS, "matches=5"), (*FUSE, "matches=5")], 1: [(*RMS, "matches=5")]}, tail=False)
    cand += v3("compile", "compile_model", "matches=1", rank=0)
    f = _classify(tmp_path, base, cand)
    assert "ADL009" in codes(f)
    inc = next(x for x in f if x.code == "ADL009")
    assert "rank 1 of 2" in inc.message
    assert "transform(s) rank 0 ran were never reached" in inc.message


def test_one_transform_short_with_zero_matches_is_incomplete(tmp_path: Path) -> None:
    body = v3("pattern_matcher", "match_rope_pattern", "matches=4")
    last = v3("compile", "compile_model", "matches=0")
    _, f = _findings(tmp_path, body, body, base_tail=last, cand_tail="")
    assert codes(f) == ["ADL009"]
    assert ("1 transform(s) the other run ran were never reached (first: compile/compile_model)"
            in f[0].message)
    assert "no error was logged" in f[0].message


def test_finished_candidate_without_a_later_transform_has_it_removed(tmp_path: Path) -> None:
    # the candidate logged compile_model: a transform the baseline ran after it was left out, not missed
    extra = v3("compile", "export_extra", "matches=0")
    _, f = _findings(tmp_path, "", "", base_tail=TAIL + extra)
    assert codes(f) == ["ADL007"]


def test_traceback_after_compile_model_in_both_runs_is_no_crash(tmp_path: Path) -> None:
    tail = (TAIL + "Exception ignored in: <function X.__del__>\nTraceback (most recent call last):\n"
            "AttributeError: x\n")
    _, f = _findings(tmp_path, "", "", base_tail=tail, cand_tail=tail)
    assert f == []


def test_same_stop_in_both_runs_says_the_change_did_not_cause_it(tmp_path: Path) -> None:
    body = v3("pattern_matcher", "match_rope_pattern", "matches=4")
    tb = "Traceback (most recent call last):\nRuntimeError: boom\n"
    _, f = _findings(tmp_path, body, body, base_tail=tb, cand_tail=tb)
    assert codes(f) == ["ADL009", "ADL009"]
    cand = next(x for x in f if x.message.startswith("candidate"))
    assert "the baseline stops at the same place, so the change under review did not cause it" in cand.message


def test_restored_transforms_are_not_compared(tmp_path: Path) -> None:
    early = (v3("pattern_matcher", "match_rope_pattern", "matches=4")
             + v3("sharding", "detect_sharding", "matches=2"))
    late = v3("post_load_fusion", "fuse_rmsnorm", "matches=5")
    restore = ("[AUTO-DEPLOY] [INFO] [RANK 0] Restored AutoDeploy pipeline snapshot for 'detect_sharding' "
               "from /cache/x/detect_sharding\n")
    (tmp_path / "b.log").write_text(HEAD + early + late + TAIL)
    (tmp_path / "c.log").write_text(restore + late + TAIL)
    b, c = log_parser.parse(tmp_path / "b.log"), log_parser.parse(tmp_path / "c.log")
    rows = pair_transforms(b, c)
    assert [(r.transform, r.candidate.state.value) for r in rows[:3]] == [
        ("export_to_gm", "restored"), ("match_rope_pattern", "restored"), ("detect_sharding", "restored")]
    assert classify_log(rows, b, c) == []


def test_reordered_pipeline_is_a_finding(tmp_path: Path) -> None:
    a = v3("pattern_matcher", "match_rope_pattern", "matches=4")
    b = v3("pattern_matcher", "match_rmsnorm_pattern", "matches=5")
    rows, f = _findings(tmp_path, a + b, b + a)
    assert not any(r.changed for r in rows)
    assert codes(f) == ["ADL015"]
    assert f[0].severity.value == "warning"
    assert "runs at another place in the candidate's pipeline" in f[0].message
