"""Logs as people capture them (issue 18): every CI/launcher form, compressed files, other names and per-rank
layouts, generated from committed scenario logs by scripts/fixturegen/captures.py, read exactly as the plain
log; non-AD files refused; errors in JSON under ``--format json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ad_diff import pipeline
from ad_diff.settings import Settings
from tests.conftest import FIXTURES, ROOT, run_cli

sys.path.insert(0, str(ROOT / "scripts"))
from fixturegen import captures  # noqa: E402

SINGLE = FIXTURES / "scenarios/partial_loss"
MULTI = FIXTURES / "scenarios/multi_rank"


def _pairs(scenario: Path, run: str) -> list[tuple[int, str]]:
    return captures.from_text((scenario / run / "ad.log").read_text())


def _multi() -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The multi_rank pair with only rank 1 regressing in the candidate (rmsnorm 4 -> 0)."""
    base = _pairs(MULTI, "baseline")
    cand = [(r, line.replace("transform=match_rmsnorm_pattern] [SUMMARY] matches=4",
                             "transform=match_rmsnorm_pattern] [SUMMARY] matches=0") if r == 1 else line)
            for r, line in _pairs(MULTI, "candidate")]
    return base, cand


def _folder(root: Path, files: dict[str, bytes | str]) -> Path:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
    return root


def _outcome(base: Path, cand: Path, **kw: object) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """Findings and rows of a log-only comparison (what must not depend on how the log was captured)."""
    res = pipeline.run(Settings(baseline=base, candidate=cand, **kw))  # type: ignore[arg-type]
    findings = [(f.code, f.severity.value, f.transform or "", f.message) for f in res.findings]
    rows = [(r.transform, r.baseline.state.value, str(r.baseline.matches), r.candidate.state.value,
             str(r.candidate.matches)) for r in res.transforms]
    return findings, rows


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[object, object]]:
    out = {}
    tmp = tmp_path_factory.mktemp("plain")
    pairs = {"single": (_pairs(SINGLE, "baseline"), _pairs(SINGLE, "candidate")), "multi": _multi()}
    for name, (b, c) in pairs.items():
        bd = _folder(tmp / name / "b", {"ad.log": captures.text_of(b)})
        cd = _folder(tmp / name / "c", {"ad.log": captures.text_of(c)})
        out[name] = _outcome(bd, cd)
    return out


def test_the_reference_comparisons_are_not_empty(plain) -> None:
    findings, rows = plain["single"]
    assert [f[0] for f in findings] == ["ADL002", "ADL002"]
    findings, _ = plain["multi"]
    assert [f[3] for f in findings] == [
        "match_rmsnorm_pattern: matches collapsed 4 -> 0 on rank 1 of 2 (rank 0: 5 -> 5)",
        "baseline log: ranks disagree on pattern_matcher/match_rmsnorm_pattern (rank 0: 5, rank 1: 4)"]
    assert len(rows) == 27


@pytest.mark.parametrize("form", sorted(captures.FORMS))
@pytest.mark.parametrize("which", ["single", "multi"])
def test_every_capture_form_reads_as_the_plain_log(tmp_path: Path, plain, form: str, which: str) -> None:
    b, c = (_pairs(SINGLE, "baseline"), _pairs(SINGLE, "candidate")) if which == "single" else _multi()
    if form in captures.RANK_TAGGING:  # the launcher's tag is then the only way to tell the ranks apart
        b, c = captures.without_rank_tags(b), captures.without_rank_tags(c)
    bd = _folder(tmp_path / "b", {"job-log.txt": captures.text_of(captures.FORMS[form](b))})
    cd = _folder(tmp_path / "c", {"job-log.txt": captures.text_of(captures.FORMS[form](c))})
    assert _outcome(bd, cd) == plain[which]


@pytest.mark.parametrize("name", ["ad.log.gz", "ad.log.bz2", "ad.log.xz", "slurm-48213.out",
                                  "console_output.txt", "output", "slurm-48213.out.gz"])
def test_compressed_and_otherwise_named_logs_are_found(tmp_path: Path, plain, name: str) -> None:
    b, c = _pairs(SINGLE, "baseline"), _pairs(SINGLE, "candidate")
    suffix = next((s for s in captures.COMPRESSORS if name.endswith(s)), "")

    def data(pairs: list[tuple[int, str]]) -> bytes:
        raw = captures.text_of(pairs).encode()
        return captures.COMPRESSORS[suffix](raw) if suffix else raw

    bd = _folder(tmp_path / "b", {name: data(b), "notes.txt": "not a log\n"})
    cd = _folder(tmp_path / "c", {name: data(c)})
    assert _outcome(bd, cd) == plain["single"]


