"""The JSON report of a history (ad_diff/history/serialize.py): its documented keys and values."""

from __future__ import annotations

import json

from ad_diff.history.model import History
from ad_diff.history.serialize import SCHEMA_VERSION, render_json


def test_json_schema(history: History) -> None:
    data = json.loads(render_json(history))
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["report"] == "history"
    assert (data["verdict"], data["exit_code"]) == ("fail", 1)
    assert set(data) >= {
        "runs",
        "models",
        "problems",
        "steps",
        "pending",
        "flaky",
        "current",
        "stats",
        "notes",
        "min_run",
        "fail_on",
        "since",
        "order",
        "layout",
    }
    step = data["steps"][0]
    assert step == {
        "kind": "step",
        "model": "llama",
        "stage": step["stage"],
        "transform": "fuse_moe",
        "occurrence": 0,
        "before": {"state": "applied", "matches": 8},
        "after": {"state": "applied", "matches": 0},
        "change": "8 -> 0",
        "last_before": "run-039",
        "first_after": "run-040",
        "confirmed": "run-041",
        "held": 80,
        "via": [],
        "category": "collapse",
        "codes": ["ADL001"],
        "message": "fuse_moe: matches collapsed 8 -> 0",
        "gating": True,
        "in_window": True,
        "gates": True,
        "commit_before": None,
        "commit_after": None,
    }
    assert [d["run"] for d in data["flaky"][0]["deviations"]] == ["run-020", "run-055", "run-090"]
    assert len(data["runs"]) == 120
    assert data["runs"][0] == {"name": "run-000", "index": 0, "started": None, "commit": None, "models": 2}
    moe = next(c for c in data["current"]["llama"] if c["transform"] == "fuse_moe")
    assert (moe["state"], moe["matches"], moe["mark"]) == ("applied", 0, "down")
