"""The graphs/ listing as a measurement (folder.scan) and the input findings the rules draw from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ad_diff.discover.dumps import DumpFile, FolderScan, gaps, ranges, scan
from ad_diff.kinds.graph.classify import folder_findings


def _dumps(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_text("# Transform: t\n# Stage: s\n\noutput\n", "utf-8")
    return folder


def test_clean_folder_measures_nothing_wrong(tmp_path: Path) -> None:
    g = _dumps(tmp_path, ["001_export_a.txt", "002_export_b.txt", "notes.txt"])
    s = scan(g)
    files = tuple(DumpFile(g / n, g.parent, k) for k, n in enumerate(["001_export_a.txt", "002_export_b.txt"], 1))
    assert s == FolderScan(g, counters=(1, 2), files=files, ignored=("notes.txt",))
    assert s.named == 2
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


def test_links_leaving_the_run_folder_are_refused_unread(tmp_path: Path) -> None:
    import os

    from ad_diff.discover.dumps import list_dumps

    run, outside = tmp_path / "run", tmp_path / "outside"
    g = _dumps(run / "graphs", ["001_s_a.txt", "002_s_b.txt"])
    _dumps(outside, ["x.txt"])
    (g / "003_s_c.txt").symlink_to(outside / "x.txt")
    (g / "004_s_d.txt").symlink_to(g / "001_s_a.txt")  # inside the run folder: fine
    os.mkfifo(g / "005_s_e.txt")
    s = scan(g)
    assert [(p.name, why.split(";")[0]) for p, why in s.unreadable] == [
        ("003_s_c.txt", f"is a symbolic link to a file outside the run folder {run}"),
        ("005_s_e.txt", "is not a regular file"),
    ]
    assert s.counters == (1, 2, 4)
    assert [r.path.name for r in list_dumps(g)[0]] == ["001_s_a.txt", "002_s_b.txt", "004_s_d.txt"]


def test_a_graphs_folder_linked_out_is_refused_file_by_file(tmp_path: Path) -> None:
    outside = _dumps(tmp_path / "outside" / "graphs", ["001_s_a.txt"])
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "graphs").symlink_to(outside)
    s = scan(tmp_path / "run" / "graphs")
    assert [why.split(" a file")[0] for _, why in s.unreadable] == ["resolves to"]
    assert s.counters == ()


def test_dump_loader_refuses_an_oversized_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ad_diff.discover.dumps import DumpRef
    from ad_diff.kinds.graph import cache

    g = _dumps(tmp_path / "run" / "graphs", ["001_s_a.txt"])
    ref = DumpRef(g / "001_s_a.txt", "s", "t", 0, 1)
    assert cache.DumpLoader().load(ref).error is None
    monkeypatch.setattr(cache, "MAX_DUMP_BYTES", 10)
    err = cache.DumpLoader().load(ref).error
    assert err is not None
    assert "more than the 10 bytes accepted for a graph dump" in err
