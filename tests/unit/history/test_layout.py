"""Where the runs are (layouts, links, duplicates) and in which order they ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.errors import InputError, UsageError
from ad_diff.history.layout import find_leaves, natural_key, order_runs
from ad_diff.history.model import OK, LeafMeta


def _touch(p: Path, text: str = "x\n") -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_flat_runs_folders_and_snapshots(tmp_path: Path) -> None:
    _touch(tmp_path / "run-2" / "ad.log")
    _touch(tmp_path / "run-10.yaml")
    _touch(
        tmp_path / "run-1" / "run.json"
    )  # a run folder whose log is missing: still a run (read as an error)
    _touch(tmp_path / "notes.txt")
    layout, leaves, _ = find_leaves(tmp_path)
    assert layout == "flat"
    assert [(lf.run, lf.model, lf.kind) for lf in leaves] == [
        ("run-1", "", "folder"),
        ("run-2", "", "folder"),
        ("run-10", "", "snapshot"),
    ]


def test_model_level_above_the_runs(tmp_path: Path) -> None:
    _touch(tmp_path / "llama" / "r1" / "ad.log")
    _touch(tmp_path / "llama" / "r2.yaml")
    _touch(tmp_path / "qwen" / "r2" / "ad.log")
    layout, leaves, _ = find_leaves(tmp_path)
    assert layout == "model-run"
    assert [(lf.run, lf.model) for lf in leaves] == [("r1", "llama"), ("r2", "llama"), ("r2", "qwen")]


def test_batch_root_per_run(tmp_path: Path) -> None:
    _touch(tmp_path / "2025-01-01" / "llama" / "ad.log")
    _touch(tmp_path / "2025-01-01" / "qwen.yaml")
    layout, leaves, _ = find_leaves(tmp_path, "run-model")
    assert layout == "run-model"
    assert [(lf.run, lf.model) for lf in leaves] == [("2025-01-01", "llama"), ("2025-01-01", "qwen")]


def test_links_and_hidden_entries_are_skipped(tmp_path: Path) -> None:
    _touch(tmp_path / "r1" / "ad.log")
    _touch(tmp_path / ".cache" / "ad.log")
    (tmp_path / "latest").symlink_to(tmp_path / "r1")
    _, leaves, notes = find_leaves(tmp_path)
    assert [lf.run for lf in leaves] == ["r1"]
    assert any("symbolic link" in n and "latest" in n for n in notes)


def test_a_fifo_named_like_a_snapshot_is_named_not_opened(tmp_path: Path) -> None:
    import os

    _touch(tmp_path / "r1" / "ad.log")
    os.mkfifo(tmp_path / "r2.yaml")  # open() on it would block for ever
    _, leaves, notes = find_leaves(tmp_path)
    assert [lf.run for lf in leaves] == ["r1"]
    assert any("r2.yaml" in n and "not a regular file" in n for n in notes)


def test_a_run_twice_is_an_error(tmp_path: Path) -> None:
    _touch(tmp_path / "r1" / "ad.log")
    _touch(tmp_path / "r1.yaml")
    with pytest.raises(InputError, match="are both run 'r1'"):
        find_leaves(tmp_path)


def test_root_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is not a folder"):
        find_leaves(_touch(tmp_path / "f.yaml"))
    with pytest.raises(UsageError, match="--layout"):
        find_leaves(tmp_path, "sideways")


def _meta(started: str | None = None, mtime: int = 0) -> LeafMeta:
    return LeafMeta(OK, started=started, mtime_ns=mtime)


def test_order_by_started_when_every_run_has_it(tmp_path: Path) -> None:
    _touch(tmp_path / "b" / "ad.log")
    _touch(tmp_path / "a" / "ad.log")
    _, leaves, _ = find_leaves(tmp_path)
    metas = [_meta("2025-01-02T00:30:00+00:00"), _meta("2025-01-02T01:00:00+02:00")]  # a, b
    runs, order, _ = order_runs(leaves, metas, "auto")
    assert (runs, order) == (["b", "a"], "started")  # 01:00 at +02:00 is 23:00 UTC the day before
    assert order_runs(leaves, metas, "name")[0] == ["a", "b"]
    runs, order, note = order_runs(leaves, [_meta("2025-01-02T00:00:00"), _meta()], "auto")
    assert (runs, order) == (["a", "b"], "name")
    assert "1 of 2 runs have no run.json" in note
    with pytest.raises(UsageError, match="no readable run.json `started`.*: b"):
        order_runs(leaves, [_meta("2025-01-02T00:00:00"), _meta("not a time")], "started")
    assert order_runs(leaves, [_meta(mtime=5), _meta(mtime=3)], "mtime")[0] == ["b", "a"]


def test_natural_order() -> None:
    assert sorted(["run-10", "run-9", "run-100"], key=natural_key) == ["run-9", "run-10", "run-100"]
