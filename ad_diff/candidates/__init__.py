"""Fusion candidates: mine a run's graph dump for repeated unfused patterns and look for existing kernels.

Entry point: :func:`find_candidates` (used by ``ad-diff candidates``); renderers in
:mod:`ad_diff.candidates.render` and :mod:`ad_diff.candidates.terminal`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ad_diff.candidates.dumps import read_dump, select_dump
from ad_diff.candidates.lookup import SourceIndex, index_source, lookup
from ad_diff.candidates.model import (
    Candidate,
    CandidateReport,
    KernelLookup,
    LookupStatus,
    Recommendation,
)
from ad_diff.candidates.recommend import recommend
from ad_diff.candidates.scan import Group, scan_dump
from ad_diff.errors import AdDiffError

__all__ = [
    "Candidate",
    "CandidateReport",
    "KernelLookup",
    "LookupStatus",
    "Recommendation",
    "find_candidates",
    "read_dump",
    "run_states",
    "select_dump",
]


def run_states(run: Path) -> tuple[dict[str, str], str | None]:
    """Transform key -> state from the run's log (``applied`` / ``applied:0`` / ``disabled`` ...), and a note
    when the log could not be read (the scan itself does not need it)."""
    # lazy: run discovery and the log parser load only when a run's states are read
    from ad_diff.core.model import CANDIDATE
    from ad_diff.discover import discover
    from ad_diff.kinds.log import parse as log_parser

    try:
        art = discover(run, CANDIDATE)
        assert art.log is not None
        log = log_parser.parse(art.log)
    except AdDiffError as e:
        return {}, f"log not read ({e}); transform states are not reported"
    states: dict[str, str] = {}
    for r in log.transforms:
        st = r.state.value
        if st == "applied" and r.matches == 0:
            st = "applied with 0 matches"
        states[r.transform] = st
    return states, None


def find_candidates(
    run: Path,
    transform: str | None = None,
    trtllm_src: Path | None = None,
    min_count: int = 2,
    index: SourceIndex | None = None,
) -> CandidateReport:
    """Scan ``run``'s final dump (or the one after ``transform``) and rank the fusion candidates.

    The dump is chosen and read inside the run folder only (:mod:`~ad_diff.candidates.dumps`):
    refused dumps are named in the notes, or stop the command when one may be the dump to scan.

    With ``trtllm_src`` (or a prebuilt ``index``) each candidate is looked up in the source tree; without,
    every lookup is ``not_searched``.
    """
    chosen, refused = select_dump(run, transform)
    path = chosen.path
    dump = read_dump(path, run)
    if index is None and trtllm_src is not None:
        index = index_source(trtllm_src)
    states, log_note = run_states(run)
    groups = scan_dump(dump, min_count=min_count)
    names = _names(groups)
    by_family: dict[str, list[str]] = {}
    for g, n in zip(groups, names, strict=False):
        by_family.setdefault(g.family, []).append(n)
    cands = []
    for g, n in zip(groups, names, strict=False):
        lk = lookup(index, g.family, g.pattern, g.ops, g.formula)
        variants = tuple(x for x in by_family[g.family] if x != n)
        cands.append(
            recommend(n, g, lk, states, variants, g.unknown_meta, complete=index is None or index.complete)
        )
    notes = []
    if index is None:
        notes.append("existing kernel lookup not done: pass --trtllm-src PATH (a TensorRT-LLM checkout)")
    else:
        tied = sum(len(t.refs) for m in index.modules for t in m.transforms)
        notes.append(
            f"source tree read as text: {index.files} .py file(s), "
            f"{len(index.registrations)} registration(s), "
            f"{sum(len(m.transforms) for m in index.modules)} transform(s) read for the ops they name "
            f"({tied} op reference(s))"
        )
    if log_note:
        notes.append(log_note)
    notes += refused
    return CandidateReport(
        run=str(run),
        dump=str(path),
        transform=dump.transform,
        stage=dump.stage,
        nodes_scanned=dump.node_count,
        candidates=tuple(cands),
        source_tree=str(trtllm_src) if trtllm_src is not None else (str(index.root) if index else None),
        notes=tuple(notes),
        source_notes=index.notes if index is not None else (),
    )


def _names(groups: list[Group]) -> list[str]:
    """Family name for the best-ranked group of a family, ``family_2``, ``family_3`` ... for the others."""
    seen: Counter[str] = Counter()
    out = []
    for g in groups:
        seen[g.family] += 1
        out.append(g.family if seen[g.family] == 1 else f"{g.family}_{seen[g.family]}")
    return out
