"""A log writer driven by the parsed model: a :class:`~ad_diff.core.runlog.RunLog` written out again in any
form the log reader accepts (FORMATS.md 1: message formats V0-V3, logger prefixes L1-L3 and bare lines,
verbosity, one file or one file per rank, file names, compression).

It is the other half of the metamorphic tests: what a run *did* (each rank's transform results, the lines a
transform logged that no reader claims, cache restores and events, restarts, how each rank ended) is written
from the model; how it is printed is chosen by a :class:`Form`. A form that cannot carry a fact of the run
(V0 has no ``enabled=`` and so no ``disabled``; its failure line names no stage) raises :class:`CannotCarry`,
so a test never calls lossy re-printing harmless.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from ad_diff.core.model import State, TransformRecord
from ad_diff.core.runlog import Cache, LogEnd, RankLog, RunLog

FORMATS = ("V0", "V1", "V2", "V3")
PREFIXES = ("L1", "L2", "L3", "bare")
LAYOUTS = ("single", "mpirun", "torchrun")
COMPRESSIONS = ("", ".gz", ".bz2", ".xz")
NAMES = ("ad.log", "run.log", "slurm-4242.out", "job.txt")
_COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}
_L1_TAG = {"critical": "F", "error": "E", "warning": "W", "info": "I", "debug": "V"}
_L2_TAG = {"critical": "CRITICAL", "error": "ERROR", "warning": "WARNING", "info": "INFO", "debug": "DEBUG"}


class CannotCarry(Exception):
    """The form cannot print a fact of this run: writing it would not be a harmless re-print."""


@dataclass(frozen=True)
class Form:
    """How a run's log is printed."""

    fmt: str = "V3"
    prefix: str = "L1"
    debug: bool = False
    """Debug level on: config lines, ``Model after`` reprs, ``[CUDA MEM]`` lines (all claimed by the
    reader)."""
    layout: str = "single"
    """One file (``single``) or one file per rank as mpirun ``--output-filename`` or torchrun ``--log-dir``
    write them."""
    name: str = "ad.log"
    compression: str = ""

    def __str__(self) -> str:
        extra = [x for x in (self.debug and "debug", self.layout != "single" and self.layout,
                             self.name != "ad.log" and self.name, self.compression) if x]
        return "-".join([self.fmt, self.prefix, *map(str, extra)])


def forms() -> list[Form]:
    """Every combination of message format and prefix an AD version printed, each with and without debug
    lines (layouts, names and compression vary separately: :func:`variants`)."""
    pairs = [("V0", "L1"), ("V1", "L1"), ("V2", "L1"), ("V3", "L1"), ("V3", "L2"), ("V3", "L3"),
             ("V3", "bare")]
    return [Form(f, p, d) for f, p in pairs for d in (False, True)]


def variants() -> list[Form]:
    """:func:`forms` crossed with every layout, file name and compression, for the long profile."""
    return [Form(f.fmt, f.prefix, f.debug, layout, name, comp)
            for f in forms() for layout in LAYOUTS for name in NAMES for comp in COMPRESSIONS]


class _Lines:
    """The lines of one rank: (level or ``None`` for a raw line, text)."""

    def __init__(self, form: Form, rank: int | None, tagged: bool, start: datetime) -> None:
        self.form, self.rank, self.tagged = form, rank, tagged
        self.out: list[str] = []
        self.clock = start

    def ad(self, level: str, msg: str) -> None:
        if level == "debug" and not self.form.debug:
            return
        self.clock += timedelta(seconds=1)
        first, *rest = msg.split("\n")
        p, rank = self.form.prefix, self.rank if self.tagged else None
        tag = f" [RANK {rank}]" if rank is not None else ""
        if p == "L1":
            line = f"[{self.clock:%m/%d/%Y-%H:%M:%S}] [TRT-LLM AUTO-DEPLOY]{tag} [{_L1_TAG[level]}] {first}"
        elif p == "L2":
            line = f"[AUTO-DEPLOY] [{_L2_TAG[level]}] {first}"
        elif p == "L3":
            line = f"[AUTO-DEPLOY] [{_L2_TAG[level]}]{tag} {first}"
        else:
            line = first
        self.out.append(line)
        self.out.extend(rest)

    def raw(self, *lines: str) -> None:
        self.out.extend(lines)


def _ctx(r: TransformRecord, form: Form) -> str:
    """The transform context a message carries in this form (L2 drops it for every V3 line)."""
    if form.prefix == "L2":
        return ""
    return f"[stage={r.stage}, transform={r.transform}] "


def _said(r: TransformRecord) -> list[tuple[str, str]]:
    out = []
    for text, n in r.said:
        level, _, msg = text.partition(" ")
        out += [(level, msg)] * n
    return out


