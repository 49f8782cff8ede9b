"""Transform-level pairing of dump folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.discover.dumps import list_dumps
from ad_diff.errors import InputError
from ad_diff.kinds.graph.pair import pair_dumps


def write(folder: Path, items: list[tuple[int, str, str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n, stage, t in items:
        text = f"# Transform: {t}\n# Stage: {stage}\n\noutput\n"
        (folder / f"{n:03d}_{stage}_{t}.txt").write_text(text, "utf-8")


def test_pairs_by_key_and_occurrence_not_counter(tmp_path: Path) -> None:
    write(tmp_path / "b", [(1, "export", "export_to_gm"), (2, "post_export", "cleanup"),
                           (3, "post_export", "cleanup")])
    write(tmp_path / "c", [(1, "export", "export_to_gm"), (2, "post_export", "new_pass"),
                           (3, "post_export", "cleanup"), (4, "post_export", "cleanup")])
    (tmp_path / "c" / "notes.txt").write_text("x", "utf-8")
    rb, _ = list_dumps(tmp_path / "b")
    rc, notes = list_dumps(tmp_path / "c")
    assert [r.occurrence for r in rc] == [0, 0, 0, 1]
    assert any("notes.txt" in n for n in notes)
    pairs = pair_dumps(rb, rc)
    got = [(p.key, p.baseline.counter if p.baseline else None, p.candidate.counter if p.candidate else None)
           for p in pairs]
    assert got == [
        ("export/export_to_gm", 1, 1),
        ("post_export/new_pass", None, 2),
        ("post_export/cleanup", 2, 3),
        ("post_export/cleanup#1", 3, 4),
    ]


def test_numeric_order_beyond_999(tmp_path: Path) -> None:
    write(tmp_path, [(999, "compile", "a"), (1000, "compile", "b")])
    refs, _ = list_dumps(tmp_path)
    assert [r.transform for r in refs] == ["a", "b"]


def test_moved_transform_is_still_paired(tmp_path: Path) -> None:
    write(tmp_path / "b", [(1, "s", "a"), (2, "s", "b"), (3, "s", "c")])
    write(tmp_path / "c", [(1, "s", "c"), (2, "s", "a"), (3, "s", "b")])
    pairs = pair_dumps(list_dumps(tmp_path / "b")[0], list_dumps(tmp_path / "c")[0])
    assert sorted(p.transform for p in pairs) == ["a", "b", "c"]
    assert all(p.baseline and p.candidate for p in pairs)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="expected a folder of graph dumps"):
        list_dumps(tmp_path / "nope")
