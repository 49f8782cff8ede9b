"""The graphs/ listing as a measurement (folder.scan) and the input findings the rules draw from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.kinds.graph.classify import folder_findings
from ad_diff.kinds.graph.folder import FolderScan, gaps, ranges, scan


def _dumps(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_text("# Transform: t\n# Stage: s\n\noutput\n", "utf-8")
    return folder


def test_clean_folder_measures_nothing_wrong(tmp_path: Path) -> None:
    g = _dumps(tmp_path, ["001_export_a.txt", "002_export_b.txt", "notes.txt"])
    s = scan(g)
    assert s == FolderScan(g, counters=(1, 2))
    assert folder_findings(s, "candidate") == []


def test_gap_duplicate_and_unreadable_entries(tmp_path: Path) -> None:
    g = _dumps(tmp_path, ["001_s_a.txt", "003_s_c.txt", "003_s_d.txt", "007_s_g.txt"])
    (g / "008_s_h.txt").mkdir()
    (g / "009_s_i.txt").symlink_to(g / "nowhere")
    s = scan(g)
    assert s.counters == (1, 3, 7)
    assert s.missing == ((2, 2), (4, 6))
    assert s.duplicates == ((3, ("003_s_c.txt", "003_s_d.txt")),)
    assert [(p.name, why) for p, why in s.unreadable] == [
        ("008_s_h.txt", "is not a regular file"),
        ("009_s_i.txt", "is a symbolic link that loops or points nowhere"),
    ]
    got = {f.code: f.message for f in folder_findings(s, "baseline")}
    assert sorted(got) == ["ADI002", "ADI003", "ADI005"]
    assert "missing 002, 004-006" in got["ADI002"]
    assert got["ADI002"].startswith("baseline:")
    assert "003_s_c.txt, 003_s_d.txt" in got["ADI003"]


def test_work_is_bounded_by_the_listing_not_by_numbers_in_names(tmp_path: Path) -> None:
    g = _dumps(tmp_path, ["001_s_a.txt", "999999999999_s_b.txt"])
    s = scan(g)  # a range of a trillion numbers would never finish: the gap is kept as one span
    assert s.missing == ((2, 999999999998),)
    assert "002-999999999998" in folder_findings(s, "candidate")[0].message


def test_unlistable_folder_is_an_analysis_failure(tmp_path: Path) -> None:
    s = scan(tmp_path / "absent")
    assert s.error is not None
    assert s.counters == ()
    (f,) = folder_findings(s, "candidate")
    assert f.code == "ADI006"
    assert "cannot list" in f.message


@pytest.mark.parametrize(
    ("nums", "want"), [([1, 2, 3], []), ([1, 5, 7], [(2, 4), (6, 6)]), ([], []), ([4], [])]
)
def test_gaps(nums: list[int], want: list[tuple[int, int]]) -> None:
    assert gaps(nums) == want


def test_ranges_caps_at_five() -> None:
    spans = [(n, n) for n in range(2, 30, 2)]
    assert ranges(spans) == "002, 004, 006, 008, 010 and 9 more range(s)"
