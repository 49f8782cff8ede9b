"""The start-up rows of ``scripts/bench.py``: ``python -c pass``, ``ad-diff --help`` and a log-only
comparison, all run by the same interpreter, and the targets they are judged by (0.15 s each, shown beside
the ratio to ``python -c pass``, since an absolute time on a shared 2-core machine says little on its own).

``--startup`` measures these rows alone (quick to repeat many times); ``--extra-path DIR`` adds, for each
ad-diff row, the same command with ``DIR`` put before the checkout on ``PYTHONPATH``: e.g. another typer
installed with ``pip install --no-deps --target DIR typer==0.28.0``, to measure what a dependency costs.
"""

from __future__ import annotations

import os
from pathlib import Path

from .runner import Cmd, Target

LIMIT_S = 0.15
"""Issue 15's start-up target for ``--help`` and a log-only comparison (wall seconds)."""


def startup_commands(
    py: str, log_only: Path, extra_paths: list[Path], lost_at: str, fmt: str, floor: str = ""
) -> dict[str, Cmd]:
    """``python -c pass``, the read floor of the two logs (``floor``: the read-floor script, when given),
    ``ad-diff --help`` and the log-only comparison (plus one variant of each ad-diff command per
    ``extra_paths`` entry, named ``<name> [<dir's name>]``)."""
    c = {"python -c pass": Cmd("python -c pass", [py, "-c", "pass"], 0)}
    b, cand = str(log_only / "baseline"), str(log_only / "candidate")
    if floor:
        c["log-only floor"] = Cmd("log-only floor", [py, "-c", floor, b, cand], 0)
    for tag in ["", *map(str, extra_paths)]:
        suffix = f" [{Path(tag).name}]" if tag else ""
        c[f"ad-diff --help{suffix}"] = Cmd(f"ad-diff --help{suffix}", [py, "-m", "ad_diff", "--help"], 0)
        name = f"log-only ad-diff{suffix}"
        c[name] = Cmd(name, [py, "-m", "ad_diff", b, cand, "-f", fmt], 1, lost_at)
        if tag:
            c[f"ad-diff --help{suffix}"].pythonpath = c[name].pythonpath = tag
    return c


def env_for(cmd: Cmd, env: dict[str, str]) -> dict[str, str]:
    """``env`` with ``cmd.pythonpath`` (when set) before the checkout on ``PYTHONPATH``."""
    if not cmd.pythonpath:
        return env
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [cmd.pythonpath, env.get("PYTHONPATH")]))}


def startup_targets(c: dict[str, Cmd]) -> list[Target]:
    """One target row per ad-diff start-up command (variants included)."""
    base = c["python -c pass"].med("wall")
    rows = []
    names = [n for n in c if n.startswith("log-only ad-diff")] + [
        n for n in c if n.startswith("ad-diff --help")
    ]
    for name in names:  # the order: the log-only comparison, then --help
        m = c[name]
        what = name.replace("log-only ad-diff", "log-only comparison")
        note = (
            f"{m.med('wall') / base:.1f}x python -c pass ({base * 1000:.0f} ms); CPU {m.med('cpu'):.3f} s "
            f"({m.med('cpu') / c['python -c pass'].med('cpu'):.1f}x)"
        )
        if "log-only floor" in c and name.startswith("log-only"):
            note += f"; {m.med('wall') / c['log-only floor'].med('wall'):.1f}x the logs' read floor"
        rows.append(Target(what, m.med("wall"), LIMIT_S, "s", note, m.invalid))
    return rows
