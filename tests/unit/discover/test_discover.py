"""What a run folder holds: the log files (with ranks), graph dumps in counter order, clear folder errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.core.model import BASELINE
from ad_diff.discover import discover, dump_entries
from ad_diff.errors import InputError

AD = "[AUTO-DEPLOY] [INFO] [RANK 0] [stage=export, transform=export_to_gm] [SUMMARY] matches=1\n"


def test_run_folder_with_per_rank_logs_and_dumps(tmp_path: Path) -> None:
    for r in (0, 1):
        p = tmp_path / f"logs/none_x/attempt_0/{r}/stdout.log"
        p.parent.mkdir(parents=True)
        p.write_text(AD)
    (tmp_path / "graphs").mkdir()
    for name in ("1000_compile_b.txt", "002_export_a.txt", "notes.txt"):
        (tmp_path / "graphs" / name).write_text("x")
    art = discover(tmp_path, BASELINE)
    assert [lf.rank for lf in art.logs] == [0, 1]
    assert art.log == art.logs[0].path
    assert dump_entries(tmp_path / "graphs") == ["002_export_a.txt", "1000_compile_b.txt"]
    assert any("2 dump file(s)" in n for n in art.notes)


def test_log_given_as_path_or_paths(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(AD)
    (tmp_path / "b.txt").write_text(AD)
    assert discover(tmp_path, BASELINE, tmp_path / "a.txt").log == tmp_path / "a.txt"
    art = discover(tmp_path, BASELINE, (tmp_path / "a.txt", tmp_path / "b.txt"))
    assert [lf.path.name for lf in art.logs] == ["a.txt", "b.txt"]


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: None, "baseline run folder does not exist"),
    (lambda p: p.write_text(AD), "is not a folder"),
])
def test_unusable_folder(tmp_path: Path, make, message: str) -> None:
    root = tmp_path / "run"
    make(root)
    with pytest.raises(InputError, match=message):
        discover(root, BASELINE)


def test_a_log_file_given_as_the_folder(tmp_path: Path) -> None:
    p = tmp_path / "ad.log.gz"
    p.write_text("x")
    with pytest.raises(InputError, match="is a log file; expected the baseline run folder holding it"):
        discover(p, BASELINE)
    with pytest.raises(InputError, match=r"holding it \(the log, graphs/, tensors/\), or keep a folder per "
                                         r"run and name this file with --baseline-log FILE$"):
        discover(p, BASELINE, log_option="--baseline-log")
