"""Outputs never leave their place (ad_diff.core.outfile): no report written through a link, over an input
or into a run folder, whichever option names it; exit 2 naming the path, and the target untouched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ad_diff.core import outfile
from ad_diff.errors import AdDiffError
from tests.conftest import FIXTURES, run_cli

SCEN = FIXTURES / "scenarios" / "identical"
KEEP = "precious content\n"

# every option of `compare` that writes a file (the step summary appends)
OUTPUTS = ["--markdown", "--json", "--junit", "--html", "--step-summary"]


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    base, cand = tmp_path / "baseline", tmp_path / "candidate"
    shutil.copytree(SCEN / "baseline", base)
    shutil.copytree(SCEN / "candidate", cand)
    return base, cand


def _refused(res: object, path: Path, why: str) -> None:
    assert res.code == 2, res.err  # type: ignore[attr-defined]
    assert f"{path}: {why}" in res.err  # type: ignore[attr-defined]
    assert "Traceback" not in res.err  # type: ignore[attr-defined]


@pytest.mark.parametrize("option", OUTPUTS)
def test_an_output_that_is_a_link_is_not_written_through(runs: tuple[Path, Path], tmp_path: Path,
                                                         option: str) -> None:
    base, cand = runs
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text(KEEP)
    link = tmp_path / "out" / "report.out"
    link.parent.mkdir()
    link.symlink_to(victim)
    res = run_cli("compare", base, cand, option, link)
    _refused(res, link, "is a symbolic link; refusing to write through it")
    assert victim.read_text() == KEEP


@pytest.mark.parametrize("option", OUTPUTS)
def test_an_output_over_an_input_file_is_refused(runs: tuple[Path, Path], option: str) -> None:
    base, cand = runs
    log = cand / "ad.log"
    before = log.read_bytes()
    res = run_cli("compare", base, cand, "--candidate-log", log, option, log)
    _refused(res, log, "is an input of this command")
    assert log.read_bytes() == before


@pytest.mark.parametrize("option", OUTPUTS)
def test_an_output_inside_a_run_folder_is_refused(runs: tuple[Path, Path], option: str) -> None:
    base, cand = runs
    target = base / "report.out"
    res = run_cli("compare", base, cand, option, target)
    _refused(res, target, f"is inside the input folder {base}")
    assert not target.exists()


def test_an_output_hard_linked_to_an_input_is_refused(runs: tuple[Path, Path], tmp_path: Path) -> None:
    base, cand = runs
    twin = tmp_path / "twin.md"
    twin.hardlink_to(cand / "ad.log")
    before = twin.read_bytes()
    res = run_cli("compare", base, cand, "--candidate-log", cand / "ad.log", "--markdown", twin)
    _refused(res, twin, f"is an input of this command ({cand / 'ad.log'})")
    assert (cand / "ad.log").read_bytes() == before


def test_snapshot_and_candidates_outputs_go_through_the_same_writer(runs: tuple[Path, Path]) -> None:
    base, cand = runs
    res = run_cli("snapshot", cand, "-o", cand / "snap.yaml")
    _refused(res, cand / "snap.yaml", f"is inside the input folder {cand}")
    before = (base / "ad.log").read_bytes()
    res = run_cli("candidates", base, "-o", base / "ad.log")
    _refused(res, base / "ad.log", f"is inside the input folder {base}")
    assert (base / "ad.log").read_bytes() == before


def test_a_history_table_into_the_history_folder_is_refused(runs: tuple[Path, Path], tmp_path: Path) -> None:
    hist = tmp_path / "hist"
    hist.mkdir()
    shutil.copytree(runs[0], hist / "r1")
    res = run_cli("history", hist, "--table", hist / "t.csv")
    _refused(res, hist / "t.csv", f"is inside the input folder {hist}")


def test_a_link_swapped_in_after_the_check_is_replaced_not_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.write_text(KEEP)
    out = tmp_path / "report.md"
    real = outfile.refusal

    def check_then_swap(path: Path, **kw: bool) -> str | None:
        why = real(path, **kw)
        out.symlink_to(victim)  # the race: a link appears after the check
        return why

    monkeypatch.setattr(outfile, "refusal", check_then_swap)
    outfile.protect([])
    outfile.write_file(out, b"report\n")
    assert victim.read_text() == KEEP
    assert not out.is_symlink()
    assert out.read_text() == "report\n"


def test_an_append_through_a_link_swapped_in_is_refused(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "victim"
    victim.write_text(KEEP)
    out = tmp_path / "summary.md"
    real = outfile.refusal

    def check_then_swap(path: Path, **kw: bool) -> str | None:
        why = real(path, **kw)
        out.symlink_to(victim)
        return why

    monkeypatch.setattr(outfile, "refusal", check_then_swap)
    with pytest.raises(AdDiffError, match="summary.md: is a symbolic link; refusing to write through it"):
        outfile.write_file(out, b"more\n", append=True)
    assert victim.read_text() == KEEP


def test_a_fresh_report_is_written_with_ordinary_permissions(tmp_path: Path) -> None:
    outfile.protect([])
    out = tmp_path / "sub" / "r.md"
    outfile.write_file(out, b"x")
    assert out.read_bytes() == b"x"
    assert out.stat().st_mode & 0o644 == 0o644


# -- issue 45: every file the run reads, the config included, and all or nothing --------------------------


def _tree_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("option", OUTPUTS)
@pytest.mark.parametrize("target", [".ad-diff.yaml", "pyproject.toml"])
def test_an_output_over_the_config_files_of_the_current_folder_is_refused(
        runs: tuple[Path, Path], tmp_path: Path, option: str, target: str) -> None:
    """The config ad-diff reads from the current folder, and the other file it looks for there, whichever
    was used: ``--json .ad-diff.yaml`` once overwrote the config it had just read; ``--markdown
    pyproject.toml`` the project file. Nothing else is written either."""
    base, cand = runs
    work = tmp_path / "work"
    work.mkdir()
    (work / ".ad-diff.yaml").write_text("fail_on: error\n")
    (work / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    before = _tree_bytes(work)
    res = run_cli("compare", base, cand, option, target, "--markdown" if option != "--markdown" else "--json",
                  work / "good.out", cwd=work)
    _refused(res, Path(target), "is an input of this command")
    assert _tree_bytes(work) == before  # neither the config nor the good output was written


@pytest.mark.parametrize("option", OUTPUTS)
def test_an_output_hard_linked_into_a_run_folder_is_refused_before_the_comparison(
        runs: tuple[Path, Path], tmp_path: Path, option: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hard link to a run's log, not named on the command line (``--step-summary`` appended into it): the
    output is checked against every file in the input folders before anything is compared."""
    base, cand = runs
    twin = tmp_path / "summary.md"
    twin.hardlink_to(cand / "ad.log")
    before = (cand / "ad.log").read_bytes()
    res = run_cli("compare", base, cand, option, twin, "--junit" if option != "--junit" else "--json",
                  tmp_path / "good.out")
    _refused(res, twin, f"is a hard link of {cand / 'ad.log'}, an input of this command")
    assert (cand / "ad.log").read_bytes() == before
    assert not (tmp_path / "good.out").exists()


