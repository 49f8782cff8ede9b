"""AutoDeploy log parser: every message format (V0-V3) and logger prefix (L1-L3) of FORMATS.md §1, all ranks.

The parser is a single streaming pass over the log's files (one, or one per rank). Each line, with the
prefixes of CI systems and launchers already stripped (:class:`ad_diff.discover.capture.CapturedLines`), is
split into (prefix, rank, level, message); messages carrying ``[stage=..., transform=...]`` (or the
bracket-less V0 form) feed a small per-rank state machine that turns the result lines into
:class:`TransformRecord` values. A line's rank is its ``[RANK n]`` tag, else the launcher's tag, else the
rank its file belongs to. Lines of other loggers are noise, except the tracebacks and fatal signals that
may end a rank; lines that look like AutoDeploy transform results but match no known format are kept as
``unrecognised`` issues so the report can say what it could not read. :mod:`.state` holds the state
machine, and :mod:`.ranks` turns its state into a :class:`RunLog`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ad_diff.discover.capture import LAYERS, CapturedLines
from ad_diff.discover.logs import LogFile
from ad_diff.errors import InputError
from ad_diff.kinds.log.lines import WHAT
from ad_diff.kinds.log.model import RunLog
from ad_diff.kinds.log.ranks import assemble
from ad_diff.kinds.log.state import LogParser


def _unknown_prefix(captured: Sequence[CapturedLines]) -> str:
    seen = next((c for c in captured if c.unknown is not None), None)
    if seen is None or seen.unknown is None:
        return ""
    line, prefix = seen.unknown
    where = f"{seen.path.name}:{line}" if len(captured) > 1 else f"line {line}"
    known = ", ".join(x.label for x in LAYERS)
    return (f"; {where} looks like an AutoDeploy line but starts with {prefix!r}, which is no capture prefix "
            f"ad-diff knows ({known})")


def parse(source: Path | Sequence[LogFile], rank: int | None = 0) -> RunLog:
    """Parse a run's AutoDeploy log (one file, or :class:`LogFile` s: one per rank) into a :class:`RunLog`.

    ``rank`` is the primary rank (whose records the reports show; it must appear when lines carry rank
    tags); ``None`` picks rank 0, else the lowest rank seen. Every rank is parsed either way.
    Raises :class:`InputError` for unreadable, binary or empty logs, logs without any transform line, and
    a requested rank that never appears.
    """
    files = (LogFile(source),) if isinstance(source, Path) else tuple(source)
    p = LogParser()
    captured: list[CapturedLines] = []
    total_lines = 0
    for lf in files:
        p.path = lf.path
        p.base = total_lines
        p.lines = 0
        p.cut_mid_line = False
        lines = CapturedLines(lf.path, WHAT, lf.root)
        captured.append(lines)
        feed, file_rank = p.feed, lf.rank
        n = 0
        try:
            if file_rank is None:
                for n, text, complete, launcher in lines:
                    feed(n, text, complete, launcher)
            else:
                for n, text, complete, launcher in lines:
                    feed(n, text, complete, launcher if launcher is not None else file_rank)
        except ValueError as e:  # float('1..2') seconds, a count or rank beyond limits.INT_DIGITS
            raise InputError(
                lf.path, f"holds a number AD never writes (a count, rank or time): {str(e)[:120]}", n
            ) from None
        if p.lines == 0 and len(files) == 1:
            raise InputError(lf.path, f"is empty; expected {WHAT}")
        total_lines += p.lines
    if not any(st.records or st.pending for st in p.ranks.values()):
        what = f"in its {len(files)} files " if len(files) > 1 else ""
        raise InputError(files[0].path, f"holds no AutoDeploy transform lines {what}({total_lines} lines "
                                        f"read); expected {WHAT}{_unknown_prefix(captured)}")
    layers = tuple(dict.fromkeys(x.name for c in captured for x in c.layers))
    if any(c.groups for c in captured):
        layers += ("github-group",)
    return assemble(p, files, rank, layers, total_lines)


def as_dict(log: RunLog) -> dict[str, object]:
    """Plain-data view of a parsed log (golden parser fixtures and debugging); facts a log does not have
    (other ranks, a restore, an error after the pipeline, capture prefixes) are left out."""
    out = _as_dict(log)
    if len(log.ranks) > 1:
        out["ranks"] = [{"rank": rl.rank, "end": rl.end.value, "end_detail": rl.end_detail,
                         "finished": rl.finished,
                         "transforms": [[r.transform, r.state.value, r.matches] for r in rl.transforms]}
                        for rl in log.ranks]
    if log.restored is not None:
        out["restored"] = [log.restored.boundary, log.restored.source, log.restored.line]
    after = [rl.after_end for rl in log.ranks if rl.after_end is not None]
    if after:
        out["after_end"] = [after[0].line, after[0].text, after[0].ignored]
    if log.capture:
        out["capture"] = list(log.capture)
    return out


def _as_dict(log: RunLog) -> dict[str, object]:
    return {
        "rank": log.rank,
        "ranks_seen": list(log.ranks_seen),
        "rank_disagreement": list(log.rank_disagreement),
        "formats": list(log.formats),
        "prefixes": list(log.prefixes),
        "end": log.end.value,
        "end_detail": log.end_detail,
        "pipelines": log.pipelines,
        "lines": log.lines,
        "issues": [[i.line, i.kind.value, i.text] for i in log.issues],
        "transforms": [
            {
                "stage": r.stage,
                "transform": r.transform,
                "state": r.state.value,
                "matches": r.matches,
                "line": r.line,
                "timing": None if r.timing is None
                else [r.timing.total, r.timing.pre, r.timing.apply, r.timing.post],
                "failure": r.failure,
                "flags": dict(r.flags),
            }
            for r in log.transforms
        ],
    }
