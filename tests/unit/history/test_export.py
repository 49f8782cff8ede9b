"""--table (CSV, Parquet when pyarrow is there) and --plots."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ad_diff.errors import AdDiffError, UsageError
from ad_diff.history import run_history
from ad_diff.history.export import plot_name, table_format, write_plots, write_table
from tests.unit.history.scenario import Event, make_history


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    root = tmp_path_factory.mktemp("x") / "h"
    make_history(
        root,
        runs=8,
        models=["a", "b"],
        n_transforms=10,
        events=[
            Event("a", "fuse_moe", 0, 8),
            Event("a", "fuse_moe", 4, 0),
            Event("b", "fuse_gemms", 0, 2),
            Event("b", "fuse_gemms", 2, None, state="skipped"),
        ],
    )
    return run_history(root)


def test_csv_table_round_trips(history, tmp_path: Path) -> None:  # noqa: ANN001
    import pandas as pd

    write_table(history, tmp_path / "out" / "t.csv")
    back = pd.read_csv(tmp_path / "out" / "t.csv")
    assert len(back) == len(history.table) == 160
    assert list(back.columns) == list(history.table.columns)
    moe = back[(back["model"] == "a") & (back["transform"] == "fuse_moe")].sort_values("run_index")
    assert moe["count"].tolist() == [8] * 4 + [0] * 4
    gemms = back[(back["model"] == "b") & (back["transform"] == "fuse_gemms")].sort_values("run_index")
    assert gemms["state"].tolist() == ["applied"] * 2 + ["skipped"] * 6
    assert gemms["count"].isna().sum() == 6


def test_table_format_by_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert table_format(tmp_path / "t.CSV") == "csv"
    assert table_format(tmp_path / "t.csv.gz") == "csv"
    with pytest.raises(UsageError, match=r"must end in \.csv"):
        table_format(tmp_path / "t.xlsx")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a)
    )
    with pytest.raises(
        AdDiffError, match=r"needs pyarrow; install it with `pip install 'ad-diff\[parquet\]'`"
    ):
        table_format(tmp_path / "t.parquet")


@pytest.mark.skipif(
    importlib.util.find_spec("pyarrow") is None, reason="pyarrow (the parquet extra) not installed"
)
def test_parquet_table(history, tmp_path: Path) -> None:  # noqa: ANN001
    import pandas as pd

    write_table(history, tmp_path / "t.parquet")
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert back["count"].tolist() == history.table["count"].tolist()
    assert list(back["transform"].astype(str)) == list(history.table["transform"].astype(str))


def test_plots_one_per_stepped_transform(history, tmp_path: Path) -> None:  # noqa: ANN001
    pytest.importorskip("matplotlib")
    written = write_plots(history, tmp_path / "plots")
    assert set(written) == {("a", "fuse_moe", 0), ("b", "fuse_gemms", 0)}
    for path in written.values():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert path.parent == tmp_path / "plots"
    assert plot_name("../../x", "t$", 0).startswith(".._.._x-t_-")
