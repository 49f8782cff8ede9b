"""Running a scenario as it is and re-printed, and what of a report must not move between the two.

:func:`outcome` is the part of a JSON report that says what the runs did: the verdict and exit code, every
finding (code, category, severity, where, gating, explanation, acknowledgement, and its message with line
numbers and log file names masked: where a line sits is how a log was printed) and every group (cause,
severity, its findings). Notes and the header's format line are left out: they describe how
the runs printed.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from ad_diff.cli.app import main
from ad_diff.core.runlog import RunLog
from tests.conftest import FIXTURES

SCENARIOS = FIXTURES / "scenarios"
MANIFEST: dict[str, Any] = yaml.safe_load((SCENARIOS / "manifest.yaml").read_text())["scenarios"]
NAMES = sorted(n for n in MANIFEST if (SCENARIOS / n / "baseline").is_dir())

_MASKS = (
    (re.compile(r"[\w./-]*\b[\w-]+\.(?:log|out|txt|err)(?:\.(?:gz|bz2|xz))?(?::\d+)?"), "<where>"),
    (re.compile(r"\b(?:stdout|stderr)(?::\d+)?\b"), "<where>"),
    (re.compile(r"\blines? \d+(?:-\d+)?\b"), "<where>"),
    (re.compile(r"\(\d+ lines? read\)"), "(N lines read)"),
)


def mask(text: str, root: Path | None = None) -> str:
    """``text`` without where things sit in a log file (line numbers, log file names) and with the folder of
    the pair (``root``) spelled ``<pair>``: copies of one pair live in different folders."""
    if root is not None:
        for spelling in sorted({str(root), str(root.resolve())}, key=len, reverse=True):
            text = text.replace(spelling, "<pair>")
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    return text


def _finding(f: dict[str, Any], root: Path | None) -> tuple[Any, ...]:
    return (f["code"], f["category"], f["severity"], f["transform"], f["stage"], f.get("node"),
            f.get("tensor"), f.get("collapse"), f.get("gated"), f.get("role"), f.get("explained_by"),
            f.get("acknowledged"), mask(f["message"], root))


def outcome(report: dict[str, Any], root: Path | None = None) -> dict[str, Any]:
    """What must not move when only the printing of a run changed (see the module docstring); ``root``: the
    folder holding the pair."""
    findings = [_finding(f, root) for f in report["findings"]]
    # a group's title is its root finding's message, cut to a headline's length (which a path changes)
    groups = [(g["cause"], g.get("transform"), g["severity"], g.get("gated"),
               [findings[i] for i in g.get("root", [])], [findings[i] for i in g.get("consequences", [])])
              for g in report["groups"]]
    return {"verdict": report["verdict"], "exit_code": report["exit_code"], "findings": findings,
            "groups": groups}


def report(base: Path, cand: Path, args: list[str], out: Path) -> dict[str, Any]:
    """The JSON report of ``ad-diff base cand *args`` (in process)."""
    js = out / "report.json"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main([str(base), str(cand), *args, "--json", str(js), "-f", "json"])
    data: dict[str, Any] = json.loads(js.read_text())
    return data


def args_of(name: str, root: Path) -> list[str]:
    """The scenario's extra arguments, ``{scenario}`` standing for ``root``."""
    return [a.replace("{scenario}", str(root)) for a in MANIFEST[name].get("args") or ()]


def copy(name: str, dest: Path) -> Path:
    """A copy of the scenario folder (baseline, candidate and whatever its arguments name)."""
    shutil.copytree(SCENARIOS / name, dest, symlinks=True)
    return dest


def root_only_dumps(run: Path) -> bool:
    """The run's dumps are D1/D2 (no ``# GraphModules found:`` header)."""
    dumps = sorted((run / "graphs").glob("*.txt")) if (run / "graphs").is_dir() else []
    return bool(dumps) and "# GraphModules found:" not in dumps[0].read_text(errors="replace")[:4096]


def dumps_fit(run: Path, log: RunLog) -> bool:
    """The run's dump files are its own (no link) and name transforms its log ran, in its order."""
    from ad_diff.discover.dumps import list_dumps

    if not (run / "graphs").is_dir():
        return True
    if any(p.is_symlink() for p in (run / "graphs").iterdir()):
        return False  # the reader refuses a linked dump: it names nothing
    names = [(d.stage, d.transform) for d in list_dumps(run / "graphs")[0]]
    seq = iter((r.stage, r.transform) for r in log.transforms)
    return all(any(n == got for got in seq) for n in names)


def parsed(run: Path) -> RunLog:
    """The run's log as a comparison reads it (every rank; results that name no transform named from the
    dumps, the other run and the run's config), from a comparison of the pair ``run`` belongs to."""
    from ad_diff.pipeline import run as compare
    from ad_diff.settings import Settings

    pair = run.parent
    result = compare(Settings(pair / "baseline", pair / "candidate"))
    log = result.baseline_log if run.name == "baseline" else result.candidate_log
    assert log is not None
    return log
