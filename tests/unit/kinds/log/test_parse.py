"""Log parser: golden cases for every format/prefix (FORMATS.md §1) and clear errors for bad logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ad_diff.core.model import State
from ad_diff.errors import InputError
from ad_diff.kinds.log import parse as log_parser
from ad_diff.kinds.log.model import IssueKind, LogEnd
from tests.conftest import FIXTURES, v3

CASES = sorted((FIXTURES / "parsers/log").glob("*.log"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden(path: Path) -> None:
    expected = json.loads(path.with_suffix(".json").read_text())
    assert log_parser.as_dict(log_parser.parse(path)) == expected


def test_every_format_and_prefix_is_covered() -> None:
    # What the parser reads from the inputs, not what the goldens say: a format the parser stopped
    # recognising fails here even if someone regenerated the goldens.
    seen_formats: set[str] = set()
    seen_prefixes: set[str] = set()
    for p in CASES:
        log = log_parser.parse(p)
        seen_formats.update(log.formats)
        seen_prefixes.update(log.prefixes)
    assert seen_formats >= {"V0", "V1", "V2", "V3"}
    assert seen_prefixes >= {"L1", "L2", "L3"}


def _parse(name: str, rank: int = 0):
    return log_parser.parse(FIXTURES / "parsers/log" / name, rank=rank)


def test_v3_summary_states_and_timing() -> None:
    log = _parse("v3_l1.log")
    by = {r.transform: r for r in log.transforms}
    assert by["match_rmsnorm_pattern"].state is State.APPLIED
    assert by["match_rmsnorm_pattern"].matches == 33
    assert by["match_rmsnorm_pattern"].timing is not None
    assert by["match_rmsnorm_pattern"].timing.total == 0.842
    assert by["quantize_fp8_moe"].state is State.SKIPPED
    assert by["fuse_gemms"].state is State.DISABLED
    assert by["fuse_gemms"].matches is None
    assert log.end is LogEnd.COMPLETE


def test_v2_timing_line_attaches_to_its_result() -> None:
    log = _parse("v2_l1.log")
    assert log.transforms[0].timing is not None
    assert log.transforms[0].timing.apply == 0.128
    assert log.formats == ("V2",)


@pytest.mark.parametrize("name", ["v1_failed_noprefix.log", "v2_l2.log", "v3_failed.log"])
def test_failures_become_failed_state_in_every_version(name: str) -> None:
    failed = [r for r in _parse(name).transforms if r.state is State.FAILED]
    assert len(failed) == 1
    assert failed[0].failure


def test_ansi_crlf_noise_and_unrecognised_summary() -> None:
    log = _parse("noisy_ansi_crlf.log")
    assert [r.transform for r in log.transforms] == ["export_to_gm", "match_rope_pattern", "compile_model"]
    assert log.transforms[1].state is State.SKIPPED
    unrec = [i for i in log.issues if i.kind is IssueKind.UNRECOGNISED]
    assert len(unrec) == 1
    assert "matchez" in unrec[0].text


def test_multi_rank_uses_rank0_and_reports_disagreement() -> None:
    log = _parse("multi_rank.log")
    assert log.ranks_seen == (0, 1)
    assert {r.transform: r.matches for r in log.transforms}["match_rope_pattern"] == 4
    assert log.rank_disagreement == ("pattern_matcher/match_rope_pattern (rank 1)",)
    counts = {r.transform: r.matches for r in _parse("multi_rank.log", rank=1).transforms}
    assert counts["match_rope_pattern"] == 2


def test_missing_rank_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no lines of rank 3; ranks seen: 0, 1"):
        _parse("multi_rank.log", rank=3)


def test_crash_marks_incomplete_transform_and_crashed_end() -> None:
    log = _parse("crashed.log")
    assert log.end is LogEnd.CRASHED
    assert "OutOfMemoryError" in log.end_detail
    assert log.transforms[-1].state is State.INCOMPLETE
    assert log.transforms[-1].transform == "match_rope_pattern"


def test_cut_mid_line_is_truncated() -> None:
    assert _parse("cut_mid_line.log").end is LogEnd.TRUNCATED


def test_retry_keeps_last_pipeline() -> None:
    log = _parse("retry.log")
    assert log.pipelines == 2
    assert {r.transform: r.matches for r in log.transforms}["match_rope_pattern"] == 2


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("empty.log", "is empty; expected an AutoDeploy log"),
        ("binary.log", "looks binary"),
        ("no_ad_lines.log", "holds no AutoDeploy transform lines (4 lines read)"),
    ],
)
def test_invalid_logs(name: str, message: str) -> None:
    path = FIXTURES / "parsers/log/invalid" / name
    with pytest.raises(InputError) as exc:
        log_parser.parse(path)
    assert str(exc.value).startswith(str(path))
    assert message in str(exc.value)


def test_unreadable_log(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.mkdir()
    with pytest.raises(InputError, match="is a folder"):
        log_parser.parse(p)


# -- issue 18 / 13: ranks from launchers, per-rank files, restores, how a pipeline ended --------------------


def test_launcher_rank_tags_tell_ranks_apart_without_rank_tags() -> None:
    log = _parse("captured_github_mpirun.log")
    assert log.ranks_seen == (0, 1)
    assert log.capture == ("iso-timestamp", "mpirun", "github-group")
    assert {r.transform: r.matches for r in log.rank_log(1).transforms}["match_rope_pattern"] == 2
    assert log.transforms[1].line == 7  # line numbers of the file as captured


def test_rank_tag_of_the_line_wins_over_the_launcher_tag() -> None:
    log = _parse("captured_torchrun.log")
    assert log.ranks_seen == (0, 1)
    assert log.capture == ("torchrun",)


def test_restore_line_is_read() -> None:
    log = _parse("restored.log")
    assert log.restored is not None
    assert log.restored.boundary == "sharding_transform_executor"
    assert log.restored.source.endswith("/sharding_transform_executor")
    assert [r.transform for r in log.transforms] == ["load_weights", "fuse_rmsnorm", "compile_model"]


@pytest.mark.parametrize(("name", "ignored"),
                         [("shutdown_ignored.log", True), ("error_after_pipeline.log", False)])
def test_error_after_the_final_transform_is_not_a_crash(name: str, ignored: bool) -> None:
    log = _parse(name)
    assert log.end is LogEnd.COMPLETE
    assert log.primary.finished
    ae = log.primary.after_end
    assert ae is not None
    assert ae.ignored is ignored
    assert "Error" in ae.text


def test_ignored_exception_before_the_end_is_no_crash_but_a_real_one_is(tmp_path: Path) -> None:
    head = v3("export", "export_to_gm", "matches=1")
    tb = "Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nAttributeError: boom\n"
    (tmp_path / "a.log").write_text(head + "Exception ignored in: <function A.__del__>\n" + tb)
    assert log_parser.parse(tmp_path / "a.log").end is LogEnd.COMPLETE
    (tmp_path / "b.log").write_text(head + tb)
    b = log_parser.parse(tmp_path / "b.log")
    assert b.end is LogEnd.CRASHED
    assert "AttributeError: boom" in b.end_detail


def test_a_rank_that_dies_is_crashed_while_rank_0_completes() -> None:
    log = _parse("rank_died.log")
    assert log.end is LogEnd.COMPLETE
    one = log.rank_log(1)
    assert one is not None
    assert one.end is LogEnd.CRASHED
    assert "OutOfMemoryError" in one.end_detail
    assert one.transforms[-1].state is State.INCOMPLETE


def test_rank_none_picks_rank_0_else_the_lowest(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(v3("export", "export_to_gm", "matches=1", rank=2)
                                    + v3("export", "export_to_gm", "matches=1", rank=3))
    assert log_parser.parse(tmp_path / "a.log", rank=None).rank == 2
    assert _parse("multi_rank.log", rank=None).rank == 0


def test_per_rank_files_are_one_run(tmp_path: Path) -> None:
    from ad_diff.discover.logs import LogFile

    r0, r1, err1 = tmp_path / "0.log", tmp_path / "1.log", tmp_path / "1.err"
    r0.write_text(v3("export", "export_to_gm", "matches=1", rank=None)
                  + v3("compile", "compile_model", "matches=1", rank=None))
    r1.write_text(v3("export", "export_to_gm", "matches=1", rank=None))
    err1.write_text("Traceback (most recent call last):\nRuntimeError: NCCL timeout\n")
    log = log_parser.parse([LogFile(r0, 0, "stdout"), LogFile(r1, 1, "stdout"), LogFile(err1, 1, "stderr")],
                           rank=None)
    assert log.ranks_seen == (0, 1)
    assert log.sources == (r0, r1, err1)
    one = log.rank_log(1)
    assert one is not None
    assert one.end is LogEnd.CRASHED  # the traceback in its stderr file comes after its last result
    assert "1.err:2" in one.end_detail


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("prefixed_noise.log", "holds no AutoDeploy transform lines (4 lines read)"),
        ("unknown_prefix.log", "line 1 looks like an AutoDeploy line but starts with "
                               "'INFO 2026-04-24 10:00:03,123 worker-0 | ', which is no capture prefix "
                               "ad-diff knows"),
    ],
)
def test_prefixed_non_ad_and_unknown_prefixes_are_refused(name: str, message: str) -> None:
    with pytest.raises(InputError) as exc:
        log_parser.parse(FIXTURES / "parsers/log/invalid" / name)
    assert message in str(exc.value)


def test_timestamp_then_srun_label_with_ansi_colours() -> None:
    plain = log_parser.parse(FIXTURES / "parsers/log/captured_kubectl_srun.log")
    assert plain.capture == ("iso-timestamp", "srun")
    got = [(r.transform, r.matches) for r in plain.transforms]
    assert got == [("export_to_gm", 1), ("match_rope_pattern", 4)]
