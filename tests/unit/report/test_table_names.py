"""No terminal table of any report cuts a name mid-word, at any width from 60 to 200 columns.

Metamorphic: a real comparison (or history) is computed once; each example renames its transforms, stages,
nodes and tensors to random names (``qzz_vkw/jjq.zz``: words joined by ``_``, ``.``, ``/``, ``:``), wherever
they appear in the result (a harmless change: the same report about other names), and renders the terminal
report at a random width. Every table is there: findings, transforms, graph dumps, tensors, config, and
history's steps, pending, flaky and runs-not-used tables.
"""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from ad_diff import gate, pipeline
from ad_diff.history import run_history
from ad_diff.history.render import render_terminal as history_terminal
from ad_diff.report import terminal
from ad_diff.settings import Settings
from tests.conftest import FIXTURES
from tests.unit.core.test_terminal import ALPHABET, cut_words, identifiers
from tests.unit.history.scenario import scenario

PAIRS = {
    "graph": ("scenarios/metadata_loss/baseline", "scenarios/metadata_loss/candidate"),
    "tensors": ("tensors/gpu/baseline", "tensors/gpu/beyond"),
    "config": ("scenarios/config_unexplained/baseline", "scenarios/config_unexplained/candidate"),
    "crash": ("scenarios/crash_midway/baseline", "scenarios/crash_midway/candidate"),
}


POOL = st.lists(identifiers(), min_size=12, max_size=12)
"""Random names, drawn alike for every case; :func:`new_names` makes as many distinct ones as needed."""


def new_names(pool: list[str], n: int) -> list[str]:
    """``n`` distinct names: the pool's, each with a three-letter serial word (``qzz_vkw.jjq``)."""
    base = len(ALPHABET)
    serial = ["".join(ALPHABET[i // base**k % base] for k in (2, 1, 0)) for i in range(n)]
    assert n <= base**3
    seps = "_./:"
    return [f"{pool[i % len(pool)]}{seps[i % 4]}{serial[i]}" for i in range(n)]


def rename(obj: Any, sub: Any) -> Any:
    """``obj`` with every string passed through ``sub``, at any depth (dataclasses, tuples, lists, dicts);
    enums, paths and other objects are kept."""
    if isinstance(obj, Enum):
        return obj
    if isinstance(obj, str):
        return sub(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: rename(getattr(obj, f.name), sub) for f in dataclasses.fields(obj) if f.init}
        return dataclasses.replace(obj, **fields)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(rename(x, sub) for x in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(rename(x, sub) for x in obj)
    if isinstance(obj, dict):
        return {rename(k, sub): rename(v, sub) for k, v in obj.items()}
    return obj


def renamer(names: list[str], new: list[str]) -> Any:
    """``sub`` for :func:`rename`: each name, standing alone or inside a longer text, becomes its new one."""
    table = dict(zip(names, new, strict=True))
    pattern = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, sorted(table, key=len, reverse=True)))
                         + r")(?![\w])")
    return lambda s: pattern.sub(lambda m: table[m.group(1)], s)


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    out = {}
    for key, (b, c) in PAIRS.items():
        result = pipeline.run(Settings(FIXTURES / b, FIXTURES / c))
        names = {r.transform for r in result.transforms} | {r.stage for r in result.transforms}
        names |= {x for f in result.findings for x in (f.node, f.tensor) if x}
        tensors = result.sections.get("tensors")
        names |= {t.name for t in getattr(tensors, "comparisons", ())}
        out[key] = (result, sorted(n for n in names if re.fullmatch(r"[\w.]+", n) and len(n) > 2))
    return out


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Any:
    h = run_history(scenario(tmp_path_factory.mktemp("h") / "h"))
    names = {c.transform for c in (*h.steps, *h.pending)} | {f.transform for f in h.flaky}
    names |= {m.name for m in h.models}
    return h, sorted(names)


def _check(text: str, width: int, names: list[str]) -> None:
    assert max(cell_len(ln) for ln in text.splitlines()) <= width
    assert cut_words(text, names) == []
    shown = set(re.findall(r"[a-z]+", text))
    whole = [n for n in names if all(w in shown for w in re.split(r"[_./:]+", n) if w)]
    assert len(whole) >= min(3, len(names)), "the names are shown, not lost"


@pytest.mark.parametrize("pair", sorted(PAIRS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(width=st.integers(60, 200), data=st.data())
def test_comparison_tables_never_cut_a_name(pair: str, results: dict[str, Any], width: int,
                                            data: st.DataObject) -> None:
    result, names = results[pair]
    new = new_names(data.draw(POOL), len(names))
    renamed = rename(result, renamer(names, new))
    verdict = gate.judge(renamed.findings, renamed.groups, "error")
    text = terminal.render(renamed, verdict, width=width, show_unchanged=True)
    _check(text, width, new)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(width=st.integers(60, 200), data=st.data())
def test_history_tables_never_cut_a_name(history: Any, width: int, data: st.DataObject) -> None:
    h, names = history
    new = new_names(data.draw(POOL), len(names))
    renamed = rename(h, renamer(names, new))
    text = history_terminal(renamed, width=width)
    _check(text, width, new)


def test_the_renaming_reaches_the_tables(results: dict[str, Any], tmp_path: Path) -> None:
    result, names = results["graph"]
    assert "match_rope_layout" in names
    renamed = rename(result, renamer(names, [f"n{i}" for i in range(len(names))]))
    text = terminal.render(renamed, gate.judge(renamed.findings, renamed.groups, "error"), width=200)
    assert "match_rope_layout" not in text
    assert f"n{names.index('match_rope_layout')}" in text