@pytest.mark.parametrize("layout", ["torchrun", "mpirun"])
def test_per_rank_layouts_read_as_the_interleaved_log(tmp_path: Path, plain, layout: str) -> None:
    b, c = (captures.without_rank_tags(p) for p in _multi())  # each file's rank comes from its path
    bd = _folder(tmp_path / "b", captures.per_rank(b, layout))
    cd = _folder(tmp_path / "c", captures.per_rank(c, layout))
    assert _outcome(bd, cd) == plain["multi"]
    files = sorted(str(p) for p in cd.rglob("std*"))
    # the same files given one by one on the command line
    assert _outcome(bd, tmp_path / "c", candidate_log=tuple(Path(f) for f in files)) == plain["multi"]


def test_rank_option_narrows_to_one_rank(tmp_path: Path) -> None:
    b, c = _multi()
    bd = _folder(tmp_path / "b", {"ad.log": captures.text_of(b)})
    cd = _folder(tmp_path / "c", {"ad.log": captures.text_of(c)})
    findings, _ = _outcome(bd, cd, rank=0)
    assert [f[0] for f in findings] == ["ADL010", "ADL010"]  # rank 1's loss is then only a disagreement
    findings, rows = _outcome(bd, cd, rank=1)
    assert [f[:2] for f in findings] == [("ADL001", "error"), ("ADL010", "warning"), ("ADL010", "warning")]
    assert findings[0][3] == "match_rmsnorm_pattern: matches collapsed 4 -> 0"  # one rank: no rank suffix
    assert ("match_rmsnorm_pattern", "applied", "4", "applied", "0") in rows


@pytest.mark.parametrize("name", ["ad.log", "job-log.txt"])
def test_prefixed_non_ad_file_is_refused_not_an_empty_pass(tmp_path: Path, name: str) -> None:
    noise = captures.github([(0, "Collecting torch"), (0, "Successfully installed torch-2.13.0")])
    b = _folder(tmp_path / "b", {"ad.log": (SINGLE / "baseline/ad.log").read_text()})
    c = _folder(tmp_path / "c", {name: captures.text_of(noise)})
    res = run_cli(b, c, "-f", "json")
    assert res.code == 2
    assert "Traceback" not in res.err
    expected = "holds no AutoDeploy transform lines" if name == "ad.log" else "no *.log file at the top"
    assert expected in res.err
    err = json.loads(res.out)["error"]
    assert expected in err["message"]
    assert err["path"].endswith(name if name == "ad.log" else "c")


def test_input_error_under_json_format_prints_json_on_stdout(tmp_path: Path) -> None:
    b = _folder(tmp_path / "b", {"ad.log": (SINGLE / "baseline/ad.log").read_text()})
    c = _folder(tmp_path / "c", {"ad.log": ""})
    res = run_cli(b, c, "-f", "json")
    assert res.code == 2
    data = json.loads(res.out)
    assert data == {"schema_version": 2, "verdict": "error", "exit_code": 2,
                    "error": {"message": f"{c / 'ad.log'}: is empty; expected an AutoDeploy log (lines like "
                                         "'[stage=..., transform=...] [SUMMARY] matches=N')",
                              "path": str(c / "ad.log"), "line": None}}
    assert run_cli(b, c).out == ""  # without --format json, stdout stays empty


def test_several_logs_given_on_the_cli(tmp_path: Path) -> None:
    b, c = (captures.without_rank_tags(p) for p in _multi())
    bd = _folder(tmp_path / "b", captures.per_rank(b, "mpirun"))
    cd = _folder(tmp_path / "c", captures.per_rank(c, "mpirun"))
    args = [a for f in sorted(cd.rglob("std*")) for a in ("--candidate-log", f)]
    res = run_cli(bd, cd, *args, "-f", "json")
    assert res.code == 1, res.err
    msgs = [f["message"] for f in json.loads(res.out)["findings"]]
    assert "match_rmsnorm_pattern: matches collapsed 4 -> 0 on rank 1 of 2 (rank 0: 5 -> 5)" in msgs