def _times(r: TransformRecord, i: int, salt: int) -> tuple[float, float, float, float]:
    """The times the run logged for ``r`` (a run's own values: two runs never share them), else made up for
    this run (``salt``)."""
    if r.timing is not None:
        return r.timing.total, r.timing.pre, r.timing.apply, r.timing.post
    pre, apply, post = 0.001 * (i % 7), 0.013 * (1 + (i + salt) % 5) + 0.001 * salt, 0.021 * (i % 3)
    return round(pre + apply + post, 3), pre, apply, post


def _v3(w: _Lines, r: TransformRecord, i: int, done: bool) -> None:
    c, t = _ctx(r, w.form), r.transform
    apply = "" if w.form.prefix == "L2" else "[APPLY] "
    w.ad("debug", f"{c}{t} config: stage=<Stages.{r.stage.upper()}: '{r.stage}'> enabled=True")
    if r.state is State.DISABLED:
        w.ad("info", f"{c}[SUMMARY] disabled")
        return
    w.ad("info", f"{c}[PRE-CLEANUP] graph canonicalization")
    w.ad("info", f"{c}{apply}applying transform...")
    for level, msg in _said(r):
        w.ad(level, f"{c}{apply}{msg}")
    if r.failure is not None:
        w.ad("warning", f"{c}{apply}Transform {t} failed: {r.failure}")
    if not done:
        return
    w.ad("info", f"{c}[POST-CLEANUP] skipped (graph already clean)")
    w.ad("debug", f"{c}[CUDA MEM] free:  60.00GB | resv:   3.20GB | alloc:   3.00GB | frag:   0.20GB")
    total, pre, ap, post = _times(r, i, w.clock.minute)
    tm = f"time: {total:.3f}s (pre={pre:.3f}s, apply={ap:.3f}s, post={post:.3f}s)"
    result = "skipped" if r.matches is None else f"matches={r.matches}"
    w.ad("info", f"{c}[SUMMARY] {result} | {tm}")
    w.ad("debug", f"{c}Model after {t}: GraphModule(\n  (model): Module()\n)")


def _kv(r: TransformRecord) -> str:
    enabled = r.state is not State.DISABLED
    res = "skipped=True" if r.matches is None else f"num_matches={r.matches}"
    return f"enabled={enabled}, {res}, is_clean={r.matches in (None, 0)}, has_valid_shapes=False"


def _v012(w: _Lines, r: TransformRecord, i: int, done: bool) -> None:
    fmt, t = w.form.fmt, r.transform
    c = f"[stage={r.stage}, transform={t}] "
    own = c if fmt == "V2" else ""  # V2 patches the logger for the transform's own lines; V0 and V1 do not
    enabled = r.state is not State.DISABLED
    if fmt == "V0" and (not enabled or r.failure is not None):
        raise CannotCarry("V0 prints no enabled= (disabled reads as skipped) and no stage on a failure")
    if enabled and fmt != "V0":
        w.ad("info", f"{c}running pre-cleanup (no shape_prop)" if fmt == "V1"
             else f"{c}running graph cleanup (no shape_prop)")
    for level, msg in _said(r):
        w.ad(level, f"{own}{msg}")
    if r.failure is not None:
        w.ad("warning", f"{own}Transform {t} failed: {r.failure}")
    if not done:
        return
    if fmt == "V0":
        w.ad("info", f"stage={r.stage}, transform={t}, {_kv(r).removeprefix('enabled=True, ')}")
        return
    w.ad("info", f"{c}{_kv(r)}")
    w.ad("debug", f"{c}{'Graph' if fmt == 'V1' else 'Model'} after {t}: GraphModule(\n  (model): Module()\n)")
    if fmt == "V2":
        total, pre, ap, post = _times(r, i, w.clock.minute)
        w.ad("info", f"{c}elapsed time: total={total:.3f}s, pre_cleanup={pre:.3f}s, apply={ap:.3f}s, "
                     f"post_cleanup={post:.3f}s")


def _traceback(w: _Lines, text: str) -> None:
    w.raw("Traceback (most recent call last):", '  File "/opt/ad/build_and_run_ad.py", line 212, in <module>',
          "    main()", text)


def _restore(w: _Lines, rl: RankLog) -> None:
    rs = rl.restored
    assert rs is not None
    if rs.cache is Cache.GRAPH:
        w.ad("info", f"[cache] Loaded graph from {rs.source}")
    else:
        w.ad("info", f"Restored AutoDeploy pipeline snapshot for '{rs.boundary}' from {rs.source}")


