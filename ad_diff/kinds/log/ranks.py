"""From the parser's per-rank state to a :class:`RunLog`: how each rank's pipeline ended, which rank leads.

A rank *crashed* when a traceback or fatal error follows its last result before its pipeline finished (or
while a transform was running); a traceback after the pipeline's final transform, or one Python reports as
``Exception ignored``, is only an :class:`AfterEnd` note. Whether a clean-looking rank stopped early is not
decided here: that needs the other run and the other ranks (:mod:`ad_diff.kinds.log.rules`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ad_diff.core.model import State, TransformRecord
from ad_diff.discover.logs import LogFile
from ad_diff.errors import InputError
from ad_diff.kinds.log.lines import WHAT
from ad_diff.kinds.log.model import AfterEnd, IssueKind, LogEnd, LogIssue, RankLog, RunLog, pipeline_finished
from ad_diff.kinds.log.rankstate import Error
from ad_diff.kinds.log.state import LogParser


def _where(e: Error | tuple[Path, int], multi: bool) -> str:
    path, line = (e.path, e.line) if isinstance(e, Error) else e
    return f"{path.name}:{line}" if multi else f"line {line}"


def _end(p: LogParser, key: int | None, multi: bool
         ) -> tuple[LogEnd, str, AfterEnd | None, str | None]:
    """How the pipeline of the rank whose state is ``p.ranks[key]`` ended, a note of an error after it, and
    the text of the error that ended it (``None`` when none did)."""
    st = p.ranks[key]
    rank = key
    records = st.records
    finished = pipeline_finished(records)
    after = [e for e in p.errors if e.pos > st.last_pos and (e.rank == rank or e.rank is None)]
    fatal = next((e for e in after if not e.ignored), None)
    if fatal is not None and (st.pending is not None or not finished):
        return LogEnd.CRASHED, f"{_where(fatal, multi)}: {fatal.text}", None, fatal.text
    logged = p.fatal.get(rank)
    if logged and logged[0] > st.last_pos and st.pending is not None:
        return LogEnd.CRASHED, f"{_where((st.path, logged[1]), multi)}: {logged[2]}", None, logged[2]
    note = fatal or (after[0] if after else None)
    after_end = None
    if note is not None:
        after_end = AfterEnd(note.line, note.text, note.ignored, note.path if multi else None)
    if st.pending is not None:
        pend = st.pending
        return (LogEnd.TRUNCATED, f"stops inside {pend.stage}/{pend.transform} (started at "
                f"{_where((st.path, pend.line), multi)})", after_end, None)
    last_pos, last_rank = p.last_ad
    if p.cut_mid_line and last_pos == p.base + p.lines and last_rank == rank:
        return LogEnd.TRUNCATED, f"last line ({p.lines}) is cut mid-line", after_end, None
    if not records:
        return LogEnd.EMPTY, "no transform result", after_end, None
    last = records[-1]
    return LogEnd.COMPLETE, f"{len(records)} transforms, last {last.stage}/{last.transform}", after_end, None


def _rank_log(p: LogParser, key: int | None, rank: int | None, multi: bool) -> RankLog:
    """The :class:`RankLog` of state ``p.ranks[key]``, reported as ``rank``."""
    st = p.ranks[key]
    if st.pending is not None and st.pending.failure is not None:
        p.close_pending(st)
    end, detail, after_end, error = _end(p, key, multi)
    records = [replace(r, said=tuple(sorted(said.items())))
               if (said := st.said.get((r.stage, r.transform))) else r for r in st.records]
    if st.pending is not None:
        pend = st.pending
        records.append(TransformRecord(pend.stage, pend.transform, 0, State.INCOMPLETE, None, pend.line))
    untagged = p.ranks.get(None)
    restored = st.restored or (untagged.restored if untagged else None)
    return RankLog(rank, st.path, tuple(records), end, detail, st.pipelines, restored, after_end,
                   pipeline_finished(st.records), tuple(st.events), error)


def disagreements(primary: RankLog, others: tuple[RankLog, ...]) -> tuple[str, ...]:
    """``stage/transform (rank n)`` for every transform another rank logged differently from ``primary`` (a
    transform a rank stopped inside is its stop, not a disagreement)."""
    mine = {(r.stage, r.transform): (r.state, r.matches) for r in primary.transforms
            if r.state is not State.INCOMPLETE}
    out: set[str] = set()
    for rl in others:
        if rl.rank is None or rl.rank == primary.rank:
            continue
        for r in rl.transforms:
            k = (r.stage, r.transform)
            if k in mine and r.state is not State.INCOMPLETE and mine[k] != (r.state, r.matches):
                out.add(f"{r.stage}/{r.transform} (rank {rl.rank})")
    return tuple(sorted(out))


def with_primary(log: RunLog, rank: int | None) -> RunLog:
    """``log`` with ``rank`` as its primary rank (its records up front); ``log`` itself if it is already."""
    if rank == log.rank or not log.ranks:
        return log
    rl = log.rank_log(rank)
    if rl is None:
        seen = ", ".join(map(str, log.ranks_seen))
        raise InputError(log.path, f"has no lines of rank {rank}; ranks seen: {seen}")
    issues = tuple(i for i in log.issues if i.kind is not IssueKind.RETRY)
    return replace(log, transforms=rl.transforms, rank=rank, end=rl.end, end_detail=rl.end_detail,
                   pipelines=rl.pipelines, restored=rl.restored, path=rl.path,
                   rank_disagreement=disagreements(rl, log.ranks), issues=issues)


def _primary(p: LogParser, path: Path, rank: int | None, tagged: list[int]) -> int | None:
    if not tagged:
        return None
    if rank is None:
        with_results = [r for r in tagged if p.ranks[r].records or p.ranks[r].pending]
        return 0 if 0 in with_results else (with_results or tagged)[0]
    if rank not in tagged:
        seen = ", ".join(map(str, tagged))
        raise InputError(path, f"has no lines of rank {rank}; ranks seen: {seen} (use --rank)")
    return rank


def assemble(p: LogParser, files: tuple[LogFile, ...], rank: int | None, capture: tuple[str, ...],
             lines: int) -> RunLog:
    """The :class:`RunLog` of a finished :class:`LogParser` pass (:func:`ad_diff.kinds.log.parse.parse`)."""
    path = files[0].path
    multi = len(files) > 1
    tagged = sorted(r for r in p.ranks if r is not None)
    chosen = _primary(p, path, rank, tagged)
    untagged = p.ranks.get(None)
    key = chosen
    if chosen is not None and untagged and untagged.records and not p.ranks[chosen].records:
        key = None  # L1 lines logged before set_rank() carry no rank tag
    st = p.ranks[key]
    if not st.records and st.pending is None:
        others = ", ".join(str(r) for r in tagged if r != chosen and p.ranks[r].records)
        hint = f"; ranks with results: {others} (use --rank)" if others else f"; expected {WHAT}"
        raise InputError(st.path, f"rank {chosen} logged no transform result{hint}")
    primary = _rank_log(p, key, chosen, multi)
    ranks = [primary]
    for r in tagged:
        if r != chosen and (p.ranks[r].records or p.ranks[r].pending):
            ranks.append(_rank_log(p, r, r, multi))
    ranks.sort(key=lambda x: -1 if x.rank is None else x.rank)
    issues = list(p.issues)
    for line in st.restarts:
        issues.append(LogIssue(line, IssueKind.RETRY, "pipeline restarted here; the last pipeline is used"))
    if p.replaced_bytes:
        issues.append(LogIssue(0, IssueKind.ENCODING,
                               f"{p.replaced_bytes} lines held bytes that are not UTF-8"))
    return RunLog(
        path=primary.path,
        transforms=primary.transforms,
        rank=chosen,
        ranks_seen=tuple(tagged),
        rank_disagreement=disagreements(primary, tuple(ranks)),
        formats=tuple(sorted(p.formats)),
        prefixes=tuple(sorted(p.prefixes)),
        end=primary.end,
        end_detail=primary.end_detail,
        issues=tuple(sorted(issues, key=lambda i: (i.line, i.kind, i.text))),
        pipelines=primary.pipelines,
        lines=lines,
        restored=primary.restored,
        anonymous=p.anonymous,
        ranks=tuple(ranks),
        sources=tuple(f.path for f in files),
        capture=capture,
    )
