"""Transform-level alignment of two dump folders: pair dumps by transform key and occurrence.

The file counter is never used for pairing: adding one transform renumbers every later file. Stage and
transform come from each file's header (``# Transform:`` / ``# Stage:``), not from splitting the file name.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from ad_diff.core.model import BASELINE, RUNS, RunId, State, TransformRecord, other_run
from ad_diff.core.runlog import LogEnd, RunLog
from ad_diff.discover.dumps import DumpRef as DumpRef  # re-exported: a pair holds two of them
from ad_diff.discover.dumps import dump_key
from ad_diff.discover.dumps import list_dumps as list_dumps  # re-exported: listed, then paired
from ad_diff.kinds.graph.diff import Absence

LogIndex = dict[tuple[str, int], TransformRecord]
"""One run's log records by ``(transform, occurrence)``: how a dump pair finds its log lines."""


def log_index(log: RunLog | None) -> LogIndex:
    """``(transform, occurrence) -> record`` of one run's log (empty without a log)."""
    return {} if log is None else {(r.transform, r.occurrence): r for r in log.transforms}


@dataclass(frozen=True, slots=True)
class TransformPair:
    """The dumps of one transform occurrence in both runs (either may be missing)."""

    transform: str
    occurrence: int
    baseline: DumpRef | None
    candidate: DumpRef | None
    moved: tuple[str, str] | None = None
    """When the runs ran this transform in another order: the key of the dump before it in each run."""

    @property
    def stage(self) -> str:
        """Stage as written by the baseline dump (candidate's when the baseline has none)."""
        ref = self.baseline if self.baseline is not None else self.candidate
        assert ref is not None
        return ref.stage

    @property
    def key(self) -> str:
        """Same form as :attr:`DumpRef.key`."""
        return dump_key(self.stage, self.transform, self.occurrence)

    def ref(self, run: str) -> DumpRef | None:
        """The dump of ``run``."""
        return self.baseline if run == BASELINE else self.candidate


def pair_dumps(baseline: list[DumpRef], candidate: list[DumpRef]) -> list[TransformPair]:
    """Pair by ``(transform, occurrence)``; unpaired dumps are kept where they sit in their own run."""
    kb = [(r.transform, r.occurrence) for r in baseline]
    kc = [(r.transform, r.occurrence) for r in candidate]
    out: list[TransformPair] = []
    sm = SequenceMatcher(None, kb, kc, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.extend(TransformPair(b.transform, b.occurrence, b, c)
                       for b, c in zip(baseline[i1:i2], candidate[j1:j2], strict=True))
            continue
        out.extend(TransformPair(b.transform, b.occurrence, b, None) for b in baseline[i1:i2])
        out.extend(TransformPair(c.transform, c.occurrence, None, c) for c in candidate[j1:j2])
    # A transform moved elsewhere in the pipeline shows up as one delete and one insert: pair them anyway,
    # at the baseline's position, and say where it sat in each run.
    return _join_moved(out, _before(baseline), _before(candidate))


def _before(refs: list[DumpRef]) -> dict[tuple[str, int], str]:
    """``(transform, occurrence) -> key of the dump before it`` in one run (``-`` for the first)."""
    return {(r.transform, r.occurrence): refs[i - 1].key if i else "-" for i, r in enumerate(refs)}


def _join_moved(
    pairs: list[TransformPair], before_b: dict[tuple[str, int], str], before_c: dict[tuple[str, int], str]
) -> list[TransformPair]:
    lone_c = {(p.transform, p.occurrence): k for k, p in enumerate(pairs) if p.baseline is None}
    out: list[TransformPair] = []
    drop: set[int] = set()
    for p in pairs:
        at = (p.transform, p.occurrence)
        if p.candidate is None and at in lone_c:
            k = lone_c[at]
            drop.add(k)
            out.append(TransformPair(p.transform, p.occurrence, p.baseline, pairs[k].candidate,
                                     moved=(before_b[at], before_c[at])))
        else:
            out.append(p)
    return [p for k, p in enumerate(out) if not (p.baseline is None and k in drop)]


_DONE = frozenset({State.APPLIED, State.SKIPPED, State.DISABLED, State.FAILED})
"""States with a result line: the transform finished, so AD wrote its dump right after (docs/formats.md)."""
NO_DUMP_STAGES = frozenset({"factory"})
"""Stages whose model is no GraphModule yet: no dump file, in any format."""
NO_ROOT_GRAPH_STAGES = frozenset({"compile", "export_onnx"})
"""Stages after which the root module is no GraphModule: D1/D2 (root-only) dumps write no file."""


def absences(
    pairs: list[TransformPair], logs: dict[RunId, RunLog | None], formats: dict[RunId, set[str]]
) -> list[Absence | None]:
    """For every pair with one dump missing, why that run has none (``None`` for two-sided pairs).

    Reads each run's log (its records, how it ended, a pipeline-cache restore) and the counters of its
    dumps around the hole; one pass per run.
    """
    out: list[Absence | None] = [None] * len(pairs)
    for run in RUNS:
        have = [k for k, p in enumerate(pairs) if p.ref(run) is not None]
        if not have:
            continue
        log = logs.get(run)
        index = log_index(log)
        first, last = have[0], have[-1]
        restored_to = _restored_until(pairs, log, first)
        root_only = bool(formats.get(run)) and formats[run] <= {"D1", "D2"}
        prev: DumpRef | None = None
        nxt = iter(have)
        following = next(nxt, None)
        for k, p in enumerate(pairs):
            if following is not None and k >= following:
                following = next(nxt, None)
            ref = p.ref(run)
            if ref is not None:
                prev = ref
                continue
            if p.ref(other_run(run)) is None:
                continue
            rec = index.get((p.transform, p.occurrence))
            nxt_ref = pairs[following].ref(run) if following is not None else None
            out[k] = _why(k, p, rec, log, first, last, restored_to, root_only, prev, nxt_ref)
    return out


def _restored_until(pairs: list[TransformPair], log: RunLog | None, first: int) -> int | None:
    """Index of the last pair the run restored instead of running (its boundary), if it restored."""
    if log is None or log.restored is None:
        return None
    boundary = log.restored.boundary
    return next((k for k, p in enumerate(pairs) if p.transform == boundary), first - 1)


def _why(
    k: int,
    p: TransformPair,
    rec: TransformRecord | None,
    log: RunLog | None,
    first: int,
    last: int,
    restored_to: int | None,
    root_only: bool,
    prev: DumpRef | None,
    nxt: DumpRef | None,
) -> Absence:
    if (restored_to is not None and k <= restored_to) or (rec is not None and rec.state is State.RESTORED):
        return Absence.RESTORED
    if rec is None:
        stopped = log is not None and log.end is not LogEnd.COMPLETE
        return Absence.NOT_REACHED if stopped and k > last else Absence.NOT_RUN
    if rec.state not in _DONE:
        return Absence.NOT_REACHED
    if p.stage in NO_DUMP_STAGES or (root_only and p.stage in NO_ROOT_GRAPH_STAGES):
        return Absence.NOT_WRITTEN
    if k > last:
        return Absence.CUT
    # Before the first dump or between two: lost where the numbering has a hole (AD counts from 001).
    lo = prev.counter if prev is not None else 0
    hi = nxt.counter if nxt is not None else None
    if lo is not None and hi is not None and hi - lo > 1:
        return Absence.LOST
    return Absence.NOT_WRITTEN