def _rank(form: Form, rl: RankLog, tagged: bool, start: datetime) -> list[str]:
    w = _Lines(form, rl.rank, tagged, start)
    w.raw("[TensorRT-LLM] TensorRT-LLM version: 1.2.0", "Loading checkpoint shards: 100%|####| 2/2")
    if form.fmt in ("V0", "V1") and rl.restored is not None:
        raise CannotCarry("a cache restore is newer than V0 and V1 logs")
    if rl.pipelines > 1 and rl.transforms:  # an abandoned first attempt, then the pipeline again
        first = rl.transforms[0]
        for _ in range(rl.pipelines - 1):
            _record(w, first, 0, True)
            w.raw("RuntimeError: retrying after a transient error")
    for e in rl.events:
        w.ad("info", e.text)
    for i, r in enumerate(rl.transforms):
        if rl.restored is not None and i == rl.restored.after:
            _restore(w, rl)
        _record(w, r, i, r.state is not State.INCOMPLETE)
    if rl.restored is not None and rl.restored.after >= len(rl.transforms):
        _restore(w, rl)
    if rl.end is LogEnd.CRASHED:
        if rl.error is None:
            raise CannotCarry("a crash whose error the model does not hold")
        _traceback(w, rl.error)
    elif rl.end is LogEnd.TRUNCATED and not (rl.transforms and rl.transforms[-1].state is State.INCOMPLETE):
        raise CannotCarry("a log cut mid-line")
    if rl.after_end is not None:
        if rl.after_end.ignored:
            w.raw("Exception ignored in: <function Executor.__del__ at 0x7f00>")
        _traceback(w, rl.after_end.text)
    return w.out


def _record(w: _Lines, r: TransformRecord, i: int, done: bool) -> None:
    if r.stage == "?" and w.form.prefix != "L2":
        raise CannotCarry("a result that named no transform (no name to print; L2 needs none)")
    if w.form.fmt == "V3":
        _v3(w, r, i, done)
    else:
        _v012(w, r, i, done)


def render(log: RunLog, form: Form, root_only_dumps: bool = False, dumps_fit: bool = True,
           start: datetime = datetime(2026, 3, 1, 9, 0, 0)) -> dict[str, bytes]:
    """The files (path relative to the run folder -> bytes) of ``log`` printed in ``form``.

    ``root_only_dumps``: the run's dumps are D1/D2 (older than the standalone L2 logger, whose unnamed results
    are named from a D3 dump folder's order). ``dumps_fit``: the dumps name transforms of this log, in its
    order (when they do not, as in a folder left over from another run, an L2 log cannot say which transform
    each result was). ``start``: when the run began (the logger's timestamps count from it)."""
    ranks = log.rank_logs()
    multi = len(ranks) > 1
    if form.fmt != "V3" and form.prefix != "L1":
        raise CannotCarry(f"{form.fmt} was printed by the TRT-LLM logger (L1) only")
    if form.prefix == "L2" and root_only_dumps:
        raise CannotCarry("the L2 logger is newer than root-only (D1/D2) dumps")
    if form.prefix == "L2" and not dumps_fit:
        raise CannotCarry("L2 results are named from the dumps, which are not this log's")
    if form.prefix == "L2" and any(rl.pipelines > 1 for rl in ranks):
        raise CannotCarry("L2 names no transform, so a pipeline that starts again cannot be told apart")
    tag_lines = form.prefix in ("L1", "L3")
    layout = form.layout
    if not tag_lines and layout == "single" and (multi or ranks[0].rank is not None):
        layout = "mpirun"  # a prefix without rank tags: only a per-rank layout keeps which rank printed
    if layout != "single" and any(rl.rank is None for rl in ranks):
        raise CannotCarry("lines of no rank cannot go to a per-rank file")
    texts: dict[str, list[str]] = {}
    for rl in ranks:
        lines = _rank(form, rl, tagged=tag_lines, start=start)
        if layout == "single":
            texts.setdefault(form.name, []).extend(lines)
        elif layout == "mpirun":
            texts[f"mpi-out/1/rank.{rl.rank}/stdout"] = lines
        else:
            texts[f"torchrun-logs/abc123_x/attempt_0/{rl.rank}/stdout.log"] = lines
    out: dict[str, bytes] = {}
    for name, lines in texts.items():
        data = ("\n".join(lines) + "\n").encode("utf-8")
        if form.compression and layout == "single":
            out[name + form.compression] = _COMPRESS[form.compression](data)
        else:
            out[name] = data
    return out


def write(log: RunLog, form: Form, run: Path, root_only_dumps: bool = False, dumps_fit: bool = True) -> None:
    """Replace the log files of the run folder ``run`` (``log.sources``) by ``log`` printed in ``form``."""
    if any(src.is_symlink() for src in log.sources):
        raise CannotCarry("the log is a link (to the other run's file): which file it is, is the fact")
    # two runs start at different times: the run folder's name picks the hour (baseline, candidate differ)
    start = datetime(2026, 3, 1, 9, 0, 0) + timedelta(minutes=zlib.crc32(run.name.encode()) % 600)
    files = render(log, form, root_only_dumps, dumps_fit, start)
    for src in log.sources:
        src.unlink()
    for rel, data in files.items():
        path = run / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


__all__ = ["COMPRESSIONS", "FORMATS", "LAYOUTS", "NAMES", "PREFIXES", "CannotCarry", "Form", "forms",
           "render",
           "variants", "write"]
