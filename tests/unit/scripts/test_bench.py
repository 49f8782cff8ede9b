"""``scripts/bench.py --quick`` runs end to end and reports every row of the issue's table (no timing is
asserted: the figures of a smoke run mean nothing), and the rows other scripts provide go through a
function call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from benchgen import external  # noqa: E402

ROWS = [
    "160-layer pair: ad-diff / read floor",
    "80-layer pair: ad-diff / read floor",
    "MoE pair: ad-diff / read floor",
    "MoE pair: peak RSS / largest dump pair",
    "worst case, 160 layers: ad-diff / read floor",
    "worst case, 160 -> 320 layers: ad-diff time",
    "worst case, 160 layers: peak RSS",
    "SwiGLU loss, 160 layers: ad-diff / read floor",
    "SwiGLU loss, 160 -> 320 layers: ad-diff time",
    "SwiGLU loss, 160 layers: peak RSS",
    "large log: ad-diff / read floor",
    "large log, no line twice: ad-diff / read floor",
    "160-layer pair with tensors: peak RSS",
    "doubling the layers (80 -> 160): ad-diff time",
    "log-only comparison",
    "ad-diff --help",
]


def test_quick_run_reports_every_row(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench.py"), "--quick", "--no-tensor-pair", "--no-history",
         "--json", str(out), "--dir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(out.read_text())
    assert [t["what"] for t in got["targets"]] == ROWS
    # every ad-diff command reported the injected loss (else INVALID): the timings measure real comparisons
    assert {t["what"]: t["status"] for t in got["targets"]
            if t["status"] not in ("met", "NOT MET", "compare")} == {}
    compared = {t["what"] for t in got["targets"] if t["status"] == "compare"}
    assert compared == {"large log: ad-diff / read floor", "large log, no line twice: ad-diff / read floor"}
    cmds = got["commands"]
    assert all(len(c["wall_s"]) == 1 and c["invalid"] == "" for c in cmds.values())
    assert cmds["llama160 ad-diff"]["rc"] == [1]
    assert cmds["llama160 floor"]["rc"] == [0]
    assert cmds["worst320 ad-diff"]["rc"] == [1]  # the worst-case pairs report their loss at match_repeat_kv
    assert cmds["swiglu320 ad-diff"]["rc"] == [1]  # and the SwiGLU pairs theirs at match_swiglu_pattern
    assert got["workloads"]["llama80"]["dumps_per_run"] == 92
    assert got["workloads"]["llama80"]["tensor_bytes"] > 2048
    for line in ROWS:
        assert line in proc.stdout


def test_startup_rows_alone_with_a_variant(tmp_path: Path) -> None:
    (tmp_path / "variant").mkdir()  # an empty folder first on PYTHONPATH: the same code, a second row
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench.py"), "--quick", "--startup", "--extra-path",
         str(tmp_path / "variant"), "--json", str(out), "--dir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(out.read_text())
    assert [t["what"] for t in got["targets"]] == [
        "log-only comparison", "log-only comparison [variant]", "ad-diff --help", "ad-diff --help [variant]",
    ]
    assert all(t["status"] in ("met", "NOT MET") for t in got["targets"])  # the loss was reported: valid
    assert set(got["commands"]) == {
        "python -c pass", "log-only floor", "ad-diff --help", "log-only ad-diff", "ad-diff --help [variant]",
        "log-only ad-diff [variant]",
    }


def test_tensor_row_calls_the_tensor_script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = []

    def bench_row(work: Path, *, repeats: int, quick: bool) -> dict:
        calls.append((work, repeats, quick))
        return {"ratio": 3.5, "ad_s": 0.7, "numpy_s": 0.2, "cosine_error": 1e-12}

    monkeypatch.setattr(external, "external", lambda name: SimpleNamespace(bench_row=bench_row))
    rows, raw = external.tensor_row(tmp_path, 3, False)
    assert calls == [(tmp_path, 3, False)]
    assert [(r.what, r.value, r.status) for r in rows] == [
        ("tensor pair: ad-diff / numpy single pass", 3.5, "NOT MET"),
        ("tensor pair: |cosine - exact float64 cosine|", 1e-12, "met"),
    ]
    assert raw["ratio"] == 3.5


def test_missing_or_failing_scripts_are_rows_not_crashes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(external, "external", lambda name: None)
    (row,), _ = external.history_row(tmp_path, 1, True)
    assert row.status == "not available"
    assert "no scripts/bench_history.py" in row.note

    def bench_history(root: Path, **kw: object) -> dict:
        raise RuntimeError("boom")

    monkeypatch.setattr(external, "external", lambda name: SimpleNamespace(bench_history=bench_history))
    (row,), raw = external.history_row(tmp_path, 1, True)
    assert row.status == "not available"
    assert "RuntimeError: boom" in row.note
    assert raw == {"error": "boom"}
