"""`ad-diff record`: tee into RUN/ad.log, graphs into RUN/graphs, run.json with the status, exit code kept."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from ad_diff.errors import UsageError
from ad_diff.workflows.record import record

CHILD = """
import os, pathlib, sys
d = pathlib.Path(os.environ["AD_DUMP_GRAPHS_DIR"])
d.mkdir(parents=True)
(d / "001_export_export_to_gm.txt").write_text(
    "# Transform: export_to_gm\\n# Stage: export\\n\\n%x : 2 : torch.float32\\noutput %x\\n"
)
print("[AUTO-DEPLOY] [INFO] [RANK 0] [stage=pattern_matcher, transform=fuse_gemms] [SUMMARY] matches=4 | "
      "time: 0.1s (pre=0.0s, apply=0.1s, post=0.0s)")
print("a warning on stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


class Sink(io.BytesIO):
    """A binary stream standing in for the terminal."""


@pytest.mark.parametrize("status", [0, 3])
def test_record_succeeding_and_failing_command(tmp_path: Path, status: int) -> None:
    run = tmp_path / "runs" / "base"
    out, err = Sink(), Sink()
    info = record(run, [sys.executable, "-c", CHILD, str(status)], out, err)
    assert info["exit_code"] == status
    assert info["status"] == ("succeeded" if status == 0 else f"failed with exit code {status}")
    log = (run / "ad.log").read_text()
    # both streams in the log
    assert "[SUMMARY] matches=4" in log
    assert "a warning on stderr" in log
    # and shown live
    assert b"[SUMMARY]" in out.getvalue()
    assert b"a warning on stderr" in err.getvalue()
    assert sorted(p.name for p in (run / "graphs").iterdir()) == ["001_export_export_to_gm.txt"]
    saved = json.loads((run / "run.json").read_text())
    assert saved["exit_code"] == status
    assert saved["dump_files"] == 1
    assert saved["env"]["AD_DUMP_GRAPHS_DIR"] == str((run / "graphs").resolve())
    assert saved["command"][0] == sys.executable
    assert saved["python"]
    assert sorted(p.name for p in run.iterdir()) == ["ad.log", "graphs", "run.json"]  # nothing else written


def test_missing_command_leaves_a_clear_status(tmp_path: Path) -> None:
    info = record(tmp_path / "r", ["no-such-command-ad-diff"], Sink(), Sink())
    assert info["exit_code"] == 127
    assert "command not found" in info["status"]
    assert json.loads((tmp_path / "r" / "run.json").read_text())["exit_code"] == 127


def test_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    run = tmp_path / "r"
    record(run, [sys.executable, "-c", "pass"], Sink(), Sink())
    (run / "graphs").mkdir()
    (run / "graphs" / "old.txt").write_text("stale")
    with pytest.raises(UsageError, match="--force"):
        record(run, [sys.executable, "-c", "pass"], Sink(), Sink())
    record(run, [sys.executable, "-c", "pass"], Sink(), Sink(), force=True)
    assert not (run / "graphs").exists()  # stale dumps of the earlier run are gone


def test_cli_exit_code_is_the_commands(tmp_path: Path, cli) -> None:
    res = cli("record", tmp_path / "r", "--", sys.executable, "-c", CHILD, "5")
    assert res.code == 5
    assert "[SUMMARY] matches=4" in res.out
    assert "failed with exit code 5" in res.err
    # the recorded folder is a usable run folder
    snap = cli("snapshot", tmp_path / "r")
    assert snap.code == 0
    assert "fuse_gemms" in snap.out


def test_cli_passes_options_of_the_command_through(tmp_path: Path, cli) -> None:
    res = cli(
        "record",
        tmp_path / "r",
        "--",
        sys.executable,
        "-c",
        "import sys; print(sys.argv[1:])",
        "--model",
        "x",
    )
    assert res.code == 0
    assert "['--model', 'x']" in res.out


def test_run_json_holds_no_credential(tmp_path: Path) -> None:
    """Tokens on the command line (by shape, as ``--flag VALUE`` and ``--flag=VALUE``) and in the ``AD_*``
    environment are redacted in run.json; the rest of the command is kept."""
    run = tmp_path / "r"
    token = "hf_" + "Ab1" * 12
    env = {"PATH": "/usr/bin:/bin", "AD_HF_TOKEN": "s3cr3t-value-1234", "AD_MODEL": "llama"}
    info = record(run, [sys.executable, "-c", "print(1)", "--model", "m", "--hf-token", "plain-value-123",
                        f"--api-key={token}", token], Sink(), Sink(), env=env)
    text = (run / "run.json").read_text()
    for secret in (token, "plain-value-123", "s3cr3t-value-1234"):
        assert secret not in text
        assert secret not in json.dumps(info)
    saved = json.loads(text)
    assert saved["command"][3:6] == ["--model", "m", "--hf-token"]
    assert saved["env"]["AD_MODEL"] == "llama"
