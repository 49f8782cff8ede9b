"""The identity of the runs (issue 27, part 5): two arguments naming one folder are a usage error; candidate
files that are the baseline's own are a gating ADI007; a run compared with itself never passes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ad_diff import gate, pipeline
from ad_diff.discover.identity import shared_files
from ad_diff.errors import AdDiffError, UsageError
from ad_diff.settings import Settings
from tests.conftest import make_run, v3

LOG = "".join(v3("pattern_matcher", t, "matches=2") for t in ("match_rope_pattern", "match_swiglu_pattern"))


def _base(tmp_path: Path) -> Path:
    base = make_run(tmp_path / "runs" / "base", LOG)
    (base / "graphs").mkdir()
    (base / "config").mkdir()
    (base / "config" / "model.yaml").write_text("transforms:\n  match_rope_pattern:\n    enabled: true\n")
    return base


#: Ways to name the baseline folder again, as the candidate argument.
SAME_FOLDER: dict[str, Callable[[Path], Path]] = {
    "same path": lambda b: b,
    "trailing slash": lambda b: Path(str(b) + os.sep),
    "dot-dot path": lambda b: b / ".." / b.name,
    "dot path": lambda b: b / ".",
    "symbolic link to it": lambda b: _link(b.parent / "cand", b),
    "relative symbolic link": lambda b: _link(b.parent / "cand", Path(b.name)),
    "link to a link": lambda b: _link(b.parent / "cand2", _link(b.parent / "cand", b)),
}


def _link(at: Path, to: Path) -> Path:
    at.symlink_to(to, target_is_directory=True)
    return at


@pytest.mark.parametrize("how", sorted(SAME_FOLDER))
def test_the_same_folder_twice_is_a_usage_error(tmp_path: Path, how: str) -> None:
    base = _base(tmp_path)
    cand = SAME_FOLDER[how](base)
    with pytest.raises(UsageError, match="are the same folder"):
        pipeline.run(Settings(baseline=base, candidate=cand))


def _copy(base: Path) -> Path:
    cand = base.parent / "cand"
    shutil.copytree(base, cand, symlinks=True)
    return cand


def _hard_linked_log(base: Path) -> tuple[Path, str]:
    cand = _copy(base)
    (cand / "ad.log").unlink()
    os.link(base / "ad.log", cand / "ad.log")
    return cand, "ad.log (the same file as the baseline's ad.log)"


def _linked_graphs(base: Path) -> tuple[Path, str]:
    cand = _copy(base)
    shutil.rmtree(cand / "graphs")
    (cand / "graphs").symlink_to(base / "graphs", target_is_directory=True)
    return cand, "graphs (a symbolic link to the baseline's graphs)"


def _both_link_one_file(base: Path) -> tuple[Path, str]:
    store = base.parent / "store.yaml"
    shutil.move(base / "config" / "model.yaml", store)
    (base / "config" / "model.yaml").symlink_to(store)
    cand = _copy(base)
    return cand, "config/model.yaml (the same file as the baseline's config/model.yaml)"


#: Ways a candidate folder can hold baseline files, and the words the finding names each with.
SHARED: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "hard-linked log": _hard_linked_log,
    "graphs/ linked to the baseline's": _linked_graphs,
    "both runs link one config file": _both_link_one_file,
}


@pytest.mark.parametrize("how", sorted(SHARED))
def test_candidate_files_that_are_baseline_files_never_pass(tmp_path: Path, how: str) -> None:
    base = _base(tmp_path)
    cand, named = SHARED[how](base)
    assert [s.describe() for s in shared_files(base, cand)] == [named]
    try:
        result = pipeline.run(Settings(baseline=base, candidate=cand))
    except AdDiffError:
        return  # a reader refused the link (exit 2): not a pass either
    [f] = [f for f in result.findings if f.code == "ADI007"]
    assert named in f.message
    assert gate.decide(result.findings, "error").exit_code == gate.EXIT_REGRESSION


def test_a_log_given_from_the_baseline_folder_is_named(tmp_path: Path) -> None:
    base = _base(tmp_path)
    cand = _copy(base)
    result = pipeline.run(Settings(baseline=base, candidate=cand, candidate_log=(base / "ad.log",)))
    [f] = [f for f in result.findings if f.code == "ADI007"]
    assert f"{base / 'ad.log'} (a path to the baseline's ad.log)" in f.message
    assert not gate.decide(result.findings, "error")


def test_a_copy_and_a_shared_reference_are_no_finding(tmp_path: Path) -> None:
    base = _base(tmp_path)
    ref = base / "tensors" / "reference"
    ref.mkdir(parents=True)
    (ref / "logits.safetensors").write_bytes(b"x")
    cand = _copy(base)
    shutil.rmtree(cand / "tensors" / "reference")
    (cand / "tensors" / "reference").mkdir()
    os.link(ref / "logits.safetensors", cand / "tensors" / "reference" / "logits.safetensors")
    assert shared_files(base, cand) == []


def test_a_snapshot_baseline_is_not_walked(tmp_path: Path) -> None:
    base = _base(tmp_path)
    snap = tmp_path / "golden.yaml"
    snap.write_text("x: 1\n")
    assert shared_files(snap, base) == []


def test_cli_says_so_and_exits_2(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    base = _base(tmp_path)
    r = run_cli(base, str(base) + "/")
    assert r.code == 2
    assert "are the same folder" in r.err
    assert "Traceback" not in r.err
