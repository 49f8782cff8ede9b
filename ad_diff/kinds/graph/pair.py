"""Transform-level alignment of two dump folders: pair dumps by transform key and occurrence.

The file counter is never used for pairing: adding one transform renumbers every later file. Stage and
transform come from each file's header (``# Transform:`` / ``# Stage:``), not from splitting the file name.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from ad_diff.core.model import TransformRecord
from ad_diff.discover import DUMP_NAME, dump_entries
from ad_diff.errors import InputError
from ad_diff.kinds.graph.model import dump_key
from ad_diff.kinds.graph.parse import counter_of, read_header
from ad_diff.kinds.log.model import RunLog

LogIndex = dict[tuple[str, int], TransformRecord]
"""One run's log records by ``(transform, occurrence)``: how a dump pair finds its log lines."""


def log_index(log: RunLog | None) -> LogIndex:
    """``(transform, occurrence) -> record`` of one run's log (empty without a log)."""
    return {} if log is None else {(r.transform, r.occurrence): r for r in log.transforms}


@dataclass(frozen=True, slots=True)
class DumpRef:
    """One dump file, its header and its place in the run (no graph parsed yet)."""

    path: Path
    stage: str
    transform: str
    occurrence: int
    """0 for the first dump of this transform key in the run, 1 for the second, ..."""
    counter: int | None

    @property
    def key(self) -> str:
        """The :func:`~ad_diff.kinds.graph.model.dump_key` of this dump."""
        return dump_key(self.stage, self.transform, self.occurrence)


@dataclass(frozen=True, slots=True)
class TransformPair:
    """The dumps of one transform occurrence in both runs (either may be missing)."""

    transform: str
    occurrence: int
    baseline: DumpRef | None
    candidate: DumpRef | None

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


def list_dumps(graphs_dir: Path) -> tuple[list[DumpRef], list[str]]:
    """Dump files of one run in pipeline order, plus notes about files that were ignored."""
    if not graphs_dir.is_dir():
        raise InputError(graphs_dir, "expected a folder of graph dumps (AD_DUMP_GRAPHS_DIR content)")
    notes = [f"{p}: ignored (not named NNN_<stage>_<transform>.txt)" for p in graphs_dir.iterdir()
             if p.is_file() and not DUMP_NAME.match(p.name)]
    files = [p for p in (graphs_dir / n for n in dump_entries(graphs_dir)) if p.is_file()]
    seen: dict[str, int] = {}
    refs: list[DumpRef] = []
    for p in files:
        transform, stage = read_header(p)
        occ = seen.get(transform, 0)
        seen[transform] = occ + 1
        refs.append(DumpRef(p, stage, transform, occ, counter_of(p)))
    return refs, sorted(notes)


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
    # A transform moved elsewhere in the pipeline shows up as one delete and one insert: pair them anyway.
    return _join_moved(out)


def _join_moved(pairs: list[TransformPair]) -> list[TransformPair]:
    lone_c = {(p.transform, p.occurrence): k for k, p in enumerate(pairs) if p.baseline is None}
    out: list[TransformPair] = []
    drop: set[int] = set()
    for p in pairs:
        if p.candidate is None and (p.transform, p.occurrence) in lone_c:
            k = lone_c[(p.transform, p.occurrence)]
            drop.add(k)
            out.append(TransformPair(p.transform, p.occurrence, p.baseline, pairs[k].candidate))
        else:
            out.append(p)
    return [p for k, p in enumerate(out) if not (p.baseline is None and k in drop)]
