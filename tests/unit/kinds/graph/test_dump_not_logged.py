"""A dump of a transform the run's own log never ran (issue 27's silent passes): the dumps and the log do
not describe one run, so it is ADG014 and gates, for either run, never 'ran in the candidate only'."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ad_diff import gate, pipeline
from ad_diff.settings import Settings
from tests.conftest import FIXTURES

PAIR = FIXTURES / "scenarios" / "identical"
DUMPS = sorted(p.name for p in (PAIR / "baseline" / "graphs").iterdir())


def _insert(graphs: Path, at: int, stage: str, transform: str) -> str:
    """Insert a dump of ``transform`` after the ``at``-th dump (its graph: nothing changed),
    renumbering the later ones as AD's counter would; returns the new file's name."""
    names = sorted(p.name for p in graphs.iterdir())
    for name in reversed(names[at:]):
        n, rest = re.match(r"(\d+)_(.*)", name).groups()  # type: ignore[union-attr]
        (graphs / name).rename(graphs / f"{int(n) + 1:03d}_{rest}")
    new = f"{at + 1:03d}_{stage}_{transform}.txt"
    text = (graphs / names[at - 1]).read_text()
    text = re.sub(r"^# Transform: .*$", f"# Transform: {transform}", text, count=1, flags=re.M)
    text = re.sub(r"^# Stage: .*$", f"# Stage: {stage}", text, count=1, flags=re.M)
    (graphs / new).write_text(text)
    return new


@pytest.mark.parametrize("run", ["baseline", "candidate"])
@pytest.mark.parametrize("at", [1, len(DUMPS) // 2, len(DUMPS)])
@pytest.mark.parametrize("transform", ["fuse_moe", "match_rope_patern"])
def test_a_dump_the_log_never_ran_gates(tmp_path: Path, run: str, at: int, transform: str) -> None:
    shutil.copytree(PAIR / "baseline", tmp_path / "baseline")
    shutil.copytree(PAIR / "candidate", tmp_path / "candidate")
    name = _insert(tmp_path / run / "graphs", at, "pattern_matcher", transform)
    result = pipeline.run(Settings(baseline=tmp_path / "baseline", candidate=tmp_path / "candidate"))
    [f] = [f for f in result.findings if f.code == "ADG014"]
    assert (f.transform, f.message.split(":")[0]) == (transform, run)
    assert name in f.message
    assert not [f for f in result.findings if f.code == "ADG006"]  # not "ran in the candidate only"
    assert gate.decide(result.findings, "error").exit_code == gate.EXIT_REGRESSION
