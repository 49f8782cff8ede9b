"""run_history on generated histories: the steps found are exactly the ones put in, and nothing else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ad_diff.core.model import State
from ad_diff.errors import InputError, UsageError
from ad_diff.history import HistoryOptions, run_history
from ad_diff.history.model import Value
from tests.unit.history.scenario import Event, make_history, run_name, scenario


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scenario(tmp_path_factory.mktemp("history") / "nightly")


def _steps(h):  # noqa: ANN001, ANN202
    return [
        (s.model, s.transform, s.change, s.category, s.last_before, s.first_after, s.confirmed, s.gates)
        for s in h.steps
    ]


def test_scenario_steps_exactly(snapshots: Path) -> None:
    h = run_history(snapshots)
    assert h.layout == "model-run"
    assert h.order == "name"
    assert _steps(h) == [
        ("llama", "fuse_moe", "8 -> 0", "collapse", "run-039", "run-040", "run-041", True),
        (
            "mixtral",
            "match_rmsnorm_pattern",
            "10 -> 8",
            "partial_loss",
            "run-079",
            "run-080",
            "run-081",
            True,
        ),
        ("mixtral", "fuse_gemms", "0 -> 6", "new_matches", "run-099", "run-100", "run-101", False),
    ]
    assert [s.codes for s in h.steps] == [("ADL001",), ("ADL002",), ("ADL008",)]
    assert h.pending == ()
    [flaky] = h.flaky
    assert (flaky.model, flaky.transform, flaky.value) == (
        "llama",
        "fuse_allreduce_residual_rmsnorm",
        Value(State.APPLIED, 4),
    )
    assert [(d.run, d.value.matches) for d in flaky.deviations] == [
        ("run-020", 3),
        ("run-055", 0),
        ("run-090", 3),
    ]
    # qwen was added at run 60: its earlier runs are not read as changes
    models = {m.name: m for m in h.models}
    assert (models["qwen"].first_run, models["qwen"].runs) == ("run-060", 60)
    assert models["llama"].first_run == "run-000"
    assert not any(m.stale for m in h.models)
    assert h.problems == ()
    assert h.exit_code == 1
    assert h.verdict.verdict == "fail"
    assert h.stats == {"leaves": 300, "read": 300, "cached": 0, "cells": 3600}


def test_table_is_long_and_complete(snapshots: Path) -> None:
    t = run_history(snapshots).table
    assert t is not None
    assert len(t) == 300 * 12
    assert list(t.columns[:8]) == [
        "run",
        "run_index",
        "model",
        "stage",
        "transform",
        "occurrence",
        "state",
        "count",
    ]
    moe = t[(t["model"] == "llama") & (t["transform"] == "fuse_moe")].sort_values("run_index")
    assert moe["count"].tolist() == [8] * 40 + [0] * 80
    assert set(t[t["model"] == "qwen"]["run_index"]) == set(range(60, 120))


@pytest.mark.parametrize(
    ("fail_on", "since", "code"),
    [
        ("error", None, 1),
        ("collapse", None, 1),
        ("never", None, 0),
        ("error", "run-045", 1),  # the partial loss at 80 still gates
        ("collapse", "run-045", 0),  # the collapse at 40 is older than --since
        ("error", "run-041", 1),  # the collapse became known (held 2 runs) in run-041
        ("collapse", "run-042", 0),
        ("error", "run-082", 0),  # new matches at 100 never gate
    ],
)
def test_gate_options(snapshots: Path, fail_on: str, since: str | None, code: int) -> None:
    h = run_history(snapshots, HistoryOptions(fail_on=fail_on, since=since))
    assert h.exit_code == code
    assert len(h.steps) == 3  # --since limits the gate, not what is reported


def test_min_run(snapshots: Path) -> None:
    h3 = run_history(snapshots, HistoryOptions(min_run=3))
    assert [s.confirmed for s in h3.steps] == ["run-042", "run-082", "run-102"]
    h1 = run_history(snapshots, HistoryOptions(min_run=1))
    blips = [s for s in h1.steps if s.transform == "fuse_allreduce_residual_rmsnorm"]
    assert [(s.first_after, s.change) for s in blips] == [
        ("run-020", "4 -> 3"),
        ("run-021", "3 -> 4"),
        ("run-055", "4 -> 0"),
        ("run-056", "0 -> 4"),
        ("run-090", "4 -> 3"),
        ("run-091", "3 -> 4"),
    ]
    assert h1.flaky == ()


def test_ignore_transform(snapshots: Path) -> None:
    h = run_history(snapshots, HistoryOptions(ignore_transforms=("fuse_*",)))
    assert [s.transform for s in h.steps] == ["match_rmsnorm_pattern"]
    assert h.flaky == ()


def test_pending_change_at_the_end(tmp_path: Path) -> None:
    make_history(
        tmp_path / "h",
        runs=10,
        models=["m"],
        n_transforms=8,
        events=[Event("m", "fuse_moe", 0, 8), Event("m", "fuse_moe", 9, 2)],
    )
    h = run_history(tmp_path / "h")
    assert h.steps == ()
    assert h.exit_code == 0
    [p] = h.pending
    assert (p.kind, p.change, p.last_before, p.first_after, p.held, p.confirmed) == (
        "pending",
        "8 -> 2",
        "run-008",
        "run-009",
        1,
        None,
    )
    assert p.category == "collapse"
    assert p.gating
    assert not p.gates
    assert h.current["m"][(p.stage, "fuse_moe", 0)].mark == "pending"
    assert run_history(tmp_path / "h", HistoryOptions(min_run=1)).exit_code == 1


def test_unsettled_runs_between_two_values(tmp_path: Path) -> None:
    make_history(
        tmp_path / "h",
        runs=12,
        models=["m"],
        n_transforms=8,
        events=[
            Event("m", "fuse_moe", 0, 8),
            Event("m", "fuse_moe", 5, 5, runs=1),
            Event("m", "fuse_moe", 6, 0),
        ],
    )
    [s] = run_history(tmp_path / "h").steps
    assert (s.change, s.last_before, s.first_after, s.confirmed) == (
        "8 -> 0",
        "run-004",
        "run-005",
        "run-007",
    )
    assert [(v.run, v.value.text()) for v in s.via] == [("run-005", "5")]


def test_transform_disappearing_and_state_changes(tmp_path: Path) -> None:
    make_history(
        tmp_path / "h",
        runs=8,
        models=["m"],
        n_transforms=10,
        events=[
            Event("m", "fuse_moe", 0, 8),
            Event("m", "fuse_moe", 4, None, state="absent"),
            Event("m", "fuse_gemms", 0, 3),
            Event("m", "fuse_gemms", 3, None, state="skipped"),
            Event("m", "match_rope_pattern", 0, None, state="disabled"),
            Event("m", "match_rope_pattern", 5, None, state="skipped"),
        ],
    )
    h = run_history(tmp_path / "h")
    got = {s.transform: (s.change, s.category, s.codes, s.gating) for s in h.steps}
    assert got == {
        "fuse_moe": ("8 -> absent", "collapse", ("ADL003",), True),
        "fuse_gemms": ("3 -> skipped", "collapse", ("ADL003",), True),
        "match_rope_pattern": ("disabled -> skipped", "state_change", ("ADL005",), False),
    }


def test_folder_history_broken_halfway(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    make_history(
        root,
        runs=10,
        models=["m"],
        n_transforms=8,
        kind="folder",
        layout="flat",
        events=[Event("m", "fuse_moe", 0, 8), Event("m", "fuse_moe", 6, 0)],
    )
    cut = root / "run-005" / "ad.log"  # the run stopped halfway: its log ends inside a line
    text = cut.read_text()
    cut.write_text(text[: len(text) // 2])
    (root / "run-007" / "ad.log").write_bytes(b"\x00\x01binary garbage\x00" * 100)
    h = run_history(root)
    assert h.order == "started"
    assert h.runs[0].commit is not None
    assert [(p.run, p.status) for p in h.problems] == [("run-005", "incomplete"), ("run-007", "error")]
    assert "truncated" in h.problems[0].detail
    assert "run-007/ad.log: looks binary" in h.problems[1].detail
    # the other runs are still read; the broken ones are gaps, not changes
    assert h.stats["leaves"] == 10
    [s] = h.steps
    assert (s.change, s.last_before, s.first_after, s.confirmed) == (
        "8 -> 0",
        "run-004",
        "run-006",
        "run-008",
    )
    assert s.commit_before is not None
    assert s.commit_before != s.commit_after
    assert h.exit_code == 2  # an unreadable run inside the gate window
    assert run_history(root, HistoryOptions(since="run-008")).exit_code == 1
    assert run_history(root, HistoryOptions(since="run-009")).exit_code == 0
    assert run_history(root, HistoryOptions(since="run-006", fail_on="never")).exit_code == 2


def test_incomplete_run_gates_like_compare(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    make_history(root, runs=4, models=["m"], n_transforms=6, kind="folder", layout="flat")
    with (root / "run-003" / "ad.log").open("a") as fh:
        fh.write(
            'Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: CUDA out of memory\n'
        )
    h = run_history(root)
    assert [(p.run, p.status) for p in h.problems] == [("run-003", "incomplete")]
    assert h.exit_code == 1
    assert [f.code for f in h.verdict.gated] == ["ADL009"]
    assert run_history(root, HistoryOptions(fail_on="never")).exit_code == 0


def test_run_model_layout_and_order_mtime(tmp_path: Path) -> None:
    by_model = tmp_path / "by_model"
    make_history(
        by_model,
        runs=6,
        models=["a", "b"],
        n_transforms=8,
        events=[Event("b", "fuse_moe", 0, 4), Event("b", "fuse_moe", 3, 1)],
    )
    by_run = tmp_path / "by_run"
    for model_dir in by_model.iterdir():
        for f in model_dir.iterdir():
            (by_run / f.stem).mkdir(parents=True, exist_ok=True)
            shutil.copy(f, by_run / f.stem / f"{model_dir.name}.yaml")
    h = run_history(by_run, HistoryOptions(layout="run-model"))
    assert [(s.model, s.change, s.first_after) for s in h.steps] == [("b", "4 -> 1", "run-003")]
    assert [r.models for r in h.runs] == [2] * 6
    import os

    for i, name in enumerate(reversed([run_name(i, 6) for i in range(6)])):  # newest name is oldest file
        for leaf in (by_run / name).iterdir():
            os.utime(leaf, ns=(10**18 + i, 10**18 + i))
    h = run_history(by_run, HistoryOptions(layout="run-model", order="mtime"))
    assert [r.name for r in h.runs] == [run_name(i, 6) for i in reversed(range(6))]
    assert [s.change for s in h.steps] == ["1 -> 4"]


def test_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        run_history(tmp_path / "nope")
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "ad.log").write_text("x\n")
    with pytest.raises(InputError, match="single run folder"):
        run_history(tmp_path / "one")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no run"):
        run_history(tmp_path / "empty")
    make_history(tmp_path / "h", runs=3, models=["m"], n_transforms=4, layout="flat")
    with pytest.raises(UsageError, match="--since 'run-9' is not a run"):
        run_history(tmp_path / "h", HistoryOptions(since="run-9"))
    with pytest.raises(UsageError, match="--min-run"):
        run_history(tmp_path / "h", HistoryOptions(min_run=0))
    with pytest.raises(UsageError, match="no readable run.json"):
        run_history(tmp_path / "h", HistoryOptions(order="started"))


def test_every_run_unreadable_is_reported_not_crashed(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / "h" / f"r{i}").mkdir(parents=True)
        (tmp_path / "h" / f"r{i}" / "run.json").write_text("{}")
    h = run_history(tmp_path / "h")
    assert [p.status for p in h.problems] == ["error"] * 3
    assert "no *.log" in h.problems[0].detail
    assert h.steps == ()
    assert h.exit_code == 2
    assert h.stats["cells"] == 0
