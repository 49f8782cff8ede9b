"""The log parser's state machine: one pass over a run's lines, per rank (:class:`LogParser`).

:func:`ad_diff.kinds.log.parse.parse` feeds it every line of every file (prefixes of CI systems and launchers
stripped); messages carrying ``[stage=..., transform=...]`` (or the bracket-less V0 form) become
:class:`TransformRecord` values of their rank, tracebacks and fatal signals become :class:`Error` s, lines
that look like transform results but match no format become ``unrecognised`` issues.
:mod:`ad_diff.kinds.log.ranks` turns the finished state into a :class:`RunLog`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from ad_diff.core import limits
from ad_diff.core.model import State, Timing, TransformRecord
from ad_diff.kinds.log.events import read_event
from ad_diff.kinds.log.lines import (
    CLAIMED,
    ELAPSED,
    EXC_LINE,
    FAILED,
    LEVEL_WORDS,
    LEVELS_FATAL,
    START_MARKERS,
    SUMMARY,
    TRANSFORM,
    V0,
    kv_pairs,
    split,
)
from ad_diff.kinds.log.model import IssueKind, LogIssue, Restore
from ad_diff.kinds.log.rankstate import Error, Pending, RankState

_EVENTS = ("Restored AutoDeploy", "Saved AutoDeploy", "[cache] ", "Pipeline snapshot", "Skipping boundary")
"""How the run-level event lines without transform context begin (:meth:`LogParser.on_event`)."""
_ENDING = ("Traceback (most recent call last)", "Exception ignored", "Killed", *_EVENTS)
"""How the lines start that :meth:`LogParser.on_other_line` looks at (with fatal signals and tracebacks)."""


class LogParser:
    """One pass over one run's log files; see the module docstring."""

    def __init__(self) -> None:
        self.ranks: dict[int | None, RankState] = {}
        self.formats: set[str] = set()
        self.prefixes: set[str] = set()
        self.issues: list[LogIssue] = []
        self.errors: list[Error] = []
        self.fatal: dict[int | None, tuple[int, int, str]] = {}
        """Last fatal-level AD line per rank: (position, line, message)."""
        self.tracebacks: dict[int | None, bool] = {}
        """Rank -> whether the traceback being read is an ignored one (present while inside one)."""
        self.ignoring: set[int | None] = set()
        self.base = 0
        """Lines of the files read before this one: a line's position over all files is base + its number."""
        self.path = Path()
        self.lines = 0
        self.last_ad: tuple[int, int | None] = (0, None)
        """(position, rank) of the last AD line, for a file cut mid-line."""
        self.cut_mid_line = False
        self.replaced_bytes = 0
        self.anonymous = 0
        self.early: dict[int | None, Counter[str]] = {}
        """Unclaimed lines of a rank seen before its first transform line (they belong to its first result
        in V0, which has no start markers)."""

    # -- bounded state (the caps: ad_diff.core.limits) ---------------------------------------------
    def state_for(self, rank: int | None) -> RankState:
        st = self.ranks.get(rank)
        if st is None:
            if len(self.ranks) >= limits.LOG_RANKS:
                raise limits.count_cap(self.path, "ranks", limits.LOG_RANKS, "LOG_RANKS", self.lines)
            st = self.ranks[rank] = RankState(self.path)
            st.loose = self.early.pop(rank, None)
        return st

    def issue(self, issue: LogIssue) -> None:
        """Keep ``issue``; more than :data:`~ad_diff.core.limits.LOG_ISSUES` is an input error."""
        if len(self.issues) >= limits.LOG_ISSUES:
            raise limits.count_cap(self.path, "unreadable AutoDeploy lines and results without a start",
                                   limits.LOG_ISSUES, "LOG_ISSUES", self.lines)
        self.issues.append(issue)

    def error(self, error: Error) -> None:
        """Keep a traceback or fatal signal; more than :data:`~ad_diff.core.limits.LOG_ERRORS` is an input
        error."""
        if len(self.errors) >= limits.LOG_ERRORS:
            raise limits.count_cap(self.path, "tracebacks and fatal signals", limits.LOG_ERRORS, "LOG_ERRORS",
                                   self.lines)
        self.errors.append(error)

    # -- records ----------------------------------------------------------------------------------

    def emit(self, st: RankState, rec: TransformRecord, pos: int | None = None) -> None:
        key = (rec.stage, rec.transform)
        if key in st.seen:
            # A key runs once per pipeline, so seeing it again means the pipeline started over (a retry
            # in the same log). The last pipeline is what the run finally did.
            st.pipelines += 1
            if st.pipelines > limits.LOG_PIPELINES:
                raise limits.count_cap(self.path, "pipeline restarts of one rank", limits.LOG_PIPELINES,
                                       "LOG_PIPELINES", self.lines)
            st.restarts.append(rec.line)
            st.records = []
            st.seen = set()
            st.said = {k: v for k, v in st.said.items() if k == key}
        elif len(st.records) >= limits.LOG_TRANSFORMS:
            raise limits.count_cap(self.path, "transform results in one pipeline of one rank",
                                   limits.LOG_TRANSFORMS, "LOG_TRANSFORMS", self.lines)
        st.seen.add(key)
        st.records.append(rec)
        if st.loose:  # no start marker opened this transform (V0): what came since the last result is its
            st.said.setdefault(key, Counter()).update(st.loose)
        st.loose = None
        st.pending = None
        st.last_pos = (self.base + self.lines) if pos is None else pos

    def close_pending(self, st: RankState) -> None:
        """Settle a transform that started but whose result line never came, because another began.

        A logged failure is a result of its own (``failed``); anything else is reported as an issue, since
        the pipeline went on without that transform saying how it ended.
        """
        p = st.pending
        if p is None:
            return
        if p.failure is not None:
            self.emit(st, TransformRecord(p.stage, p.transform, 0, State.FAILED, None, p.line,
                                          failure=p.failure), p.pos)
        else:
            self.issue(LogIssue(p.line, IssueKind.NO_RESULT,
                                        f"{p.stage}/{p.transform} started but logged no result"))
        st.pending = None

    def on_transform_message(self, n: int, rank: int | None, stage: str, transform: str, rest: str,
                             level: str = "") -> None:
        st = self.state_for(rank)
        if st.pending and (st.pending.stage, st.pending.transform) != (stage, transform):
            self.close_pending(st)
        while rest.startswith("[APPLY] ") and not rest.startswith("[APPLY] Transform "):
            rest = rest[len("[APPLY] ") :]
        if rest.startswith("[SUMMARY]"):
            m = SUMMARY.match(rest)
            if not m:
                self.issue(LogIssue(n, IssueKind.UNRECOGNISED, rest[:200]))
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
                state, matches = State.APPLIED, limits.count(m.group(1))
            self.finish(st, n, stage, transform, state, matches, timing, ())
            return
        if rest.startswith(("enabled=", "num_matches=", "skipped=")):
            kv = kv_pairs(rest)
            if kv is None or not ("num_matches" in kv or kv.get("skipped") == "True"):
                self.issue(LogIssue(n, IssueKind.UNRECOGNISED, rest[:200]))
                return
            self.formats.add("V1")
            self.finish_kv(st, n, stage, transform, kv)
            return
        if rest.startswith("elapsed time:"):
            m = ELAPSED.match(rest)
            if not m:
                self.issue(LogIssue(n, IssueKind.UNRECOGNISED, rest[:200]))
                return
            self.formats.add("V2")
            self.formats.discard("V1")
            self.attach_timing(st, stage, transform, Timing(*(float(m.group(i)) for i in range(1, 5))))
            return
        m = FAILED.match(rest)
        if m:
            self.on_failure(st, n, stage, transform, m.group(2))
            return
        if rest.startswith(START_MARKERS):
            if (stage, transform) in st.seen:  # it starts again: a new attempt's lines are its own
                st.said.pop((stage, transform), None)
            st.loose = None
            if st.pending is None:
                st.pending = Pending(stage, transform, n, (self.base + self.lines))
            if rest.startswith(("[APPLY]", "[PRE-CLEANUP]", "[POST-CLEANUP]")) or CLAIMED.match(rest):
                return
        if CLAIMED.match(rest):
            self.on_event(st, n, rest)
            return
        self.say(st, (stage, transform), level, rest)

    def say(self, st: RankState, key: tuple[str, str] | None, level: str, msg: str) -> None:
        """Keep a line no reader claims as a fact of the transform ``key`` (``None``: of the next result,
        unless a start marker shows it came between transforms); lines below info level are left out."""
        word = LEVEL_WORDS.get(level, "info")
        if word == "debug":
            return
        if len(st.said) >= limits.LOG_TRANSFORMS:
            raise limits.count_cap(self.path, "transforms with lines of their own", limits.LOG_TRANSFORMS,
                                   "LOG_TRANSFORMS", self.lines)
        bucket: Counter[str] | None
        if key is None:
            bucket = st.loose = st.loose or Counter()
        else:
            bucket = st.said.get(key)  # (setdefault would build a Counter for every line)
            if bucket is None:
                bucket = st.said[key] = Counter()
        line = f"{word} {msg}"
        bucket[line] = bucket.get(line, 0) + 1  # a dict's get: a new line costs no __missing__ call

    def on_event(self, st: RankState, n: int, msg: str) -> bool:
        """A run-level event (cache restore, load, save, rebuild); ``False`` if ``msg`` is none."""
        got = read_event(msg, n, len(st.records))
        if isinstance(got, Restore):
            st.restored = got
        elif got is not None:
            if len(st.events) >= limits.LOG_ISSUES:
                raise limits.count_cap(self.path, "cache events", limits.LOG_ISSUES, "LOG_ISSUES", self.lines)
            st.events.append(got)
        return got is not None

    def finish_kv(self, st: RankState, n: int, stage: str, transform: str, kv: dict[str, str]) -> None:
        """V0/V1/V2 result line: ``enabled=.., num_matches=N|skipped=True, is_clean=.., ...``."""
        flags = tuple(sorted((k, v) for k, v in kv.items() if k not in ("num_matches", "skipped")))
        if kv.get("enabled") == "False":
            state, matches = State.DISABLED, None
        elif kv.get("skipped") == "True":
            state, matches = State.SKIPPED, None
        else:
            try:
                state, matches = State.APPLIED, limits.count(kv["num_matches"])
            except ValueError:
                self.issue(LogIssue(n, IssueKind.UNRECOGNISED, f"num_matches={kv['num_matches']}"))
                return
        self.finish(st, n, stage, transform, state, matches, None, flags)

    def finish(
        self, st: RankState, n: int, stage: str, transform: str, state: State, matches: int | None,
        timing: Timing | None, flags: tuple[tuple[str, str], ...],
    ) -> None:
        failure = None
        if st.pending and (st.pending.stage, st.pending.transform) == (stage, transform):
            failure = st.pending.failure
        if failure is not None:
            state = State.FAILED
        self.emit(st, TransformRecord(stage, transform, 0, state, matches, n, timing, failure, flags))

    def attach_timing(self, st: RankState, stage: str, transform: str, timing: Timing) -> None:
        """V2 prints timing on its own line after the result line."""
        if st.records and (st.records[-1].stage, st.records[-1].transform) == (stage, transform):
            st.records[-1] = replace(st.records[-1], timing=timing)

    def on_failure(self, st: RankState, n: int, stage: str, transform: str, exc: str) -> None:
        if st.pending is None or (st.pending.stage, st.pending.transform) != (stage, transform):
            self.close_pending(st)
            st.pending = Pending(stage, transform, n, (self.base + self.lines))
        st.pending.failure = exc or "(no message)"
        st.pending.line = n
        st.pending.pos = (self.base + self.lines)

    # -- main loop --------------------------------------------------------------------------------
    def feed(self, n: int, text: str, complete: bool, rank: int | None) -> None:
        """One line (``rank``: the launcher's or the file's rank, used where the line has no ``[RANK n]``)."""
        self.lines = n
        if "\ufffd" in text:
            self.replaced_bytes += 1
        if not complete and text:
            self.cut_mid_line = True
        parts = split(text)
        if parts is None:
            # Most lines are other loggers' noise: only hand on those that may end a rank (cheap tests first).
            if self.tracebacks or text.startswith(_ENDING) or "Segmentation fault" in text:
                self.on_other_line(n, text, rank)
            return
        prefix, tag, level, msg = parts
        if tag is not None:
            rank = tag
        self.prefixes.add(prefix)
        if self.tracebacks:
            self.tracebacks.pop(rank, None)
        m = TRANSFORM.match(msg)
        if m:
            if prefix == "bare" and not complete:
                self.cut_mid_line = True
            self.last_ad = ((self.base + self.lines), rank)
            self.on_transform_message(n, rank, m.group(1), m.group(2), m.group(3), level)
        elif msg.startswith("[SUMMARY]"):
            # L2 loggers drop the '[stage=..., transform=...]' context, so the result names no transform.
            # Keep it positionally (#n); attribute() names it from the dump files' order later.
            self.anonymous += 1
            self.last_ad = ((self.base + self.lines), rank)
            self.on_transform_message(n, rank, "?", f"#{self.anonymous}", msg, level)
        else:
            self.on_other_message(n, rank, level, msg)

    def on_other_message(self, n: int, rank: int | None, level: str, msg: str) -> None:
        """An AD line without transform context: V0 results, V1 failures, restores and cache events, fatal
        errors; and the lines a transform logs without context (V0, V1, L2), kept as its facts by where they
        stand."""
        m0 = V0.match(msg)
        if m0:
            kv = kv_pairs(m0.group(3))
            if kv is not None and ("num_matches" in kv or kv.get("skipped") == "True"):
                self.formats.add("V0")
                self.last_ad = ((self.base + self.lines), rank)
                self.finish_kv(self.state_for(rank), n, m0.group(1), m0.group(2), kv)
            else:
                self.issue(LogIssue(n, IssueKind.UNRECOGNISED, msg[:200]))
            return
        m2 = FAILED.match(msg)  # V1 prints the failure without the [stage=...] prefix
        if m2:
            st = self.state_for(rank)
            pending = st.pending
            if pending is not None and pending.stage == "?":  # L2: the transform that started, unnamed
                self.on_failure(st, n, "?", pending.transform, m2.group(2))
                return
            stage = pending.stage if pending and pending.transform == m2.group(1) else "?"
            self.on_failure(st, n, stage, m2.group(1), m2.group(2))
            return
        known = self.ranks.get(rank)
        # a rank's state begins with its first transform line, event or start marker, never with other lines:
        # those wait (their transform may be the rank's first result, in V0)
        starts = msg.startswith(START_MARKERS) and (CLAIMED.match(msg) is not None or msg.startswith("["))
        if known is None and not msg.startswith(_EVENTS) and not starts:
            if level in LEVELS_FATAL:
                self.fatal[rank] = ((self.base + self.lines), n, msg[:300])
            elif not CLAIMED.match(msg) and LEVEL_WORDS.get(level, "info") != "debug":
                early = self.early.setdefault(rank, Counter())
                if len(early) < limits.LOG_ISSUES:  # bounded: a log of nothing but such lines stays small
                    early[f"{LEVEL_WORDS.get(level, 'info')} {msg}"] += 1
            return
        st = known if known is not None else self.state_for(rank)
        if self.on_event(st, n, msg):
            return
        if level in LEVELS_FATAL:
            self.fatal[rank] = ((self.base + self.lines), n, msg[:300])
        if starts:
            # L2: a transform starts without naming itself; it is the next anonymous result (#n) and its
            # lines are its own until that result
            st.loose = None
            if st.pending is None:
                st.pending = Pending("?", f"#{self.anonymous + 1}", n, self.base + self.lines)
                st.said.pop(("?", st.pending.transform), None)
            return
        if CLAIMED.match(msg):
            return
        if st.pending is not None:  # inside a transform that printed no context (V1's own lines, L2)
            self.say(st, (st.pending.stage, st.pending.transform), level, msg)
        else:
            self.say(st, None, level, msg)

    def on_other_line(self, n: int, text: str, rank: int | None) -> None:
        """Noise, except what may end a rank (a traceback, and whether Python ignored it; a fatal signal) and
        run-level events (cache restores and saves), which may come without AD's logger prefix."""
        if text.startswith(_EVENTS):  # an event is its text, whatever printed it
            self.on_event(self.state_for(rank), n, text)
        elif text.startswith("Traceback (most recent call last)"):
            ignored = rank in self.ignoring
            self.ignoring.discard(rank)
            self.tracebacks[rank] = ignored
            self.error(Error((self.base + self.lines), rank, self.path, n, text[:300], ignored))
        elif rank in self.tracebacks and EXC_LINE.match(text):
            ignored = self.tracebacks.pop(rank)
            if self.errors and self.errors[-1].rank == rank and self.errors[-1].text.startswith("Traceback"):
                self.errors.pop()  # the closing line says more than 'Traceback (most recent call last)'
            self.error(Error((self.base + self.lines), rank, self.path, n, text[:300], ignored))
        elif text.startswith("Exception ignored"):
            self.ignoring.add(rank)
        elif ("Segmentation fault" in text or text.startswith("Killed")) and EXC_LINE.match(text):
            self.error(Error((self.base + self.lines), rank, self.path, n, text[:300], False))
