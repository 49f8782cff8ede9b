"""AutoDeploy log parser: every message format (V0-V3) and line prefix (L1-L3) of FORMATS.md §1.

The parser is a single streaming pass. Each line is split into (prefix, rank, level, message); messages
carrying ``[stage=..., transform=...]`` (or the bracket-less V0 form) feed a small per-rank state machine
that turns the result lines into :class:`TransformRecord` values. Lines of other loggers are noise and
are skipped; lines that look like AutoDeploy transform results but match no known format are kept as
``unrecognised`` issues so the report can say what it could not read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ad_diff.core.model import State, Timing, TransformRecord
from ad_diff.core.text import iter_lines
from ad_diff.errors import InputError
from ad_diff.kinds.log import lines as g
from ad_diff.kinds.log.lines import WHAT
from ad_diff.kinds.log.model import IssueKind, LogEnd, LogIssue, RunLog


@dataclass
class _Pending:
    """A transform seen starting (cleanup/apply lines) whose result line has not come yet."""

    stage: str
    transform: str
    line: int
    failure: str | None = None


@dataclass
class _RankState:
    """Per-rank state machine: records of the current pipeline plus the ones before a restart."""

    records: list[TransformRecord] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    pending: _Pending | None = None
    pipelines: int = 1
    restarts: list[int] = field(default_factory=list)
    last_line: int = 0


class _LogParser:
    """One pass over one log; see module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ranks: dict[int | None, _RankState] = {}
        self.formats: set[str] = set()
        self.prefixes: set[str] = set()
        self.issues: list[LogIssue] = []
        self.fatal_after: dict[int | None, tuple[int, str]] = {}
        self.last_ad_line = 0
        self.last_exc: tuple[int, str] | None = None
        self.in_traceback = False
        self.lines = 0
        self.cut_mid_line = False
        self.replaced_bytes = 0
        self.anonymous = 0

    # -- records ----------------------------------------------------------------------------------
    def state_for(self, rank: int | None) -> _RankState:
        st = self.ranks.get(rank)
        if st is None:
            st = self.ranks[rank] = _RankState()
        return st

    def emit(self, st: _RankState, rec: TransformRecord) -> None:
        key = (rec.stage, rec.transform)
        if key in st.seen:
            # A key runs once per pipeline, so seeing it again means the pipeline started over (a retry
            # in the same log). The last pipeline is what the run finally did.
            st.pipelines += 1
            st.restarts.append(rec.line)
            st.records = []
            st.seen = set()
        st.seen.add(key)
        st.records.append(rec)
        st.pending = None

    def close_pending(self, st: _RankState) -> None:
        """Settle a transform that started but whose result line never came, because another began.

        A logged failure is a result of its own (``failed``); anything else is reported as an issue, since
        the pipeline went on without that transform saying how it ended.
        """
        p = st.pending
        if p is None:
            return
        if p.failure is not None:
            self.emit(st, TransformRecord(p.stage, p.transform, 0, State.FAILED, None, p.line,
                                          failure=p.failure))
        else:
            self.issues.append(LogIssue(p.line, IssueKind.NO_RESULT,
                                        f"{p.stage}/{p.transform} started but logged no result"))
        st.pending = None

    def on_transform_message(self, n: int, rank: int | None, stage: str, transform: str, rest: str) -> None:
        st = self.state_for(rank)
        st.last_line = n
        self.last_ad_line = n
        if st.pending and (st.pending.stage, st.pending.transform) != (stage, transform):
            self.close_pending(st)
        while rest.startswith("[APPLY] ") and not rest.startswith("[APPLY] Transform "):
            rest = rest[len("[APPLY] ") :]
        if rest.startswith("[SUMMARY]"):
            m = g.SUMMARY.match(rest)
            if not m:
                self.issues.append(LogIssue(n, IssueKind.UNRECOGNISED, rest[:200]))
                return
            self.formats.add("V3")
            timing = None
            if m.group(3):
                timing = Timing(*(float(m.group(i)) for i in range(3, 7)))
            if m.group(7):
                state, matches = State.DISABLED, None
            elif m.group(2):
                state, matches = State.SKIPPED, None
            else:
                state, matches = State.APPLIED, int(m.group(1))
            self.finish(st, n, stage, transform, state, matches, timing, ())
            return
        if rest.startswith("enabled=") or rest.startswith("num_matches=") or rest.startswith("skipped="):
            kv = g.kv_pairs(rest)
            if kv is None or not ("num_matches" in kv or kv.get("skipped") == "True"):
                self.issues.append(LogIssue(n, IssueKind.UNRECOGNISED, rest[:200]))
                return
            self.formats.add("V1")
            self.finish_kv(st, n, stage, transform, kv)
            return
        if rest.startswith("elapsed time:"):
            m = g.ELAPSED.match(rest)
            if not m:
                self.issues.append(LogIssue(n, IssueKind.UNRECOGNISED, rest[:200]))
                return
            self.formats.add("V2")
            self.formats.discard("V1")
            self.attach_timing(st, stage, transform, Timing(*(float(m.group(i)) for i in range(1, 5))))
            return
        m = g.FAILED.match(rest)
        if m:
            self.on_failure(st, n, stage, transform, m.group(2))
            return
        if rest.startswith(g.START_MARKERS) and st.pending is None:
            st.pending = _Pending(stage, transform, n)

    def finish_kv(self, st: _RankState, n: int, stage: str, transform: str, kv: dict[str, str]) -> None:
        """V0/V1/V2 result line: ``enabled=.., num_matches=N|skipped=True, is_clean=.., ...``."""
        flags = tuple(sorted((k, v) for k, v in kv.items() if k not in ("num_matches", "skipped")))
        if kv.get("enabled") == "False":
            state, matches = State.DISABLED, None
        elif kv.get("skipped") == "True":
            state, matches = State.SKIPPED, None
        else:
            try:
                state, matches = State.APPLIED, int(kv["num_matches"])
            except ValueError:
                self.issues.append(LogIssue(n, IssueKind.UNRECOGNISED, f"num_matches={kv['num_matches']}"))
                return
        self.finish(st, n, stage, transform, state, matches, None, flags)

    def finish(
        self, st: _RankState, n: int, stage: str, transform: str, state: State, matches: int | None,
        timing: Timing | None, flags: tuple[tuple[str, str], ...],
    ) -> None:
        failure = None
        if st.pending and (st.pending.stage, st.pending.transform) == (stage, transform):
            failure = st.pending.failure
        if failure is not None:
            state = State.FAILED
        self.emit(st, TransformRecord(stage, transform, 0, state, matches, n, timing, failure, flags))

    def attach_timing(self, st: _RankState, stage: str, transform: str, timing: Timing) -> None:
        """V2 prints timing on its own line after the result line."""
        if st.records and (st.records[-1].stage, st.records[-1].transform) == (stage, transform):
            r = st.records[-1]
            st.records[-1] = TransformRecord(
                r.stage, r.transform, r.occurrence, r.state, r.matches, r.line, timing, r.failure, r.flags
            )

    def on_failure(self, st: _RankState, n: int, stage: str, transform: str, exc: str) -> None:
        if st.pending is None or (st.pending.stage, st.pending.transform) != (stage, transform):
            self.close_pending(st)
            st.pending = _Pending(stage, transform, n)
        st.pending.failure = exc or "(no message)"
        st.pending.line = n

    # -- main loop --------------------------------------------------------------------------------
    def feed(self, n: int, text: str, complete: bool) -> None:
        self.lines = n
        if "\ufffd" in text:
            self.replaced_bytes += 1
        if not complete and text:
            self.cut_mid_line = True
        split = g.split(text)
        if split is None:
            self.on_other_line(n, text)
            return
        prefix, rank, level, msg = split
        self.prefixes.add(prefix)
        self.in_traceback = False
        m = g.TRANSFORM.match(msg)
        if m:
            if prefix == "bare" and not complete:
                self.cut_mid_line = True
            self.on_transform_message(n, rank, m.group(1), m.group(2), m.group(3))
        elif msg.startswith("[SUMMARY]"):
            # L2 loggers drop the '[stage=..., transform=...]' context, so the result names no transform.
            # Keep it positionally (#n); attribute() names it from the dump files' order later.
            self.anonymous += 1
            self.on_transform_message(n, rank, "?", f"#{self.anonymous}", msg)
        else:
            m0 = g.V0.match(msg)
            if m0:
                kv = g.kv_pairs(m0.group(3))
                if kv is not None and ("num_matches" in kv or kv.get("skipped") == "True"):
                    self.formats.add("V0")
                    st = self.state_for(rank)
                    self.last_ad_line = n
                    self.finish_kv(st, n, m0.group(1), m0.group(2), kv)
                else:
                    self.issues.append(LogIssue(n, IssueKind.UNRECOGNISED, msg[:200]))
                return
            m2 = g.FAILED.match(msg)  # V1 prints the failure without the [stage=...] prefix
            if m2:
                st = self.state_for(rank)
                pending = st.pending
                stage = pending.stage if pending and pending.transform == m2.group(1) else "?"
                self.on_failure(st, n, stage, m2.group(1), m2.group(2))
                return
            if level in g.LEVELS_FATAL:
                self.fatal_after[rank] = (n, msg[:300])

    def on_other_line(self, n: int, text: str) -> None:
        if text.startswith("Traceback (most recent call last)"):
            self.in_traceback = True
            self.last_exc = (n, text)
        elif self.in_traceback and g.EXC_LINE.match(text):
            self.last_exc = (n, text[:300])
            self.in_traceback = False
        elif g.EXC_LINE.match(text) and ("Segmentation fault" in text or text.startswith("Killed")):
            self.last_exc = (n, text[:300])

    def result(self, rank: int | None) -> RunLog:
        tagged = sorted(r for r in self.ranks if r is not None)
        if not any(st.records or st.pending for st in self.ranks.values()):
            raise InputError(
                self.path,
                f"holds no AutoDeploy transform lines ({self.lines} lines read); expected {WHAT}",
            )
        chosen: int | None
        if tagged:
            if rank in tagged:
                chosen = rank
            else:
                raise InputError(
                    self.path,
                    f"has no lines of rank {rank}; ranks seen: {', '.join(map(str, tagged))} (use --rank)",
                )
            st = self.ranks[chosen]
            untagged = self.ranks.get(None)
            if untagged and untagged.records and not st.records:
                st = untagged
        else:
            chosen, st = None, self.ranks[None]
        if st.pending is not None and st.pending.failure is not None:
            self.close_pending(st)
        if not st.records and st.pending is None:
            others = ", ".join(str(r) for r in tagged if r != chosen and self.ranks[r].records)
            hint = f"; ranks with results: {others} (use --rank)" if others else f"; expected {WHAT}"
            raise InputError(self.path, f"rank {chosen} logged no transform result{hint}")
        records = list(st.records)
        end, detail = self.end_state(st, chosen, records)
        if st.pending is not None:
            p = st.pending
            records.append(TransformRecord(p.stage, p.transform, 0, State.INCOMPLETE, None, p.line))
        issues = list(self.issues)
        for line in st.restarts:
            issues.append(LogIssue(line, IssueKind.RETRY,
                                   "pipeline restarted here; the last pipeline is used"))
        if self.replaced_bytes:
            issues.append(LogIssue(0, IssueKind.ENCODING,
                                   f"{self.replaced_bytes} lines held bytes that are not UTF-8"))
        disagree = self.disagreements(chosen, records)
        return RunLog(
            path=self.path,
            transforms=tuple(records),
            rank=chosen,
            ranks_seen=tuple(tagged),
            rank_disagreement=disagree,
            formats=tuple(sorted(self.formats)),
            prefixes=tuple(sorted(self.prefixes)),
            end=end,
            end_detail=detail,
            issues=tuple(sorted(issues, key=lambda i: (i.line, i.kind, i.text))),
            pipelines=st.pipelines,
            lines=self.lines,
            anonymous=self.anonymous,
        )

    def end_state(
        self, st: _RankState, rank: int | None, records: list[TransformRecord]
    ) -> tuple[LogEnd, str]:
        last = records[-1].line if records else 0
        if self.last_exc and self.last_exc[0] > last:
            return LogEnd.CRASHED, f"line {self.last_exc[0]}: {self.last_exc[1]}"
        fatal = self.fatal_after.get(rank)
        if fatal and fatal[0] > last and st.pending is not None:
            return LogEnd.CRASHED, f"line {fatal[0]}: {fatal[1]}"
        if st.pending is not None:
            p = st.pending
            return LogEnd.TRUNCATED, f"stops inside {p.stage}/{p.transform} (started at line {p.line})"
        if self.cut_mid_line and self.last_ad_line >= self.lines:
            return LogEnd.TRUNCATED, f"last line ({self.lines}) is cut mid-line"
        if not records:
            return LogEnd.EMPTY, "no transform result"
        return LogEnd.COMPLETE, f"{len(records)} transforms, last {records[-1].stage}/{records[-1].transform}"

    def disagreements(self, chosen: int | None, records: list[TransformRecord]) -> tuple[str, ...]:
        mine = {(r.stage, r.transform): (r.state, r.matches) for r in records}
        out: set[str] = set()
        for rank, st in self.ranks.items():
            if rank is None or rank == chosen:
                continue
            for r in st.records:
                k = (r.stage, r.transform)
                if k in mine and mine[k] != (r.state, r.matches):
                    out.add(f"{r.stage}/{r.transform} (rank {rank})")
        return tuple(sorted(out))


def parse(path: Path, rank: int = 0) -> RunLog:
    """Parse an AutoDeploy log and return the records of ``rank`` (or of untagged lines).

    Raises :class:`InputError` for unreadable, binary or empty logs, logs without any transform line, and
    a requested rank that never appears.
    """
    p = _LogParser(path)
    for n, text, complete in iter_lines(path, WHAT):
        p.feed(n, text, complete)
    if p.lines == 0:
        raise InputError(path, f"is empty; expected {WHAT}")
    return p.result(rank)


def as_dict(log: RunLog) -> dict[str, object]:
    """Plain-data view of a parsed log (golden parser fixtures and debugging)."""
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
