"""Finding a run's log: *.log (compressed too), per-rank layouts, sniffed text files, clear errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.discover.logs import LogFile, find_logs
from ad_diff.errors import InputError

AD = "[AUTO-DEPLOY] [INFO] [RANK 0] [stage=export, transform=export_to_gm] [SUMMARY] matches=1\n"


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text)
    return root


def _names(root: Path, run=CANDIDATE) -> list[str]:
    files, _ = find_logs(root, run)
    return [f.path.relative_to(root).as_posix() for f in files]


def test_single_log_and_ad_log_preference(tmp_path: Path) -> None:
    assert _names(_write(tmp_path / "a", {"whatever.log": "x"})) == ["whatever.log"]
    root = _write(tmp_path / "b", {"build.log": "x", "ad.log": AD, "slurm-1.out": AD})
    files, note = find_logs(root, CANDIDATE)
    assert [f.path.name for f in files] == ["ad.log"]
    assert "also present, not used: build.log" in note


def test_several_logs_is_an_error_naming_them_and_the_option(tmp_path: Path) -> None:
    root = _write(tmp_path, {"a.log": AD, "b.log": AD})
    with pytest.raises(InputError, match=r"several \*\.log files \(a\.log, b\.log\).*--baseline-log FILE"):
        find_logs(root, BASELINE)


def test_compressed_log_is_found(tmp_path: Path) -> None:
    assert _names(_write(tmp_path, {"ad.log.gz": gzip.compress(AD.encode())})) == ["ad.log.gz"]


@pytest.mark.parametrize("name", ["slurm-48213.out", "console_output.txt", "output", "job.txt.xz"])
def test_text_file_with_ad_lines_is_found_when_there_is_no_log(tmp_path: Path, name: str) -> None:
    data: str | bytes = "module load cuda\n" + AD
    if name.endswith(".xz"):
        import lzma

        data = lzma.compress(data.encode())
    root = _write(tmp_path, {name: data, "notes.txt": "no AD here\n", "README.md": AD, "run.json": "{}"})
    files, note = find_logs(root, CANDIDATE)
    assert [f.path.name for f in files] == [name]
    assert "holds AutoDeploy transform lines" in note


def test_several_text_files_prefer_ad_named_else_error(tmp_path: Path) -> None:
    root = _write(tmp_path / "a", {"ad.out": AD, "other.txt": AD})
    assert _names(root) == ["ad.out"]
    root = _write(tmp_path / "b", {"x.out": AD, "y.txt": AD})
    with pytest.raises(InputError,
                       match=r"several text files with AutoDeploy transform lines \(x\.out, y\.txt\)"):
        find_logs(root, CANDIDATE)


def test_no_log_is_a_clear_error(tmp_path: Path) -> None:
    root = _write(tmp_path, {"notes.txt": "nothing\n"})
    with pytest.raises(InputError, match=r"no \*\.log file at the top of the run folder.*looked at "
                                         r"notes\.txt.*--candidate-log"):
        find_logs(root, CANDIDATE)


def test_torchrun_log_dir_layout_uses_the_last_attempt(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "logs/none_abc/attempt_0/0/stdout.log": AD, "logs/none_abc/attempt_0/1/stdout.log": AD,
        "logs/none_abc/attempt_1/0/stdout.log": AD, "logs/none_abc/attempt_1/0/stderr.log": "",
        "logs/none_abc/attempt_1/1/stdout.log": AD, "logs/none_abc/attempt_1/1/error.json": "{}",
        "graphs/001_export_export_to_gm.txt": "x",
    })
    files, note = find_logs(root, CANDIDATE)
    assert [(f.path.relative_to(root).as_posix(), f.rank, f.stream) for f in files] == [
        ("logs/none_abc/attempt_1/0/stdout.log", 0, "stdout"),
        ("logs/none_abc/attempt_1/0/stderr.log", 0, "stderr"),
        ("logs/none_abc/attempt_1/1/stdout.log", 1, "stdout"),
    ]
    assert "torchrun --log-dir layout (attempt 1; earlier attempts not used)" in note


def test_mpirun_output_filename_layout(tmp_path: Path) -> None:
    root = _write(tmp_path, {"out/1/rank.00/stdout": AD, "out/1/rank.01/stdout": AD,
                             "out/1/rank.01/stderr": ""})
    files, note = find_logs(root, CANDIDATE)
    assert [(f.rank, f.stream) for f in files] == [(0, "stdout"), (1, "stdout"), (1, "stderr")]
    assert "mpirun --output-filename layout" in note


def test_two_layouts_are_ambiguous(tmp_path: Path) -> None:
    root = _write(tmp_path, {"a/1/rank.0/stdout": AD, "b/1/rank.0/stdout": AD})
    with pytest.raises(InputError, match="several per-rank log layouts"):
        find_logs(root, CANDIDATE)


def test_link_out_of_the_run_folder_is_not_used(tmp_path: Path) -> None:
    outside = _write(tmp_path / "elsewhere", {"secret.log": AD})
    root = tmp_path / "run"
    root.mkdir()
    (root / "ad.log").symlink_to(outside / "secret.log")
    with pytest.raises(InputError, match="no \\*.log file"):
        find_logs(root, CANDIDATE)


def test_given_files_keep_their_layout_rank(tmp_path: Path) -> None:
    root = _write(tmp_path, {"x/attempt_0/1/stdout.log": AD, "plain.log": AD})
    files, note = find_logs(root, CANDIDATE, (root / "x/attempt_0/1/stdout.log", root / "plain.log"))
    assert files == (LogFile(root / "x/attempt_0/1/stdout.log", 1, "stdout"), LogFile(root / "plain.log"))
    assert note.startswith("logs ")
    with pytest.raises(InputError, match="does not exist"):
        find_logs(root, CANDIDATE, (root / "missing.log",))
