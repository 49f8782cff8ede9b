"""Completeness by content (issue 45): what a run's files say about whether it is the run it claims to be.

Three checks, each a gating input finding, run once the kinds have parsed both runs:

* a copy: the candidate's log files are byte for byte the baseline's although they hold per-run values
  (timestamps, timings, memory figures: what the accounting's noise rules of those names rewrite; at least
  :data:`MIN_VALUES` distinct numbers among them), which two runs never share (``ADI008``); logs with no
  such value cannot be told apart by content, and the report says so in a note (nothing gates). Sizes are
  compared first: two honest runs' logs almost never have one size, and then nothing is read;
* a per-rank log layout whose rank entry holds no log to compare: an entry named like a rank that is not a
  folder (a FIFO, a file), a rank folder with no stream log, or a rank whose logs are all empty
  (``ADI009``): dropped, the run would look smaller and could pass;
* transforms of the two runs whose names differ only by look-alike characters (``ADI010``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import xxhash

from ad_diff.core import lazy, safepath
from ad_diff.core.confusable import confusable_pairs, differences
from ad_diff.core.model import Finding
from ad_diff.core.rules import CONFUSABLE_NAMES, COPIED_BASELINE, RANK_LOG_MISSING
from ad_diff.discover import LogFile, RunArtifacts
from ad_diff.discover.capture import CapturedLines
from ad_diff.errors import InputError
from ad_diff.explain.accounting.noise import NOISE_RULES

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context

PER_RUN = ("timestamps", "timings", "memory-figures")
"""The noise rules whose rewrites mark a value no two runs share."""
_CHUNK = 1 << 20
_TORCHRUN = lazy.pattern(r"^attempt_\d+$")
_MPI = lazy.pattern(r"^rank\.(\d+)$")
_STREAMS = frozenset({"stdout.log", "stderr.log", "stdout", "stderr"})


def _root(lf: LogFile) -> Path:
    return safepath.given_root(lf.path) if lf.root is None else lf.root


def _size(lf: LogFile) -> int | None:
    try:
        with safepath.open_file(lf.path, _root(lf), "a log file") as f:
            return os.fstat(f.fileno()).st_size
    except InputError:
        return None


def _digest(lf: LogFile) -> bytes | None:
    h = xxhash.xxh3_128()
    try:
        with safepath.open_file(lf.path, _root(lf), "a log file") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
    except (InputError, OSError):
        return None
    return h.digest()


MIN_VALUES = 3
"""Distinct per-run numbers a log must hold to be told from a copy: a value that never varies (a template's
``time: 0.100s`` on every line) says nothing about when or how a run ran."""
_NUMBER = lazy.pattern(r"\d+(?:[.:]\d+)*")


def _per_run_values(art: RunArtifacts) -> dict[str, int]:
    """How many distinct numbers each per-run noise rule finds in ``art``'s logs (only rules that find
    some): what a rule rewrites away is the per-run value, and its numbers tell one run from another."""
    rules = [r for r in NOISE_RULES if r.name in PER_RUN and r.normalise is not None]
    found: dict[str, set[str]] = {r.name: set() for r in rules}
    for lf in art.logs:
        try:
            for _n, text, _complete, _launcher in CapturedLines(lf.path, "a log file", lf.root):
                for r in rules:
                    assert r.normalise is not None
                    done = r.normalise(text, art.root)
                    if done != text and len(found[r.name]) < 1000:
                        gone = set(text.split()) - set(done.split())
                        found[r.name].update(n for t in gone for n in _NUMBER.findall(t))
        except InputError:
            continue  # the log kind reports an unreadable log
    return {k: len(v) for k, v in found.items() if v}


def copied(ctx: Context) -> list[Finding]:
    """``ADI008`` when the candidate's logs are the baseline's bytes although they hold per-run values;
    a note when they are the same bytes and hold none."""
    base, cand = ctx.baseline.logs, ctx.candidate.logs
    if ctx.from_snapshot or not base or len(base) != len(cand):
        return []
    if any(_size(b) != _size(c) or _size(b) is None for b, c in zip(base, cand, strict=True)):
        return []
    if any(_digest(b) != _digest(c) or _digest(b) is None for b, c in zip(base, cand, strict=True)):
        return []
    values = _per_run_values(ctx.candidate)
    if sum(values.values()) < MIN_VALUES:
        ctx.notes.append("the candidate's log is byte-identical to the baseline's and records no per-run "
                         "value (timestamp, timing, memory figure): by their logs, the two runs cannot be "
                         "told apart")
        return []
    said = ", ".join(f"{n} distinct {name.replace('-', ' ')}" for name, n in values.items())
    return [COPIED_BASELINE.make(values=said, evidence={"per_run_values": values})]


def _rank_of(name: str, parent: str) -> str | None:
    """The rank an entry of a layout folder stands for (``3`` in ``attempt_0/``, ``rank.3``), else None."""
    if name.isdigit() and _TORCHRUN.match(parent):
        return name
    m = _MPI.match(name)
    return m.group(1) if m else None


def rank_gaps(art: RunArtifacts) -> list[Finding]:
    """``ADI009`` for every rank entry of ``art``'s per-rank layout that holds no log to compare."""
    ranked = [lf for lf in art.logs
              if lf.rank is not None and lf.root is not None and lf.path.name in _STREAMS]
    if not ranked:
        return []
    folders = {lf.path.parent.parent for lf in ranked}  # attempt_<k>/ or the mpirun job folder
    used: dict[Path, list[LogFile]] = {}
    for lf in ranked:
        used.setdefault(lf.path.parent, []).append(lf)
    out: list[Finding] = []
    for folder in sorted(folders):
        try:
            names = safepath.list_names(folder, art.root, "a folder of per-rank logs")
        except InputError:
            continue  # the layout's own reader refused it, by name
        for name in names:
            rank = _rank_of(name, folder.name)
            if rank is None:
                continue
            entry = folder / name
            files = used.get(entry)
            if files is None:
                kind = safepath.refusal(entry, art.root)  # as a file: a folder says so
                why = ("holds no stdout or stderr log" if kind is not None and "folder, not a file" in kind
                       else "is not a folder of logs (a FIFO, socket, device, file or link)")
                out.append(RANK_LOG_MISSING.make(entry=str(entry), why=why, rank=rank))
            elif all(_size(lf) == 0 for lf in files):
                out.append(RANK_LOG_MISSING.make(entry=str(entry), why="its logs are empty", rank=rank))
    return out


def confusable(ctx: Context) -> list[Finding]:
    """``ADI010`` for each pair of transforms, one per run, that differ only by look-alike characters."""
    if ctx.baseline_log is None or ctx.candidate_log is None:
        return []
    a = [r.transform for r in ctx.baseline_log.transforms]
    b = [r.transform for r in ctx.candidate_log.transforms]
    return [CONFUSABLE_NAMES.make(a=x, b=y, where=differences(x, y)) for x, y in confusable_pairs(a, b)]


def check(ctx: Context) -> list[Finding]:
    """Every finding of this module for the pair in ``ctx``."""
    return [*copied(ctx), *rank_gaps(ctx.baseline), *rank_gaps(ctx.candidate), *confusable(ctx)]


__all__ = ["PER_RUN", "check", "confusable", "copied", "rank_gaps"]
