"""Harmless never gates (issue 40): a run re-printed in another form the readers accept (log format, logger
prefix, verbosity, per-rank layout, file name, compression; dumps' output line and line ends) leaves the
verdict, every finding and every group of every scenario as they were; and a substantive change written
into the model of a run, printed in any form, gates with a finding that names it.

The re-printing is driven by the parsed model (:mod:`tests.metamorphic.logwriter`), so every form the
readers accept is written from the facts the readers took, not from a list of example files. The default run
tries two forms per scenario, chosen so that across the scenarios every value of every form dimension is
tried; ``AD_DIFF_METAMORPHIC=all`` tries every log form on every scenario, each run alone and both (layouts,
names, compressions and dump forms turning): about 2,500 comparisons, half an hour on two cores.
"""

from __future__ import annotations

import os
import random
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ad_diff.core.model import State
from tests.metamorphic import harness as H
from tests.metamorphic.dumps import DumpForm, dump_forms, reprint
from tests.metamorphic.logwriter import COMPRESSIONS, LAYOUTS, NAMES, CannotCarry, Form, forms, write

FULL = os.environ.get("AD_DIFF_METAMORPHIC") == "all"
SIDES = ("candidate", "baseline", "both")


def _form(i: int) -> Form:
    base = forms()[i % len(forms())]
    return replace(base, layout=LAYOUTS[i % len(LAYOUTS)], name=NAMES[(i // 3) % len(NAMES)],
                   compression=COMPRESSIONS[(i // 2) % len(COMPRESSIONS)])


def _cases() -> list[tuple[str, int, Form, DumpForm, str]]:
    if FULL:  # every log form on every scenario and side; layouts, names, compressions and dump forms turn
        dumps = dump_forms()
        return [(n, i, replace(f, layout=LAYOUTS[i % 3], name=NAMES[i % 4], compression=COMPRESSIONS[i % 4]),
                 dumps[(i + j) % len(dumps)], side)
                for n in H.NAMES for i, f in enumerate(forms()) for j, side in enumerate(SIDES)]
    out = []
    i = 0
    for name in H.NAMES:
        for _ in range(2):
            out.append((name, i, _form(i), dump_forms()[i % len(dump_forms())], SIDES[i % len(SIDES)]))
            i += 1
    return out


CASES = _cases()


def test_the_sample_covers_every_form() -> None:
    """Every format and prefix pair, verbosity, layout, name, compression, dump form and side is tried."""
    forms_seen = {(f.fmt, f.prefix, f.debug) for _, _, f, _, _ in CASES}
    assert forms_seen == {(f.fmt, f.prefix, f.debug) for f in forms()}
    assert {f.layout for _, _, f, _, _ in CASES} == set(LAYOUTS)
    assert {f.name for _, _, f, _, _ in CASES} == set(NAMES)
    assert {f.compression for _, _, f, _, _ in CASES} == set(COMPRESSIONS)
    assert {d for _, _, _, d, _ in CASES} == set(dump_forms())
    assert {s for *_, s in CASES} == set(SIDES)


_ORIGINAL: dict[str, dict[str, Any]] = {}


def _original(name: str, tmp: Path) -> dict[str, Any]:
    if name not in _ORIGINAL:
        pair = H.copy(name, tmp / "orig")
        rep = H.report(pair / "baseline", pair / "candidate", H.args_of(name, pair), tmp)
        _ORIGINAL[name] = H.outcome(rep, pair)
    return _ORIGINAL[name]


def _reprinted(name: str, i: int, form: Form, dumps: DumpForm, side: str, pair: Path) -> Form:
    """Re-print the pair's ``side`` run(s) in ``form`` (or the next form that can carry the run's facts);
    returns the form used."""
    runs = ("baseline", "candidate") if side == "both" else (side,)
    candidates = [form, *(_form(i + k) for k in range(1, 4 * len(forms())))]
    for run in runs:
        folder = pair / run
        log = H.parsed(folder)
        for f in candidates:
            try:
                write(log, f, folder, H.root_only_dumps(folder), H.dumps_fit(folder, log))
                form = f
                break
            except CannotCarry:
                continue
        else:
            pytest.skip(f"no form can carry {name}/{run}")
        if (folder / "graphs").is_dir():
            reprint(folder / "graphs", dumps)
    return form


@pytest.mark.parametrize(("name", "i", "form", "dumps", "side"), CASES,
                         ids=[f"{n}-{side}-{f}-{d}" for n, _, f, d, side in CASES])
def test_a_reprinted_run_reads_the_same(name: str, i: int, form: Form, dumps: DumpForm, side: str,
                                        tmp_path: Path) -> None:
    want = _original(name, tmp_path)
    pair = H.copy(name, tmp_path / "reprinted")
    used = _reprinted(name, i, form, dumps, side, pair)
    got = H.outcome(H.report(pair / "baseline", pair / "candidate", H.args_of(name, pair), tmp_path), pair)
    assert got["verdict"] == want["verdict"], f"{used} {dumps}"
    assert got["findings"] == want["findings"], f"{used} {dumps}"
    assert got["groups"] == want["groups"], f"{used} {dumps}"


# --- one substantive change in the model still gates ------------------------------------------------------

PASSING = [n for n in H.NAMES if H.MANIFEST[n]["verdict"] == "pass" and not H.MANIFEST[n].get("args")]


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(PASSING), seed=st.integers(0, 2**16), k=st.integers(0, len(forms()) - 1))
def test_a_changed_count_in_any_form_gates_and_is_named(name: str, seed: int, k: int) -> None:
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        pair = H.copy(name, Path(tmp) / "pair")
        folder = pair / "candidate"
        log = H.parsed(folder)
        base = {(r.transform, r.state, r.matches) for r in H.parsed(pair / "baseline").transforms}
        # a count both runs agree on: lowering it in the candidate is a loss against the baseline
        counted = [r for r in log.transforms
                   if r.state is State.APPLIED and r.matches and (r.transform, r.state, r.matches) in base]
        victim = rnd.choice(counted)
        fewer = rnd.randrange(victim.matches or 1)

        def changed(records: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(replace(r, matches=fewer) if r.transform == victim.transform else r for r in records)

        ranks = tuple(replace(rl, transforms=changed(rl.transforms)) for rl in log.ranks)
        mutated = replace(log, transforms=changed(log.transforms), ranks=ranks)
        for f in [forms()[(k + j) % len(forms())] for j in range(len(forms()))]:
            try:
                write(mutated, f, folder, H.root_only_dumps(folder), H.dumps_fit(folder, log))
                break
            except CannotCarry:
                continue
        rep = H.report(pair / "baseline", folder, [], Path(tmp))
        gated = [f for f in rep["findings"] if f["gated"] and f["severity"] == "error"]
        assert rep["exit_code"] == 1, f"{victim.transform} {victim.matches} -> {fewer} in {f}: nothing gates"
        assert any(f["transform"] == victim.transform for f in gated), [f["message"] for f in gated]
