"""Hostile input, round five (issue 45): each class through the real command line, generic first (one
hostile value in every field, through every command and every output), then the named cases as fixtures
built at test time (links, FIFOs and undecodable names cannot live in git).

* Every sink owns its lines: a value holding LF, CR, ``::notice::``, ``##[error]`` and a forged verdict in
  every input field -- names, folders, config keys and values, log lines -- never starts a line of any
  output, and no line of stdout or stderr is a workflow command; the streams never fail on their encoding.
* Completeness by content: a copied candidate gates (ADI008), a rank entry with no log gates (ADI009),
  names that only look alike gate (ADI010); two honest runs never trip any of them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_cli

sys.path.insert(0, str(ROOT / "scripts"))
import make_hostile_fixtures as h  # noqa: E402
from hostile_sinks import every_field, file_name  # noqa: E402

FORGED = "ad-diff: PASS: no regressions"
LINES = f"x\n{FORGED}\n::notice title=pwned::forged\r\n  ::error::forged ##[error]legacy\rend"
"""Line breaks, a forged verdict, workflow commands at a line start (after blanks) and mid-line."""
SGR = re.compile(r"\x1b\[[0-9;]*m")


def _lines_owned(label: str, text: str, stream: bool) -> None:
    """No line of ``text`` was started by a value; on stdout/stderr no line is a workflow command."""
    for line in SGR.sub("", text).split("\n"):
        bare = line.strip()
        assert not bare.startswith(FORGED), (label, line)
        assert not bare.startswith(("::notice", "::error", "##[error]")), (label, line)
        if stream:
            assert not bare.startswith("::"), (label, line)
            assert "##[" not in line, (label, line)


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("round5")
    base, cand = every_field(tmp / file_name(LINES.replace("\n", " ").replace("\r", " ")), LINES)
    return tmp, base, cand


def test_no_value_starts_a_line_of_any_output(hostile_runs: tuple[Path, Path, Path]) -> None:
    tmp, base, cand = hostile_runs
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    files = {"--markdown": "r.md", "--json": "r.json", "--junit": "r.xml", "--html": "r.html",
             "--step-summary": "s.md"}
    args = [a for opt, name in files.items() for a in (opt, out / name)]
    for fmt in ("terminal", "markdown", "json"):
        r = run_cli(base, cand, "-f", fmt, *args, cwd=tmp)
        assert r.code == 1, r.err
        _lines_owned(f"compare -f {fmt} stdout", r.out, stream=True)
        _lines_owned(f"compare -f {fmt} stderr", r.err, stream=True)
        for name in files.values():
            _lines_owned(name, (out / name).read_text("utf-8"), stream=False)
    report = json.loads((out / "r.json").read_text())
    assert LINES in {f.get("tensor") for f in report["findings"]}  # JSON keeps the value whole
    for args2 in (("candidates", cand, "-f", "markdown", "--min-count", "1"), ("snapshot", cand)):
        r = run_cli(*args2, cwd=tmp)
        assert r.code in (0, 1), r.err
        _lines_owned(" ".join(map(str, args2[:1])), r.out, stream=True)


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252", "ascii"])
def test_the_verdict_survives_any_stream_encoding(hostile_runs: tuple[Path, Path, Path],
                                                  encoding: str) -> None:
    """A stdout that is not UTF-8 (a cp1252 Windows pipe) once lost the verdict to UnicodeEncodeError:
    what it cannot encode is escaped."""
    import subprocess

    tmp, base, cand = hostile_runs
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": encoding, "COLUMNS": "120"}
    proc = subprocess.run([sys.executable, "-m", "ad_diff", base, cand], cwd=tmp, env=env,
                          capture_output=True, timeout=300)
    out, err = proc.stdout.decode(encoding), proc.stderr.decode(encoding)
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert out.startswith("ad-diff: FAIL")


# -- completeness by content -----------------------------------------------------------------------------

STAMPED = ("[12/07/2026-10:00:0{s}] [TRT-LLM] [I] loading\n"
           "[AUTO-DEPLOY] [INFO] [RANK 0] [stage=export, transform=export_to_gm] [SUMMARY] matches=1 | time: "
           "0.1{s}3s (pre=0.00{s}s, apply=0.1{s}0s, post=0.000s)\n"
           "[AUTO-DEPLOY] [INFO] [RANK 0] [stage=pattern_matcher, transform=match_rope_pattern] [SUMMARY] "
           "matches=4 | time: 0.2{s}1s (pre=0.00{s}s, apply=0.2{s}0s, post=0.000s)\n")


def _codes(res: object) -> set[str]:
    return {f["code"] for f in json.loads(res.out)["findings"]}  # type: ignore[attr-defined]


def test_a_copy_of_the_baseline_gates_and_two_honest_runs_do_not(tmp_path: Path) -> None:
    base, cand, other = (h.write_run(tmp_path / n, STAMPED.format(s=s), graphs=False)
                         for n, s in (("base", 1), ("copy", 1), ("honest", 2)))
    copied = run_cli(base, cand, "-f", "json")
    assert copied.code == 1
    assert "ADI008" in _codes(copied)
    assert "looks like a copy of the baseline" in copied.out
    honest = run_cli(base, other, "-f", "json")
    assert honest.code == 0, honest.out
    assert "ADI008" not in _codes(honest)


def test_logs_with_no_per_run_value_are_said_to_be_indistinguishable(tmp_path: Path) -> None:
    text = "[AUTO-DEPLOY] [INFO] [RANK 0] [stage=export, transform=export_to_gm] [SUMMARY] matches=1\n"
    base, cand = (h.write_run(tmp_path / n, text, graphs=False) for n in ("b", "c"))
    res = run_cli(base, cand, "-f", "json")
    assert res.code == 0
    assert any("cannot be told apart" in n for n in json.loads(res.out)["notes"])


def _torchrun(root: Path, ranks: int) -> Path:
    for r in range(ranks):
        p = root / "logs" / "job_x" / "attempt_0" / str(r)
        p.mkdir(parents=True)
        (p / "stderr.log").write_text(STAMPED.format(s=r).replace("[RANK 0]", f"[RANK {r}]"))
        (p / "stdout.log").write_text("")
    return root


@pytest.mark.parametrize("case", ["fifo", "file", "empty_folder", "empty_logs"])
def test_a_rank_entry_without_a_log_is_a_finding(tmp_path: Path, case: str) -> None:
    base, cand = _torchrun(tmp_path / "b", 2), _torchrun(tmp_path / "c", 2)
    for s in (1, 2):  # the runs differ in their timings, as two runs do
        (base / "logs/job_x/attempt_0/0/stderr.log").write_text(STAMPED.format(s=s))
    rank1 = cand / "logs" / "job_x" / "attempt_0" / "1"
    shutil.rmtree(rank1)
    if case == "fifo":
        os.mkfifo(rank1)
    elif case == "file":
        rank1.write_text("not a folder\n")
    elif case == "empty_folder":
        rank1.mkdir()
    else:
        rank1.mkdir()
        (rank1 / "stderr.log").write_text("")
        (rank1 / "stdout.log").write_text("")
    res = run_cli(base, cand, "-f", "json")
    assert res.code == 1, res.err
    found = [f for f in json.loads(res.out)["findings"] if f["code"] == "ADI009"]
    assert found, res.out
    assert "attempt_0/1" in found[0]["message"]
    assert "rank 1" in found[0]["message"]


def test_transforms_named_alike_are_flagged(tmp_path: Path) -> None:
    """A Cyrillic `а` made one transform read as absent in one run and new in the other."""
    base = h.write_run(tmp_path / "b", STAMPED.format(s=1), graphs=False)
    alike = STAMPED.format(s=2).replace("match_rope", "m\u0430tch_rope")
    cand = h.write_run(tmp_path / "c", alike, graphs=False)
    res = run_cli(base, cand, "-f", "json")
    assert res.code == 1
    (f,) = [f for f in json.loads(res.out)["findings"] if f["code"] == "ADI010"]
    assert "CYRILLIC SMALL LETTER A" in f["message"]


# -- named cases of the other classes ----------------------------------------------------------------------


def test_a_dollar_in_a_tensor_name_plots(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    name = "logits$\\frac{a}{$ hf_" + "Ab1" * 12
    b, c = h._pair(tmp_path)
    h.write_tensors(b, {name: ("F32", (4, 4), h.f32(h.LOGITS))})
    h.write_tensors(c, {name: ("F32", (4, 4), h.f32([x + 5 for x in h.LOGITS]))})
    res = run_cli(b, c, "--plots", tmp_path / "plots")
    assert res.code == 1, res.err
    made = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert len(made) == 2
    assert not any("Ab1Ab1" in m for m in made)  # no token in a file name


def test_batch_html_with_an_undecodable_model_folder(tmp_path: Path) -> None:
    name = os.fsdecode(b"model\xff\xfe")
    for side in ("b", "c"):
        h.write_run(tmp_path / side / name, STAMPED.format(s=1 if side == "b" else 2), graphs=False)
    res = run_cli("batch", tmp_path / "b", tmp_path / "c", "--html", tmp_path / "html")
    assert res.code == 0, res.err
    assert len(list((tmp_path / "html").iterdir())) == 2


def test_snapshot_keys_from_dump_headers_are_yaml_escaped(tmp_path: Path) -> None:
    from ad_diff.discover.snapshot import dump

    key = "compile/x: {nodes: 0}\n::notice::y #z"
    text = dump({"ad_diff_snapshot": 1, "transforms": [], "metadata_coverage": {key: {"nodes": 1}}})
    assert list(yaml.safe_load(text)["metadata_coverage"]) == [key]
    _lines_owned("snapshot", text, stream=True)


def test_the_action_headline_is_one_inert_line(tmp_path: Path) -> None:
    from ad_diff.workflows.github_action import log_line as _log_line

    line = _log_line(LINES)
    assert "\n" not in line
    assert "\r" not in line
    _lines_owned("headline", line, stream=True)
