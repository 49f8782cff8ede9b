"""Reading the leaves of a history (ad_diff/history/load.py): snapshots read beneath the history folder and
within a size limit, run.json read defensively, and an unreadable leaf kept as an error row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ad_diff.errors import AdDiffError
from ad_diff.history import load
from ad_diff.history.columns import Columns
from ad_diff.history.model import ERROR, FOLDER, Leaf


def _touch(p: Path, text: str = "x\n") -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_a_snapshot_swapped_for_a_link_or_grown_too_large_is_refused(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing skipped links; a link swapped in before the read is refused by the read itself (no
    following), and so is a snapshot over the size limit (never read whole)."""
    secret = _touch(tmp_path / "outside.yaml", "token: ghp_" + "x" * 36 + "\n")
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "r1.yaml").symlink_to(secret)
    with pytest.raises(AdDiffError, match="r1.yaml: is a symbolic link to a file outside the history folder"):
        load._read_file(tmp_path / "h" / "r1.yaml", tmp_path / "h")
    big = _touch(tmp_path / "h" / "r2.yaml", "a: 1\n" * 10)
    monkeypatch.setattr(load, "SNAPSHOT_LIMIT", 20)
    with pytest.raises(AdDiffError, match="more than the 20 bytes accepted for a snapshot"):
        load._read_file(big, tmp_path / "h")


def test_run_json_fields_of_the_wrong_type_read_as_unknown(tmp_path: Path) -> None:
    _touch(tmp_path / "run.json", json.dumps({"started": 5, "git": {"commit": "abc", "dirty": "yes"}}))
    assert load.run_json(tmp_path) == load.RunJson(started=None, commit="abc", dirty=None)


@pytest.mark.parametrize("text", ["[1, 2]", "{not json", '{"git": 3}'])
def test_a_run_json_that_is_not_an_object_reads_as_unknown(tmp_path: Path, text: str) -> None:
    _touch(tmp_path / "run.json", text)
    assert load.run_json(tmp_path) == load.RunJson()


def test_a_linked_run_json_is_not_read(tmp_path: Path) -> None:
    target = _touch(tmp_path / "elsewhere.json", json.dumps({"started": "2026-01-01T00:00:00"}))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").symlink_to(target)
    assert load.run_json(tmp_path / "run") == load.RunJson()


def test_an_unreadable_folder_is_an_error_leaf_at_its_place_in_time(tmp_path: Path) -> None:
    run = tmp_path / "r1"
    _touch(run / "run.json", json.dumps({"started": "2026-01-02T03:04:05", "git": {"commit": "c0ffee"}}))
    data = load.read_leaf(Columns(), Leaf("r1", "", run, FOLDER), rank=0)
    assert data.meta.status == ERROR
    assert data.meta.detail.startswith(str(run))  # the message names the leaf
    assert (data.meta.started, data.meta.commit) == ("2026-01-02T03:04:05", "c0ffee")
    assert data.rows == b""
