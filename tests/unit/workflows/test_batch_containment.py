"""`ad-diff batch` reads a model only inside its root (issue 14): a model folder or snapshot that links
outside the root, a FIFO or a broken link named like a model is that model's error row naming the entry
(exit 2), never read and never left out (a dropped model would let the batch pass with fewer models)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ad_diff.settings import Settings
from ad_diff.workflows.batch import pair, run_batch
from tests.ci_runs import BASE_LOG
from tests.conftest import make_run, v3

CANARY = "outside_canary_b4tch"
"""A transform only runs outside the roots hold: in any output, one of them was read."""


def _settings(name: str, b: Path, c: Path) -> Settings:
    return Settings(b, c)


def _roots(tmp: Path) -> tuple[Path, Path]:
    """Two roots with model ``ok`` in both, and a run outside both whose log names :data:`CANARY`."""
    b, c = tmp / "base", tmp / "cand"
    make_run(b / "ok", BASE_LOG)
    make_run(c / "ok", BASE_LOG)
    make_run(tmp / "outside" / "run", BASE_LOG + v3("compile", CANARY, "matches=1"))
    return b, c


def _link(link: Path, target: Path) -> None:
    link.symlink_to(os.path.relpath(target, link.parent))


def _rows(b: Path, c: Path, jobs: int = 1) -> dict[str, tuple[str, str | None]]:
    res = run_batch(b, c, _settings, jobs=jobs)
    assert res.exit_code == 2
    return {m.name: (m.status, m.error) for m in res.models}


@pytest.mark.parametrize("jobs", [1, 2])
def test_model_folder_linked_out_of_its_root_is_an_error_row(tmp_path: Path, jobs: int) -> None:
    b, c = _roots(tmp_path)
    make_run(b / "far", BASE_LOG)
    _link(c / "far", tmp_path / "outside" / "run")  # once compared as the model's run
    rows = _rows(b, c, jobs)
    assert rows["ok"] == ("pass", None)
    assert rows["far"] == ("error", f"{c}/far: is a symbolic link to a folder outside the batch root {c}; "
                                    "refusing to read it (copy the folder into the batch root instead of "
                                    "linking it); expected a run folder (one per model)")


def test_model_folder_linked_inside_its_root_is_compared(tmp_path: Path) -> None:
    b, c = _roots(tmp_path)
    make_run(c / "store" / "near", BASE_LOG)  # `store` itself is a model folder without a log: error
    make_run(b / "near", BASE_LOG)
    _link(c / "near", c / "store" / "near")
    res = run_batch(b, c, _settings)
    rows = {m.name: m.status for m in res.models}
    assert rows["near"] == "pass"
    assert res.candidate_only == ("store",)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_fifo_named_like_a_model_is_an_error_row(tmp_path: Path) -> None:
    b, c = _roots(tmp_path)
    make_run(b / "piped", BASE_LOG)
    os.mkfifo(c / "piped")  # once left out: "baseline only"
    os.mkfifo(b / "snap.yaml")  # once left out: the batch passed without it
    make_run(c / "snap", BASE_LOG)
    pairs, b_only, c_only, refused = pair(b, c)
    assert ([n for n, _, _ in pairs], b_only, c_only) == (["ok"], [], [])
    assert refused == {
        "piped": f"{c}/piped: is not a folder or a regular file (a FIFO, socket or device); refusing to open "
                 "it; expected a run folder (one per model)",
        "snap": f"{b}/snap.yaml: is not a folder or a regular file (a FIFO, socket or device); refusing to "
                "open it; expected a run folder (one per model) or a <model>.yaml snapshot",
    }
    rows = _rows(b, c)
    assert rows["piped"][0] == rows["snap"][0] == "error"


def test_broken_link_named_like_a_model_is_an_error_row(tmp_path: Path) -> None:
    b, c = _roots(tmp_path)
    make_run(b / "gone", BASE_LOG)
    (c / "gone").symlink_to(tmp_path / "nowhere")
    assert _rows(b, c)["gone"] == ("error", f"{c}/gone: is a broken symbolic link (it points nowhere); "
                                            "expected a run folder (one per model)")


def test_snapshot_linked_out_of_its_root_is_refused_unread(tmp_path: Path, cli) -> None:
    b, c = _roots(tmp_path)
    snap = tmp_path / "outside" / "snap.yaml"
    assert cli("snapshot", tmp_path / "outside" / "run", "-o", snap).code == 0  # holds the CANARY transform
    _link(b / "m.yaml", snap)
    make_run(c / "m", BASE_LOG)
    out = tmp_path / "out"
    res = cli("batch", b, c, "--json", out / "r.json", "--markdown", out / "r.md", "--junit", out / "r.xml")
    assert res.code == 2, res.err
    rows = {m["name"]: m for m in json.loads((out / "r.json").read_text())["models"]}
    assert rows["m"]["status"] == "error"
    assert rows["m"]["error"].startswith(f"{b}/m.yaml: is a symbolic link to a file outside the batch "
                                         f"root {b}")
    everything = res.out + res.err + "".join(p.read_text() for p in sorted(out.iterdir()))
    assert CANARY not in everything
    assert "Traceback" not in everything


def test_other_files_are_still_no_models(tmp_path: Path) -> None:
    b, c = _roots(tmp_path)
    (c / "README.md").write_text("notes")
    _link(c / "notes.txt", tmp_path / "outside" / "run" / "ad.log")  # no model, so never read
    (c / "cand.yaml").write_text("not a model in the candidate root")
    pairs, b_only, c_only, refused = pair(b, c)
    assert ([n for n, _, _ in pairs], b_only, c_only, refused) == (["ok"], [], [], {})
