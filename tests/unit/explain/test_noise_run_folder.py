"""The run folder's own path in a log line or run.json reads ``<run>``: both spellings (as given and
resolved, one possibly inside the other), the same whatever the hash seed, and resolved once per run rather
than once per line."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.explain.accounting import noise


def test_both_spellings_read_run_and_the_longer_goes_first(tmp_path: Path) -> None:
    real = tmp_path / "runs" / "baseline"
    real.mkdir(parents=True)
    (tmp_path / "b").symlink_to(real)
    root = tmp_path / "b"  # as given; resolved it is .../runs/baseline
    line = f"dumping to {real}/graphs and {root}/graphs"
    assert noise.run_folder(line, root) == "dumping to <run>/graphs and <run>/graphs"


def test_nested_spellings_are_replaced_longest_first(tmp_path: Path) -> None:
    real = tmp_path / "run"
    real.mkdir()
    (real / "self").symlink_to(real)
    root = real / "self"  # resolved, it is ``real``: a prefix of the spelling as given
    assert noise.run_folder(f"at {root}/ad.log and {real}/x", root) == "at <run>/ad.log and <run>/x"


def test_the_folder_is_resolved_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real_resolve = Path.resolve

    def counting(self: Path, strict: bool = False) -> Path:
        calls.append(self)
        return real_resolve(self, strict)

    noise._spellings.cache_clear()
    monkeypatch.setattr(Path, "resolve", counting)
    for i in range(1000):
        noise.run_folder(f"line {i} {tmp_path}", tmp_path)
    assert len(calls) == 1