def test_one_output_that_clashes_with_a_file_read_later_means_nothing_is_written(tmp_path: Path) -> None:
    """All or nothing, in-process: the second output turns out (after the run read it) to be a file the run
    read; the first output is not written either."""
    from ad_diff.core import safepath

    outfile.protect([])
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    second.write_text(KEEP)
    try:
        outfile.plan([first, second])  # fine now: nothing read yet
        safepath.read_bytes(second, tmp_path, "a file of the run")  # the run reads it
        with pytest.raises(AdDiffError, match=r"b.md: is a file this command read"):
            outfile.write_file(first, b"report\n")
    finally:
        outfile.protect([])  # this process writes more outputs (other tests): forget this command's plan
    assert not first.exists()
    assert second.read_text() == KEEP


@pytest.mark.parametrize("name", ["ad.log", "run.json", "graphs"])
def test_record_never_writes_through_a_planted_link(tmp_path: Path, name: str) -> None:
    """``record --force`` into a folder whose ad.log, run.json or graphs is a link out: exit 2 naming it,
    the target untouched (graphs once ended in exit 3)."""
    import sys

    run, outside = tmp_path / "RUN", tmp_path / "outside"
    run.mkdir()
    outside.mkdir()
    (outside / "victim").write_text(KEEP)
    (run / name).symlink_to(outside if name == "graphs" else outside / "victim")
    res = run_cli("record", run, "--force", "--", sys.executable, "-c", "print('x')")
    _refused(res, run / name, "is a symbolic link; record writes")
    assert (outside / "victim").read_text() == KEEP
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]


def test_record_replaces_a_hard_linked_log_by_name_never_by_content(tmp_path: Path) -> None:
    import sys

    run = tmp_path / "RUN"
    run.mkdir()
    victim = tmp_path / "victim"
    victim.write_text(KEEP)
    (run / "ad.log").hardlink_to(victim)
    res = run_cli("record", run, "--force", "--", sys.executable, "-c", "print('x')")
    assert res.code == 0, res.err
    assert victim.read_text() == KEEP
    assert (run / "ad.log").read_text() == "x\n"
