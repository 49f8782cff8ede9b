"""The history generator writes snapshot files exactly as `ad-diff snapshot` would, and logs AD would."""

from __future__ import annotations

import yaml

from ad_diff import __version__
from ad_diff.discover import snapshot
from tests.unit.history.scenario import make_history


def test_snapshot_text_is_what_snapshot_dump_writes(tmp_path) -> None:  # noqa: ANN001
    make_history(tmp_path, runs=2, models=["m"], n_transforms=15)
    text = (tmp_path / "m" / "run-001.yaml").read_text()
    data = yaml.safe_load(text)
    assert data["tool"] == f"ad-diff {__version__}"
    assert len(data["transforms"]) == 15
    assert snapshot.dump(data) == text


def test_folder_runs_parse_to_the_same_rows(tmp_path) -> None:  # noqa: ANN001
    from ad_diff.kinds.log import parse

    make_history(tmp_path / "s", runs=1, models=["m"], n_transforms=15)
    make_history(tmp_path / "f", runs=1, models=["m"], n_transforms=15, kind="folder")
    rows = yaml.safe_load((tmp_path / "s" / "m" / "run-000.yaml").read_text())["transforms"]
    log = parse.parse(tmp_path / "f" / "m" / "run-000" / "ad.log")
    assert [(r.stage, r.transform, r.state.value, r.matches) for r in log.transforms] == [
        (r["stage"], r["transform"], r["state"], r["matches"]) for r in rows
    ]
    assert log.end.value == "complete"
