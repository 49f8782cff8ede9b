"""``ad-diff history ROOT/``: when did a transform's state or match count change, and in which run.

Read top to bottom, :func:`run_history` is the whole flow: find the runs (``layout``) -> read each leaf
once, or take it from the cache (``load``, ``cache``) -> order the runs -> one long pandas table ->
run-length segments per (model, transform) (``segments``) -> steps, pending changes and flaky transforms,
each judged by the pair comparison's log rules (``steps``) -> gate. Rendering (``render``) and the table,
plot and cache files (``export``) come after, on the returned :class:`History`.

pandas is imported by this command only (``ad-diff compare`` never loads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from ad_diff.core import lazy
from ad_diff.errors import UsageError
from ad_diff.gate import decide, exit_with_input_errors
from ad_diff.history.layout import find_leaves, natural_key, order_runs, when
from ad_diff.history.model import (
    ERROR,
    INCOMPLETE,
    OK,
    Change,
    History,
    Leaf,
    LeafMeta,
    ModelInfo,
    Problem,
    RunInfo,
)
from ad_diff.progress import ProgressFn, no_progress
from ad_diff.settings import FailOn

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ad_diff.gate import Verdict
else:
    np = lazy.module("numpy")
    pd = lazy.module("pandas")

__all__ = ["HistoryOptions", "run_history"]


@dataclass(frozen=True)
class HistoryOptions:
    """Every knob of one history (the CLI fills it from options and the config file)."""

    layout: str = "auto"
    order: str = "auto"
    min_run: int = 2
    rank: int = 0
    collapse_fraction: float = 0.5
    fail_on: FailOn = FailOn.ERROR
    since: str | None = None
    """Only steps that became known in this run or later, and problems of these runs, gate."""
    ignore_transforms: tuple[str, ...] = ()
    cache: Path | None = None


def _since_index(runs: list[str], since: str | None) -> int:
    if since is None:
        return 0
    if since not in runs:
        shown = ", ".join(runs[:3]) + (f", ..., {runs[-1]}" if len(runs) > 3 else "")
        raise UsageError(f"--since {since!r} is not a run of this history (runs: {shown})")
    return runs.index(since)


def run_history(
    root: Path, options: HistoryOptions | None = None, progress: ProgressFn = no_progress
) -> History:
    """Read the history under ``root`` and find its steps; raise :class:`AdDiffError` for unusable input."""
    # lazy: the table, steps and run readers load when a history is built, not on import
    from ad_diff.history import segments
    from ad_diff.history.load import build_table, read_all
    from ad_diff.history.steps import find_changes

    opts = options or HistoryOptions()
    if opts.min_run < 1:
        raise UsageError(f"--min-run must be at least 1, not {opts.min_run}")
    layout, leaves, notes = find_leaves(root, opts.layout)
    cols, datas, stats, cache_notes = read_all(leaves, opts.rank, opts.cache, progress)
    notes += cache_notes
    metas = [d.meta for d in datas]
    runs, order, order_note = order_runs(leaves, metas, opts.order)
    since = _since_index(runs, opts.since)
    models = sorted({lf.model for lf in leaves}, key=natural_key)
    table = _ignore(build_table(leaves, datas, runs, models, cols), opts.ignore_transforms)
    model_runs, commits = _used_runs(leaves, metas, runs, models)
    seg = segments.build(table, model_runs)
    steps, pending, flaky, current = find_changes(
        seg,
        model_runs,
        runs,
        models,
        cols.stages.names,
        cols.transforms.names,
        commits,
        opts.min_run,
        (opts.collapse_fraction, opts.fail_on),
        since,
    )
    problems = _problems(leaves, metas, runs, since)
    verdict, exit_code = _gate(steps, problems, opts)
    stats["cells"] = len(table)
    return History(
        root,
        layout,
        order,
        order_note,
        opts.min_run,
        opts.collapse_fraction,
        opts.fail_on,
        opts.since,
        _run_infos(leaves, metas, runs),
        _model_infos(models, model_runs, runs),
        problems,
        tuple(steps),
        tuple(pending),
        tuple(flaky),
        current,
        verdict,
        exit_code,
        tuple(notes),
        stats,
        table,
    )


def _ignore(table: pd.DataFrame, patterns: tuple[str, ...]) -> pd.DataFrame:
    """``table`` without the transforms ``--ignore-transform`` names (glob patterns)."""
    if not patterns:
        return table
    names = [n for n in table["transform"].cat.categories if any(fnmatchcase(n, p) for p in patterns)]
    return table[~table["transform"].isin(names)].reset_index(drop=True)


def _used_runs(
    leaves: list[Leaf], metas: list[LeafMeta], runs: list[str], models: list[str]
) -> tuple[list[np.ndarray], dict[tuple[int, int], str | None]]:
    """Per model, the (sorted) indexes of the runs whose leaf was read completely; and per (model, run)
    index pair, the leaf's commit."""
    run_index = {n: i for i, n in enumerate(runs)}
    model_code = {n: i for i, n in enumerate(models)}
    used: list[set[int]] = [set() for _ in models]
    commits: dict[tuple[int, int], str | None] = {}
    for lf, m in zip(leaves, metas, strict=False):
        commits[(model_code[lf.model], run_index[lf.run])] = m.commit
        if m.status == OK:
            used[model_code[lf.model]].add(run_index[lf.run])
    return [np.array(sorted(u), dtype=np.int64) for u in used], commits


