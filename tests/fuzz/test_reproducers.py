"""Replay every committed fuzz reproducer (tests/fuzz/reproducers/): each must end in a result or an
AdDiffError. Crashes still open in other parts of ad-diff are strict expected failures (``OPEN``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz import targets

HERE = Path(__file__).parent / "reproducers"

OPEN: dict[str, str] = {
}
"""Reproducer (``target/name``) -> where it still crashes, for the owner of that file."""


def _cases() -> list[object]:
    out = []
    for p in sorted(HERE.glob("*/*.bin")):
        key = f"{p.parent.name}/{p.stem}"
        marks = [pytest.mark.xfail(reason=OPEN[key], strict=True)] if key in OPEN else []
        out.append(pytest.param(p, id=key, marks=marks))
    return out


def test_open_list_names_existing_reproducers() -> None:
    assert {f"{p.parent.name}/{p.stem}" for p in HERE.glob("*/*.bin")} >= set(OPEN)


@pytest.mark.parametrize("path", _cases())
def test_reproducer_does_not_crash(path: Path, tmp_path: Path) -> None:
    target = targets.TARGETS[path.parent.name]
    seed_name = path.with_suffix(".seed").read_text().strip()
    target.run((seed_name, b""), path.read_bytes(), tmp_path)
