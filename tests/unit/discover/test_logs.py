"""Finding a run's log: *.log (compressed too), per-rank layouts, sniffed text files, clear errors."""

from __future__ import annotations

import gzip
import os
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
        find_logs(root, BASELINE, option="--baseline-log")
    # a command without such an option (batch, history, candidates) never names one
    with pytest.raises(InputError, match=r"keep one log in the run folder \(or name the one to compare "
                                         r"ad\.log\)$"):
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
        find_logs(root, CANDIDATE, option="--candidate-log")


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


def test_given_files_keep_their_layout_rank(tmp_path: Path) -> None:
    root = _write(tmp_path, {"x/attempt_0/1/stdout.log": AD, "plain.log": AD})
    files, note = find_logs(root, CANDIDATE, (root / "x/attempt_0/1/stdout.log", root / "plain.log"))
    assert files == (LogFile(root / "x/attempt_0/1/stdout.log", 1, "stdout"), LogFile(root / "plain.log"))
    assert note.startswith("logs ")
    with pytest.raises(InputError, match="does not exist"):
        find_logs(root, CANDIDATE, (root / "missing.log",))


# ------------------------------------------------------------------------ containment: refused, never dropped

OUTSIDE = "refusing to read it (copy the file into the run folder instead of linking it)"


@pytest.fixture
def never_opened(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every path discovery opens to sniff (a refused file must not be among them)."""
    from ad_diff.discover import logs

    opened: list[Path] = []
    real = logs.open_text

    def spy(path: Path, what: str):  # noqa: ANN202
        opened.append(path)
        return real(path, what)

    monkeypatch.setattr(logs, "open_text", spy)
    return opened


def _outside(tmp_path: Path) -> Path:
    return _write(tmp_path / "elsewhere", {"secret.log": AD + "token ghp_" + "x" * 36 + "\n"}) / "secret.log"


def _link_run(tmp_path: Path, files: dict[str, str], links: dict[str, Path]) -> Path:
    root = _write(tmp_path / "run", files)
    root.mkdir(exist_ok=True)
    for rel, target in links.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(target)
    return root


def test_a_log_linked_out_is_refused_naming_it(tmp_path: Path, never_opened: list[Path]) -> None:
    root = _link_run(tmp_path, {}, {"ad.log": _outside(tmp_path)})
    with pytest.raises(InputError) as e:
        find_logs(root, CANDIDATE)
    assert e.value.path == root / "ad.log"
    assert e.value.detail == (f"is a symbolic link to a file outside the run folder {root}; {OUTSIDE}; "
                              "expected the AutoDeploy log")  # was "no *.log file ..."
    assert never_opened == []


def test_a_linked_out_ad_log_is_not_replaced_by_another_log(tmp_path: Path) -> None:
    """ad.log is the preferred log: with it dropped, run.log was compared without a word."""
    root = _link_run(tmp_path, {"run.log": AD}, {"ad.log": _outside(tmp_path)})
    with pytest.raises(InputError, match="is a symbolic link to a file outside") as e:
        find_logs(root, CANDIDATE)
    assert e.value.path == root / "ad.log"


def test_an_unused_log_linked_out_is_named_in_the_note(tmp_path: Path, never_opened: list[Path]) -> None:
    root = _link_run(tmp_path, {"ad.log": AD}, {"old.log": _outside(tmp_path)})
    files, note = find_logs(root, CANDIDATE)
    assert [f.path.name for f in files] == ["ad.log"]
    assert note == (
        f"log ad.log (also present, not used: old.log); not read: old.log is a symbolic link to a "
        f"file outside the run folder {root}"
    )
    assert never_opened == []


def test_a_link_that_stays_inside_is_followed(tmp_path: Path) -> None:
    root = _link_run(tmp_path, {"logs/real.log.txt": AD}, {})
    (root / "ad.log").symlink_to(root / "logs/real.log.txt")
    assert _names(root) == ["ad.log"]


@pytest.mark.parametrize("name", ["ad.log", "ad.log.gz"])
def test_a_fifo_named_like_a_log_is_refused_unopened(tmp_path: Path, name: str) -> None:
    """Opening it would block for ever; it used to be left out silently (then: "no *.log file")."""
    root = _write(tmp_path, {"notes.txt": "x"})
    os.mkfifo(root / name)
    with pytest.raises(InputError) as e:
        find_logs(root, CANDIDATE)
    assert e.value.path == root / name
    assert e.value.detail == (
        "is not a regular file (a FIFO, socket or device); refusing to open it; expected the AutoDeploy log"
    )


def test_a_broken_link_named_like_a_log_is_refused(tmp_path: Path) -> None:
    root = _write(tmp_path, {"notes.txt": "x"})
    (root / "ad.log").symlink_to(root / "gone.log")
    with pytest.raises(InputError, match=r"ad\.log: is a broken symbolic link \(it points nowhere\); "
                                         "expected the AutoDeploy log"):
        find_logs(root, CANDIDATE)


def test_a_text_file_linked_out_is_refused_when_text_files_are_sniffed(tmp_path: Path,
                                                                       never_opened: list[Path]) -> None:
    """Without a *.log, any text file may be the log: one that cannot be looked at is named, whatever the
    others hold (slurm-1.out was silently not looked at)."""
    root = _link_run(tmp_path, {"x.txt": AD}, {"slurm-1.out": _outside(tmp_path)})
    with pytest.raises(InputError) as e:
        find_logs(root, CANDIDATE)
    assert e.value.path == root / "slurm-1.out"
    assert e.value.detail.startswith(f"is a symbolic link to a file outside the run folder {root}; ")
    assert e.value.detail.endswith("expected a text file (the run has no *.log, so every text file at its "
                                   "top may be the AutoDeploy log)")
    assert never_opened == []


def test_text_files_are_not_checked_when_there_is_a_log(tmp_path: Path) -> None:
    root = _link_run(tmp_path, {"ad.log": AD}, {"slurm-1.out": _outside(tmp_path)})
    assert _names(root) == ["ad.log"]


def test_a_rank_log_linked_out_is_refused_naming_it(tmp_path: Path, never_opened: list[Path]) -> None:
    """torchrun --log-dir: rank 1's stdout.log linked out was left out, and the run read as one rank."""
    root = _link_run(tmp_path, {"logs/r_a/attempt_0/0/stdout.log": AD},
                     {"logs/r_a/attempt_0/1/stdout.log": _outside(tmp_path)})
    with pytest.raises(InputError) as e:
        find_logs(root, CANDIDATE)
    assert e.value.path == root / "logs/r_a/attempt_0/1/stdout.log"
    assert e.value.detail == (f"is a symbolic link to a file outside the run folder {root}; {OUTSIDE}; "
                              "expected the stdout log of rank 1 (torchrun --log-dir layout)")
    assert never_opened == []


def test_a_rank_log_fifo_is_refused_unopened(tmp_path: Path) -> None:
    """mpirun --output-filename: a FIFO named stdout was opened, and the comparison blocked for ever."""
    root = _write(tmp_path, {"out/1/rank.0/stdout": AD, "out/1/rank.1/stderr": ""})
    os.mkfifo(root / "out/1/rank.1/stdout")
    with pytest.raises(InputError) as e:
        find_logs(root, CANDIDATE)
    assert e.value.path == root / "out/1/rank.1/stdout"
    assert e.value.detail == (
        "is not a regular file (a FIFO, socket or device); refusing to open it; expected "
        "the stdout log of rank 1 (mpirun --output-filename layout)"
    )


def test_a_refused_file_of_an_earlier_attempt_is_not_read_and_not_an_error(tmp_path: Path) -> None:
    root = _link_run(tmp_path, {"l/r/attempt_1/0/stdout.log": AD},
                     {"l/r/attempt_0/0/stdout.log": _outside(tmp_path)})
    assert _names(root) == ["l/r/attempt_1/0/stdout.log"]


@pytest.mark.parametrize("rel", ["out/1/rank.1", "l/r/attempt_0/1", "l/r/attempt_1"])
def test_a_rank_folder_linked_out_is_refused(tmp_path: Path, rel: str) -> None:
    """os.walk does not enter a linked folder: its ranks were lost without a word."""
    away = _write(tmp_path / "elsewhere", {"stdout": AD, "stdout.log": AD, "0/stdout.log": AD})
    root = _link_run(tmp_path, {"out/1/rank.0/stdout": AD} if rel.startswith("out") else
                     {"l/r/attempt_0/0/stdout.log": AD}, {rel: away})
    with pytest.raises(InputError) as e:
        find_logs(root, CANDIDATE)
    assert e.value.path == root / rel
    assert e.value.detail == (
        f"is a symbolic link to a folder outside the run folder {root}; refusing to read "
        "it (copy the folder into the run folder instead of linking it); expected a "
        "folder of per-rank logs"
    )


def test_a_rank_folder_linked_inside_is_refused_too(tmp_path: Path) -> None:
    root = _write(tmp_path, {"out/1/rank.0/stdout": AD, "keep/stdout": AD})
    (root / "out/1/rank.1").symlink_to(root / "keep")
    with pytest.raises(
        InputError,
        match="rank.1: is a symbolic link to a folder; per-rank log folders are not followed through links",
    ):
        find_logs(root, CANDIDATE)


def test_a_layout_cut_by_the_entry_cap_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranks listed after the cap were missing without a word."""
    from ad_diff.discover import logs

    root = _write(tmp_path, {f"out/1/rank.{r}/stdout": AD for r in range(4)})
    assert len(_names(root)) == 4
    monkeypatch.setattr(logs, "_MAX_ENTRIES", 3)
    with pytest.raises(InputError, match=r"holds more than 3 files outside graphs/, tensors/ and config/, so "
                                         r"the per-rank log layout in out/1/ may be incomplete"):
        find_logs(root, CANDIDATE)
