"""The terminal report fits the width it is given (80 columns: no line longer, no table the terminal would
wrap) and uses a wide one (200: names whole); markup inside messages renders, markup inside names does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len

from ad_diff import gate, pipeline
from ad_diff.kinds.graph.section import interesting, is_new
from ad_diff.report import terminal
from ad_diff.result import DiffResult
from ad_diff.settings import Settings
from tests.conftest import FIXTURES, run_cli

PAIRS = {
    "metadata_loss": ("scenarios/metadata_loss/baseline", "scenarios/metadata_loss/candidate"),
    "crash_midway": ("scenarios/crash_midway/baseline", "scenarios/crash_midway/candidate"),
    "config_unexplained": ("scenarios/config_unexplained/baseline", "scenarios/config_unexplained/candidate"),
    "failed_transform": ("scenarios/failed_transform/baseline", "scenarios/failed_transform/candidate"),
    "tensor_drift": ("tensors/gpu/baseline", "tensors/gpu/beyond"),
    "hostile_names": ("hostile/markup_names/baseline", "hostile/markup_names/candidate"),
}
LEFT, RIGHT = "┏┃┡│└", "┓┃┩│┘"
"""Box characters a table line starts and ends with: a line starting with one and not ending with one was
broken apart."""


def _result(base: Path, cand: Path) -> tuple[DiffResult, gate.Verdict]:
    result = pipeline.run(Settings(base, cand))
    return result, gate.judge(result.findings, result.groups, "error")


@pytest.fixture(scope="module", params=[*PAIRS, "moe4"])
def case(request: pytest.FixtureRequest, moe4_pair: tuple[Path, Path]) -> tuple[DiffResult, gate.Verdict]:
    if request.param == "moe4":
        return _result(*moe4_pair)
    b, c = PAIRS[request.param]
    return _result(FIXTURES / b, FIXTURES / c)


def _names(result: DiffResult) -> set[str]:
    """Names the report shows in table cells: changed transforms and the transforms findings are about."""
    names = {r.transform for r in result.transforms if r.changed}
    return names | {f.transform for f in result.findings if f.transform}


def test_fits_80_columns(case: tuple[DiffResult, gate.Verdict]) -> None:
    text = terminal.render(*case, width=80)
    lines = text.splitlines()
    assert max(cell_len(ln) for ln in lines) <= 80
    tables = [ln for ln in lines if ln[:1] in LEFT]
    assert tables, "the report has tables"
    broken = [ln for ln in tables if ln.rstrip()[-1:] not in RIGHT]
    assert broken == []
    result = case[0]
    graph = result.sections.get("graph")
    keys = {d.key for d in graph.transforms if interesting(d) and is_new(d)} if graph is not None else set()
    for name in _names(result) | keys:
        if len(name) <= 40:  # a name that fits is never folded, even at 80 columns
            assert name in text, f"{name!r} is broken across lines at 80 columns"


def test_uses_200_columns_and_keeps_names_whole(case: tuple[DiffResult, gate.Verdict]) -> None:
    result, verdict = case
    text = terminal.render(result, verdict, width=200)
    lines = text.splitlines()
    assert max(cell_len(ln) for ln in lines) <= 200
    assert max(cell_len(ln) for ln in lines) > 120  # the width is used, not a fixed 120
    for name in _names(result):
        assert name in text, f"{name!r} is broken across lines at 200 columns"


def test_markup_inside_messages_renders() -> None:
    result, verdict = _result(FIXTURES / PAIRS["crash_midway"][0], FIXTURES / PAIRS["crash_midway"][1])
    text = terminal.render(result, verdict, width=200)
    assert "crashed: line 90" in text
    assert "**" not in text
    colored = terminal.render(result, verdict, width=200, color=True)
    assert "\x1b[1;31mcrashed\x1b[0m" in colored  # the run's end is emphasised instead
    # ad-diff's own sentences mark op names with backticks: shown styled, not as backticks
    result, verdict = _result(*(FIXTURES / p for p in PAIRS["config_unexplained"]))
    text = terminal.render(result, verdict, width=200)
    assert "rewrote torch_rope in the baseline" in text
    assert "`" not in text


def test_markup_inside_names_stays_literal() -> None:
    # fixtures/hostile/markup_names: a transform and a tensor named "fuse_<script>...|`x`|[bold]red[/bold]"
    result, verdict = _result(*(FIXTURES / p for p in PAIRS["hostile_names"]))
    text = terminal.render(result, verdict, width=1000)
    shown = text.count("`x`|")
    assert shown >= 5  # findings, tables, hints, the graph section and the tensor table all show it
    assert text.count("`x`|[bold]red[/bold]") == shown, "rich markup in a name was interpreted somewhere"
    assert text.count("|```op```|") >= 1  # a node target in the region snippet
    assert text.count("[red]x[/red]") == text.count("|```op```|")


@pytest.mark.parametrize("columns", [80, 200])
def test_cli_follows_columns(columns: int) -> None:
    b, c = PAIRS["metadata_loss"]
    res = run_cli(FIXTURES / b, FIXTURES / c, env={"COLUMNS": str(columns)})
    assert res.code == 1
    widths = [cell_len(ln) for ln in res.out.splitlines()]
    assert max(widths) <= columns
    assert max(widths) > columns - 10  # the whole width is used
