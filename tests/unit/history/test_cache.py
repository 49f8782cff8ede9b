"""--cache: a re-run reads only new or changed runs and finds the same steps as a cold read."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

from ad_diff.history import HistoryOptions, run_history
from ad_diff.history.cache import CACHE_SCHEMA
from ad_diff.history.columns import ROW
from tests.unit.history.scenario import Event, make_history

EVENTS = [Event("a", "fuse_moe", 0, 8), Event("a", "fuse_moe", 10, 2), Event("b", "fuse_gemms", 0, 1)]


def _make(root: Path, kind: str = "snapshot") -> Path:
    make_history(root, runs=20, models=["a", "b"], n_transforms=10, events=EVENTS, kind=kind)
    return root


def _summary(h):  # noqa: ANN001, ANN202
    return [(s.model, s.transform, s.change, s.first_after) for s in h.steps], len(h.table)


def test_rerun_reads_only_new_and_changed_runs(tmp_path: Path) -> None:
    root = _make(tmp_path / "h")
    cache = tmp_path / "cache" / "history.json"
    cold = run_history(root)
    first = run_history(root, HistoryOptions(cache=cache))
    assert first.stats == {"leaves": 40, "read": 40, "cached": 0, "cells": 400}
    assert any("created" in n for n in first.notes)
    again = run_history(root, HistoryOptions(cache=cache))
    assert (again.stats["read"], again.stats["cached"]) == (0, 40)
    assert _summary(again) == _summary(first) == _summary(cold)
    assert again.table is not None
    assert cold.table is not None
    assert again.table["count"].tolist() == cold.table["count"].tolist()
    for model in ("a", "b"):  # a new nightly run
        shutil.copy(root / model / "run-019.yaml", root / model / "run-020.yaml")
    new = run_history(root, HistoryOptions(cache=cache))
    assert (new.stats["read"], new.stats["cached"]) == (2, 40)
    changed = root / "b" / "run-005.yaml"
    changed.write_text(
        changed.read_text().replace(
            "transform: fuse_gemms, state: applied, matches: 1",
            "transform: fuse_gemms, state: applied, matches: 9",
        )
    )
    edited = run_history(root, HistoryOptions(cache=cache))
    assert (edited.stats["read"], edited.stats["cached"]) == (1, 41)
    assert [(f.model, f.transform, [d.run for d in f.deviations]) for f in edited.flaky] == [
        ("b", "fuse_gemms", ["run-005"])
    ]


def test_folder_runs_are_cached_with_their_run_json(tmp_path: Path) -> None:
    root = _make(tmp_path / "h", kind="folder")
    cache = tmp_path / "c.json"
    first = run_history(root, HistoryOptions(cache=cache))
    again = run_history(root, HistoryOptions(cache=cache))
    assert again.stats["read"] == 0
    assert again.order == "started"
    assert [r.commit for r in again.runs] == [r.commit for r in first.runs]
    assert again.runs[0].commit
    run_json = root / "a" / "run-003" / "run.json"
    run_json.write_text(run_json.read_text().replace('"dirty": false', '"dirty": true '))
    assert run_history(root, HistoryOptions(cache=cache)).stats["read"] == 1


def test_unreadable_runs_are_not_cached(tmp_path: Path) -> None:
    root = _make(tmp_path / "h")
    (root / "a" / "run-007.yaml").write_text("ad_diff_snapshot: 1\ntransforms: []\n")
    cache = tmp_path / "c.json"
    run_history(root, HistoryOptions(cache=cache))
    h = run_history(root, HistoryOptions(cache=cache))
    assert h.stats["read"] == 1
    assert [p.run for p in h.problems] == ["run-007"]
    assert "`transforms` must be a non-empty list" in h.problems[0].detail


def test_a_cache_that_does_not_fit_is_rebuilt(tmp_path: Path) -> None:
    root = _make(tmp_path / "h")
    cache = tmp_path / "c.json"
    run_history(root, HistoryOptions(cache=cache))
    assert run_history(root, HistoryOptions(cache=cache, rank=1)).stats["read"] == 40
    assert run_history(root, HistoryOptions(cache=cache, rank=1)).stats["read"] == 0
    data = json.loads(cache.read_text())
    blob = next(iter(data["entries"].values()))["rows"]
    data["blobs"][blob] = base64.b64encode(ROW.pack(0, 0, 0, 99, 0)).decode()  # 99 is no state: read again
    users = sum(e["rows"] == blob for e in data["entries"].values())
    cache.write_text(json.dumps(data))
    assert 0 < users == run_history(root, HistoryOptions(cache=cache, rank=1)).stats["read"]
    data["blobs"][blob] = "not base64!"
    cache.write_text(json.dumps(data))
    assert run_history(root, HistoryOptions(cache=cache, rank=1)).stats["read"] == users
    cache.write_text("{not json")
    h = run_history(root, HistoryOptions(cache=cache, rank=1))
    assert h.stats["read"] == 40
    assert any("could not be read" in n for n in h.notes)
    assert json.loads(cache.read_text())["ad_diff_history_cache"] == CACHE_SCHEMA
