"""Reports of a history (ad_diff/history/render.py): markdown (escaped) and terminal."""

from __future__ import annotations

import re
from pathlib import Path

from ad_diff.history import run_history
from ad_diff.history.render import render_markdown, render_terminal
from tests.unit.history.scenario import Event, make_history

HOSTILE = "evil|<img src=x>`[a](b)`*"


def test_markdown_steps_first_then_matrix(history) -> None:  # noqa: ANN001
    md = render_markdown(history)
    assert md.startswith("## ad-diff history: FAIL: 2 gating step(s) (1 collapse, 1 partial loss)")
    assert md.index("### Steps (3)") < md.index("### Flaky (1") < md.index("### Current counts")
    rows = [line for line in md.splitlines() if line.startswith("| ❌") or line.startswith("| ℹ️")]
    assert rows[0] == (
        "| ❌ | llama | `fuse_moe` | 8 -> 0 | collapse (ADL001) | run-039 | run-040 | run-041 |"
    )
    assert "| ℹ️ | mixtral | `fuse_gemms` | 0 -> 6 | new matches (ADL008) |" in rows[2]
    assert "| qwen | run-060 | run-119 | 60 |" in md  # the model added halfway
    matrix = md[md.index("### Current counts") :]
    header = next(line for line in matrix.splitlines() if line.startswith("| transform |"))
    assert header == "| transform | llama | mixtral | qwen |"
    moe = next(line for line in matrix.splitlines() if line.startswith("| `fuse_moe` |"))
    assert moe.split(" | ")[1] == "**0** ▼"
    assert "<details><summary>" in matrix  # transforms that never changed are folded


def test_markdown_escapes_every_name(tmp_path: Path) -> None:
    make_history(
        tmp_path / "h",
        runs=6,
        models=[HOSTILE],
        n_transforms=8,
        events=[Event(HOSTILE, "fuse_moe", 0, 8), Event(HOSTILE, "fuse_moe", 3, 0)],
    )
    (tmp_path / "h" / HOSTILE / "run-002.yaml").write_text("not: [a snapshot <b>|</b>\n")
    md = render_markdown(run_history(tmp_path / "h"))
    assert "<img" not in md
    assert "<b>" not in md
    for line in md.splitlines():
        if line.startswith("|") and "evil" in line:
            # no unescaped pipe splits a cell: every '|' inside a name is backslashed
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
            assert any("evil\\|&lt;img" in c for c in cells), line


def test_terminal_report(history) -> None:  # noqa: ANN001
    out = render_terminal(history, width=200)
    assert out.splitlines()[0] == "ad-diff history: FAIL: 2 gating step(s) (1 collapse, 1 partial loss)"
    assert re.search(r"GATES .*llama .*fuse_moe .*8 -> 0 .*collapse \(ADL001\) .*run-039 .*run-040", out)
    assert "run-020: 3, run-055: 0, run-090: 3" in out
    assert "model qwen: first used run is run-060" in out
    assert "\x1b[" not in out
    assert "\x1b[" in render_terminal(history, color=True)
