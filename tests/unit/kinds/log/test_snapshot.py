"""Golden counts: snapshot a run, check it against itself (pass) and against a regressed run (fail)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from ad_diff import gate, pipeline
from ad_diff.discover import snapshot
from ad_diff.errors import InputError
from ad_diff.settings import Settings
from tests.ci_runs import pair
from tests.conftest import FIXTURES


def test_round_trip_through_the_cli(tmp_path: Path, cli) -> None:
    base, cand = pair(tmp_path)
    counts = tmp_path / "golden" / "counts.yaml"
    res = cli("snapshot", base, "-o", counts)
    assert res.code == 0
    assert counts.is_file()
    data = yaml.safe_load(counts.read_text())
    assert data["transforms"][0] == {"stage": "pattern_matcher", "transform": "match_rope_pattern",
                                     "state": "applied", "matches": 16}
    same = cli(counts, base, "-f", "json")
    assert same.code == 0, same.err
    assert '"verdict": "pass"' in same.out
    assert "baseline is a snapshot" in same.out
    regressed = cli(counts, cand)
    assert regressed.code == 1
    assert "ADL001" in regressed.out
    assert "ADL003" in regressed.out


def test_snapshot_on_stdout_is_deterministic(tmp_path: Path, cli) -> None:
    base, _ = pair(tmp_path)
    a, b = cli("snapshot", base), cli("snapshot", base)
    assert a.code == 0
    assert a.out == b.out
    assert a.out.startswith("# ad-diff snapshot")


def test_synthetic_baseline_matches_the_real_one(tmp_path: Path) -> None:
    base, cand = pair(tmp_path)
    counts = tmp_path / "c.yaml"
    counts.write_text(snapshot.dump(pipeline.take_snapshot(base)))
    from_run = pipeline.run(Settings(base, cand))
    from_snap = pipeline.run(Settings(counts, cand))
    def counts(rows):  # a snapshot keeps states and counts, not timings
        return [(r.transform, r.baseline.state, r.baseline.matches, r.candidate.matches) for r in rows]

    assert counts(from_snap.transforms) == counts(from_run.transforms)
    assert [f.code for f in from_snap.findings] == [f.code for f in from_run.findings]
    assert gate.decide(from_snap.findings, "error").exit_code == 1


def test_snapshot_with_a_broken_dump_is_an_input_error(tmp_path: Path) -> None:
    base, _ = pair(tmp_path)
    (base / "graphs").mkdir()
    (base / "graphs" / "001_export_export_to_gm.txt").write_text("# Transform: export_to_gm\n")
    with pytest.raises(InputError, match="001_export_export_to_gm.txt:2: expected '# Stage: <stage>'"):
        pipeline.take_snapshot(base)


def test_snapshot_of_a_run_with_a_dump_linked_out_is_refused(tmp_path: Path) -> None:
    """The linked-out dump was left out of metadata_coverage without a word: candidates checked against the
    snapshot later went unchecked at that transform."""
    run = tmp_path / "run"
    shutil.copytree(SCEN / "baseline", run)
    dump = sorted((run / "graphs").iterdir())[0]
    away = tmp_path / "elsewhere.txt"
    dump.rename(away)
    dump.symlink_to(away)
    with pytest.raises(InputError) as e:
        pipeline.take_snapshot(run)
    assert e.value.path == dump
    assert e.value.detail == (f"is a symbolic link to a file outside the run folder {run}; "
                              "refusing to read it "
                              "(copy the dumps into the run folder instead of linking them); a snapshot "
                              "records the metadata coverage of every dump, so each must be a readable file "
                              "of the run")


SCEN = FIXTURES / "scenarios/metadata_loss"


def test_snapshot_coverage_counts_and_metadata_loss_against_it(tmp_path: Path) -> None:
    golden = tmp_path / "golden.yaml"
    data = pipeline.take_snapshot(SCEN / "baseline")
    cov = data["metadata_coverage"]
    rope = cov["pattern_matcher/match_rope_pattern"]
    assert rope["nodes"] == rope["with_meta"]
    golden.write_text(snapshot.dump(data))
    assert yaml.safe_load(golden.read_text())["metadata_coverage"] == cov  # round trip, no anchors needed
    same = pipeline.run(Settings(golden, SCEN / "baseline"))
    assert [f.code for f in same.findings] == []
    worse = pipeline.run(Settings(golden, SCEN / "candidate"))
    lost = [f for f in worse.findings if f.code == "ADG010"]
    assert [(f.transform, dict(f.evidence)["dump"]) for f in lost] == [
        ("match_rope_pattern", "pattern_matcher/match_rope_pattern")]
    assert "2 node(s) without shape/dtype metadata" in lost[0].message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fail_on: error\n", "not an ad-diff snapshot"),
        ("ad_diff_snapshot: 2\ntransforms: []\n", "version 2 is not supported"),
        ("ad_diff_snapshot: 1\ntransforms: []\n", "non-empty list"),
        ("ad_diff_snapshot: 1\ntransforms:\n  - {stage: s, transform: t, state: great}\n",
         "transforms[0]: `state`"),
        ("ad_diff_snapshot: 1\ntransforms:\n  - {stage: s, transform: t, state: applied, matches: -1}\n",
         "`matches` must be a count"),
        ("ad_diff_snapshot: 1\ntransforms: [\n", "not valid YAML"),
    ],
)
def test_bad_snapshots_are_input_errors(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        snapshot.load_as_run(p)
    assert message in str(e.value)
