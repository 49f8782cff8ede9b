"""`ad-diff candidates` (and `note`, which scans through it) reads dumps only inside the run folder
(issue 14): a dump linked out, a FIFO, a linked graphs/ folder is refused by name, never read, never
echoed; a refused dump that is not the one scanned is named in the notes. `--trtllm-src` stays inside the
tree it names."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_cli
from tests.unit.candidates.conftest import AD, fake_tree

CANARY = "outside_canary_c4nd"
"""A name only files outside the run folder hold: in any output, it means one was read."""
TOKEN = "ghp_" + "Q7" * 18
FINAL = "026_compile_compile_model.txt"


def _run(tmp: Path) -> Path:
    """A copy of the committed ``unfused`` run (one dump, ``026_compile_compile_model.txt``: rmsnorm x4)."""
    run = tmp / "run"
    shutil.copytree(FIXTURES / "candidates" / "unfused", run)
    return run


def _outside(tmp: Path, name: str = "dump.txt", text: str | None = None) -> Path:
    """A dump outside the run folder whose nodes are named :data:`CANARY` (read, it would show up)."""
    p = tmp / "outside" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    src = (FIXTURES / "candidates" / "unfused" / "graphs" / FINAL).read_text()
    p.write_text(src.replace("%mul", f"%{CANARY}") if text is None else text)
    return p


def _link(link: Path, target: Path) -> None:
    link.symlink_to(os.path.relpath(target, link.parent))


def _clean(res) -> None:  # noqa: ANN001 - CliResult
    everything = res.out + res.err
    assert "Traceback" not in everything
    assert CANARY not in everything
    assert TOKEN not in everything


def test_final_dump_linked_out_is_refused_by_name(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _link(run / "graphs" / "027_compile_late.txt", _outside(tmp_path))
    res = run_cli("candidates", run, "-f", "json")
    assert res.code == 2, res.err
    assert res.err.startswith(f"ad-diff: error: {run}/graphs/027_compile_late.txt: is a symbolic link to a "
                              f"file outside the run folder {run}")
    assert "it is the final dump, the one `ad-diff candidates` scans" in res.err
    _clean(res)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_final_dump_fifo_is_refused_not_opened(tmp_path: Path) -> None:
    run = _run(tmp_path)
    os.mkfifo(run / "graphs" / "027_compile_late.txt")  # once silently dropped: the 026 dump was scanned
    res = run_cli("candidates", run, "-f", "json")
    assert res.code == 2
    assert f"{run}/graphs/027_compile_late.txt: is not a regular file; expected a graph dump" in res.err
    _clean(res)


def test_linked_out_dump_with_a_bad_line_is_never_quoted(tmp_path: Path) -> None:
    run = _run(tmp_path)
    bad = f"# Transform: compile_model\n# Stage: compile\n{TOKEN} = not an SSA line\n"
    (run / "graphs" / FINAL).unlink()
    _link(run / "graphs" / FINAL, _outside(tmp_path, text=bad))  # its parse error once quoted the line
    res = run_cli("candidates", run, "-f", "text")
    assert res.code == 2
    assert f"{run}/graphs/{FINAL}: is a symbolic link to a file outside the run folder" in res.err
    _clean(res)


def test_refused_dump_before_the_final_one_is_a_note(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _link(run / "graphs" / "001_export_export_to_gm.txt", _outside(tmp_path))
    if hasattr(os, "mkfifo"):
        os.mkfifo(run / "graphs" / "002_export_cleanup.txt")
    res = run_cli("candidates", run, "-f", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["dump"] == f"{run}/graphs/{FINAL}"
    assert "rmsnorm" in {c["family"] for c in data["candidates"]}
    assert (f"not read (not the dump scanned): {run}/graphs/001_export_export_to_gm.txt: is a symbolic link "
            f"to a file outside the run folder {run}") in data["notes"][-2 if hasattr(os, "mkfifo") else -1]
    if hasattr(os, "mkfifo"):
        assert data["notes"][-1] == (f"not read (not the dump scanned): {run}/graphs/002_export_cleanup.txt: "
                                     "is not a regular file")
    _clean(res)
    md = run_cli("candidates", run, "-f", "markdown")  # the notes show in every view
    assert md.code == 0
    assert "001_export_export_to_gm.txt: is a symbolic link" in md.out


def test_transform_option_refuses_a_later_refused_dump(tmp_path: Path) -> None:
    run = _run(tmp_path)
    _link(run / "graphs" / "030_compile_late.txt", _outside(tmp_path))  # its header is never read
    res = run_cli("candidates", run, "--transform", "compile_model", "-f", "json")
    assert res.code == 2
    assert f"{run}/graphs/030_compile_late.txt: is a symbolic link to a file outside the run" in res.err
    assert "may be the last dump written after transform 'compile_model' (its header is not read)" in res.err
    _clean(res)
    (run / "graphs" / "030_compile_late.txt").rename(run / "graphs" / "001_export_early.txt")
    ok = run_cli("candidates", run, "--transform", "compile_model", "-f", "json")
    assert ok.code == 0, ok.err  # a refused dump before the one asked for cannot be it: a note
    assert any("001_export_early.txt" in n for n in json.loads(ok.out)["notes"])
    _clean(ok)


def test_linked_out_graphs_folder_is_refused(tmp_path: Path) -> None:
    run = _run(tmp_path)
    away = tmp_path / "outside" / "graphs"
    _outside(tmp_path, f"graphs/{FINAL}")
    shutil.rmtree(run / "graphs")
    _link(run / "graphs", away)
    res = run_cli("candidates", run)
    assert res.code == 2
    assert f"{run}/graphs/{FINAL}: resolves to a file outside the run folder {run}" in res.err
    _clean(res)


def test_note_names_the_refused_final_dump(tmp_path: Path) -> None:
    base = _run(tmp_path / "b")
    cand = _run(tmp_path / "c")
    _link(cand / "graphs" / "027_compile_late.txt", _outside(tmp_path))
    res = run_cli("note", base, cand, "--candidate", "rmsnorm", "-f", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["validation"]["candidate_dump"] is None
    assert any(n.startswith(f"candidate graph not scanned: {cand}/graphs/027_compile_late.txt: is a symbolic "
                            "link to a file outside the run folder") for n in data["notes"])
    _clean(res)


def test_trtllm_src_whose_package_links_out_is_refused(tmp_path: Path) -> None:
    elsewhere = fake_tree(tmp_path / "elsewhere", with_rmsnorm=True)
    (elsewhere / AD / "custom_ops" / "x.py").write_text(
        f'@torch.library.custom_op("auto_deploy::{CANARY}", mutates_args=())\ndef f(x):\n    pass\n')
    src = tmp_path / "src"
    src.mkdir()
    _link(src / "tensorrt_llm", elsewhere / "tensorrt_llm")
    res = run_cli("candidates", _run(tmp_path), "--trtllm-src", src, "-f", "json")
    assert res.code == 2
    assert (f"{src}/{AD}: resolves to a folder outside --trtllm-src {src}; refusing to read it (pass the "
            "folder it points to as --trtllm-src instead)") in res.err
    _clean(res)
    ok = run_cli("candidates", _run(tmp_path / "again"), "--trtllm-src", elsewhere, "-f", "json")
    assert ok.code == 0, ok.err  # named directly, the same tree is read
    assert json.loads(ok.out)["lookup_done"] is True