def _problems(leaves: list[Leaf], metas: list[LeafMeta], runs: list[str], since: int) -> tuple[Problem, ...]:
    """The leaves whose counts are not used, in run order then model order."""
    run_index = {n: i for i, n in enumerate(runs)}
    return tuple(
        sorted(
            (
                Problem(lf.run, lf.model, lf.path, m.status, m.detail, run_index[lf.run] >= since)
                for lf, m in zip(leaves, metas, strict=False)
                if m.status != OK
            ),
            key=lambda p: (run_index[p.run], natural_key(p.model)),
        )
    )


def _gate(steps: list[Change], problems: tuple[Problem, ...], opts: HistoryOptions) -> tuple[Verdict, int]:
    """The verdict over the steps and incomplete runs in the window, and the command's exit code (an
    unreadable leaf in the window exits as an input error at least)."""
    # lazy: the table, steps and run readers load when a history is built, not on import
    from ad_diff.history.logkind import INCOMPLETE as RUN_INCOMPLETE
    from ad_diff.history.steps import judge

    findings = [
        f
        for s in steps
        if s.in_window
        for f in judge(s.stage, s.transform, s.before, s.after, opts.collapse_fraction, opts.fail_on).findings
    ]
    findings += [
        RUN_INCOMPLETE.make(run=f"{p.run}" + (f" ({p.model})" if p.model else ""), detail=p.detail)
        for p in problems
        if p.in_window and p.status == INCOMPLETE
    ]
    verdict = decide(findings, opts.fail_on)
    errors = any(p.in_window and p.status == ERROR for p in problems)
    return verdict, exit_with_input_errors(verdict, errors)


def _model_infos(models: list[str], model_runs: list[np.ndarray], runs: list[str]) -> tuple[ModelInfo, ...]:
    """Per model with a complete leaf: its first and last used run, how many, and whether it stopped
    before the history's last run."""
    model_code = {n: i for i, n in enumerate(models)}
    infos = []
    for n in models:
        u = model_runs[model_code[n]]
        if len(u):
            infos.append(ModelInfo(n, runs[int(u[0])], runs[int(u[-1])], len(u), int(u[-1]) != len(runs) - 1))
    return tuple(infos)


def _run_infos(leaves: list[Leaf], metas: list[LeafMeta], runs: list[str]) -> tuple[RunInfo, ...]:
    """Per run: its earliest ``started``, its commit when all its leaves agree, how many models it holds."""
    started: dict[str, datetime] = {}
    raw: dict[str, str] = {}
    commits: dict[str, set[str | None]] = {}
    count: dict[str, int] = {}
    for lf, m in zip(leaves, metas, strict=False):
        count[lf.run] = count.get(lf.run, 0) + 1
        commits.setdefault(lf.run, set()).add(m.commit)
        t = when(m.started)
        if t is not None and m.started is not None and (lf.run not in started or t < started[lf.run]):
            started[lf.run], raw[lf.run] = t, m.started
    out = []
    for i, n in enumerate(runs):
        c = commits.get(n, set())
        out.append(RunInfo(n, i, raw.get(n), next(iter(c)) if len(c) == 1 else None, count.get(n, 0)))
    return tuple(out)
