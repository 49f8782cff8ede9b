"""Graph analysis of two runs: stream both dump folders in pipeline order and compare transform by transform.

Only the previous dump of each run (and the previous cross-run alignment) is kept in memory. Files are hashed
(XXH3 of the body after the two header lines) before parsing: a graph seen before is parsed once, and a line
seen in one of the last few graphs is not parsed again (:mod:`ad_diff.kinds.graph.cache`); byte-identical
baseline/candidate bodies (every transform before the first divergence) skip node alignment, and a pair of
bodies aligned at the previous transform is not aligned again. The cyclic GC is paused meanwhile: the parsed
graphs are many small objects and no cycles, and its scans over them cost a third of the time.

Measurements only: no finding is made here (``classify`` draws them). A difference is marked where it first
appears: a metadata change on a node not changed before, a rewritten region that continues none of the
previous transform's regions. Root-cause hints for a match loss are stored on the transform that lost
matches; the explain stage (:mod:`ad_diff.kinds.graph.evidence`) attaches them to the log's findings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from ad_diff.core.gcpause import paused_gc
from ad_diff.core.model import BASELINE, CANDIDATE, RunId, State, TransformRecord
from ad_diff.core.moe import moe_layers
from ad_diff.core.runlog import RunLog
from ad_diff.discover.dumps import FolderScan, scan
from ad_diff.kinds.graph.align import align_sections
from ad_diff.kinds.graph.cache import DumpLoader
from ad_diff.kinds.graph.diff import (
    Absence,
    Coverage,
    Coverages,
    Deltas,
    FinalGraphs,
    GraphAnalysis,
    MetaChangeKind,
    RunDelta,
    TransformGraphDiff,
    UnreadableDump,
)
from ad_diff.kinds.graph.hints import find_hints
from ad_diff.kinds.graph.identity import layers_of, sizes_of, with_replaced
from ad_diff.kinds.graph.measure import (
    BodyChange,
    NodeTable,
    align_dumps,
    body_change,
    coverage,
    coverage_after,
    run_delta,
)
from ad_diff.kinds.graph.model import GraphDump, MatchKind, Unmatched
from ad_diff.kinds.graph.pair import (
    DumpRef,
    LogIndex,
    TransformPair,
    absences,
    list_dumps,
    log_index,
    pair_dumps,
)
from ad_diff.kinds.graph.walk import CrossState, RegionSig, RunState, advance


def analyze_graphs(
    baseline_graphs: Path,
    candidate_graphs: Path,
    baseline_log: RunLog | None = None,
    candidate_log: RunLog | None = None,
    *,
    reuse: bool = True,
    listings: tuple[FolderScan, FolderScan] | None = None,
) -> GraphAnalysis:
    """Measure the dump folders of two runs. Raises :class:`InputError` only if a folder is unusable.

    ``reuse=False`` parses and aligns every dump even when its graph was seen before (same result, slower;
    tests use it to check the reuse). ``listings``: both folders' scans (:func:`folder.scan`), when the caller
    made them already.
    """
    with paused_gc():
        if listings is None:
            listings = (scan(baseline_graphs), scan(candidate_graphs))
        got = _analyze(baseline_graphs, candidate_graphs, baseline_log, candidate_log, reuse, listings)
    give_back_freed()
    return got


def give_back_freed() -> None:
    """Hand the C allocator's free memory back to the system, now that the parsed graphs, the line memo and
    the alignment indexes are gone (glibc's ``malloc_trim``; nothing where the C library has none).

    The analysis leaves tens of MB free inside glibc's heap (dump texts, dict tables and index arrays, freed
    in between long-lived allocations, so the heap cannot shrink from its top). Nothing that comes after
    reuses it: small objects come from Python's own arenas, and the report's large texts (several MB each:
    the JSON text, its redacted and encoded copies) from fresh mappings, above glibc's mmap threshold, which
    the dump reads raised to a dump's size. So that free memory stayed resident under the report's, and the
    report set the command's peak: on the MoE benchmark pair 19 MiB above the end of the analysis."""
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
    except (ImportError, OSError, AttributeError):  # no ctypes, or a C library without malloc_trim
        return
    trim(0)


def _analyze(baseline_graphs: Path, candidate_graphs: Path, baseline_log: RunLog | None,
             candidate_log: RunLog | None, reuse: bool, listings: tuple[FolderScan, FolderScan]
             ) -> GraphAnalysis:
    refs_b, notes_b = list_dumps(baseline_graphs, listing=listings[0])
    refs_c, notes_c = list_dumps(candidate_graphs, listing=listings[1])
    notes = notes_b + notes_c
    if not refs_b or not refs_c:
        empty = baseline_graphs if not refs_b else candidate_graphs
        notes.append(f"{empty}: no graph dump files (NNN_<stage>_<transform>.txt); graph analysis skipped")
    pairs = pair_dumps(refs_b, refs_c) if refs_b and refs_c else []
    logs = {BASELINE: log_index(baseline_log), CANDIDATE: log_index(candidate_log)}
    loader = DumpLoader(reuse=reuse)
    rb, rc = RunState(), RunState()
    cross = CrossState(covers={} if reuse else None)
    diffs: list[TransformGraphDiff] = []
    unreadable: list[UnreadableDump] = []
    formats: dict[RunId, set[str]] = {BASELINE: set(), CANDIDATE: set()}
    for tp in pairs:
        diffs.append(_step(tp, loader, rb, rc, cross, logs, unreadable, formats))
    why = absences(pairs, {BASELINE: baseline_log, CANDIDATE: candidate_log}, formats)
    bad = {(u.run, u.transform, u.occurrence) for u in unreadable}
    diffs = [_missing(d, tp, w, bad) for d, tp, w in zip(diffs, pairs, why, strict=True)]
    final = _final(refs_b, refs_c, rb, rc, cross)
    first = next((d for d in diffs if d.two_sided and not d.structure_equal), None)
    one_sided = [d for d in diffs if d.missing in (Absence.NOT_RUN, None) and not d.two_sided]
    return GraphAnalysis(
        baseline_dir=baseline_graphs,
        candidate_dir=candidate_graphs,
        transforms=tuple(diffs),
        only_baseline=tuple(d.key for d in one_sided if d.candidate_file is None),
        only_candidate=tuple(d.key for d in one_sided if d.baseline_file is None),
        first_divergence=first.key if first is not None else None,
        first_divergence_detail=_divergence_detail(first) if first is not None else None,
        formats=tuple(sorted(formats[BASELINE] | formats[CANDIDATE])),
        notes=tuple(notes),
        unreadable=tuple(unreadable),
        final=final,
        listings=listings,
        layers=(rb.layers, rc.layers),
        sizes=(rb.sizes or {}, rc.sizes or {}),
    )


def _final(refs_b: list[DumpRef], refs_c: list[DumpRef], rb: RunState, rc: RunState, cross: CrossState
           ) -> FinalGraphs | None:
    """The names of both runs' last dumps, from what the analysis already parsed and aligned: the last dump
    each run loaded, when it is that run's last file (an unreadable last dump gives no order)."""
    db, dc = rb.dump, rc.dump
    if db is None or dc is None or db.path != refs_b[-1].path or dc.path != refs_c[-1].path:
        return None
    order = tuple(n.name for sec in db.sections for n in sec.nodes)
    moe = moe_layers(n for sec in db.sections for n in sec.nodes)
    if rb.digest == rc.digest:
        return FinalGraphs(db.path.name, order, (), moe)
    a = cross.last if cross.last is not None and cross.last_key == (rb.digest, rc.digest) else None
    if a is None:  # the last dumps were not compared as a pair (a transform ran in one run only at the end)
        a = align_dumps(db, dc)
    renamed = {al.names_c[j]: al.names_b[i] for al in a.aligns for i, j in enumerate(al.mb.tolist())
               if j >= 0 and al.names_b[i] != al.names_c[j]}
    return FinalGraphs(db.path.name, order, tuple(renamed.items()), moe)


def _missing(d: TransformGraphDiff, tp: TransformPair, why: Absence | None,
             bad: set[tuple[RunId, str, int]]) -> TransformGraphDiff:
    """``d`` with the reason its missing side has no dump, and where a moved transform sat in each run."""
    if tp.moved is not None:
        d = replace(d, moved=tp.moved)
    if d.two_sided:
        return d
    run = BASELINE if d.baseline_file is None else CANDIDATE
    if (run, d.transform, d.occurrence) in bad:
        return replace(d, missing=Absence.UNREADABLE)
    return replace(d, missing=why) if why is not None else d


def _divergence_detail(d: TransformGraphDiff) -> str:
    parts = []
    if d.regions:
        r = d.regions[0]
        parts.append(
            f"{len(d.regions)} region(s); first: baseline [{', '.join(r.baseline[:6])}] vs candidate "
            f"[{', '.join(r.candidate[:6])}]"
        )
    if d.rewired:
        parts.append(f"{len(d.rewired)} aligned node(s) read other inputs or literals "
                     f"(e.g. {d.rewired[0][0]})")
    if d.notes:
        parts.extend(d.notes)
    return "; ".join(parts) or "structure differs"


def _load_side(
    ref: DumpRef | None, run: RunId, loader: DumpLoader, unreadable: list[UnreadableDump], formats: set[str]
) -> tuple[GraphDump | None, bytes]:
    """Load one run's dump; returns (dump, content digest)."""
    if ref is None:
        return None, b""
    got = loader.load(ref)
    if got.dump is None:
        error = got.error or "unreadable"
        unreadable.append(UnreadableDump(run, ref.stage, ref.transform, ref.occurrence, error,
                                         got.problem or error, ref.path.name))
        return None, b""
    formats.add(got.dump.fmt)
    return got.dump, got.digest


def _change(st: RunState, cur: GraphDump | None, same: bool, reuse: bool) -> BodyChange | None:
    """What changed in the run since its previous dump, node object by node object (``None`` when the dumps
    are byte-identical, there is no previous dump, either is not simple, or reuse is off). Leaves whether the
    current dump is simple in ``st`` for the next transform."""
    if cur is None or same or not reuse:
        return None
    # Both tables are let go once compared: kept for the next transform, the two runs' tables were 7% of the
    # analysis's peak memory on the MoE pair (made again, a table costs one dict build per distinct graph).
    before = None if st.dump is None else NodeTable(st.dump, st.simple)
    now = NodeTable(cur)
    st.simple = now.simple
    return body_change(before, now) if before is not None else None


def _delta(
    prev: GraphDump | None,
    cur: GraphDump | None,
    same: bool,
    one_sided: bool,
    rec: TransformRecord | None,
    change: BodyChange | None,
) -> RunDelta | None:
    """Within-run change made by one transform.

    By node name first (cheap, and names are stable within a run); when that says "changed" and the verdict
    depends on it (one-sided transform, or a log that claims nothing happened), confirm with a structural
    alignment, so a pass that only renamed nodes does not count as a change.
    """
    if cur is None:
        return None
    d = run_delta(prev, cur, same, change)
    quiet = rec is not None and (rec.state in (State.SKIPPED, State.DISABLED) or rec.matches == 0)
    if prev is None or not (d.added or d.removed) or not (one_sided or quiet):
        return d
    added = removed = 0
    secs = {s.name: s for s in cur.sections}
    for sp in prev.sections:
        sc = secs.pop(sp.name, None)
        if sc is None:
            removed += len(sp.nodes)
            continue
        al = align_sections(sp, sc, prev.fmt, cur.fmt)
        removed += sum(1 for u in al.unmatched if u.run == BASELINE)
        added += sum(1 for u in al.unmatched if u.run == CANDIDATE)
    added += sum(len(s.nodes) for s in secs.values())
    return replace(d, added=added, removed=removed)


def _coverage(dump: GraphDump, digest: bytes, cross: CrossState, before: Coverage | None,
              change: BodyChange | None) -> Coverage:
    """The dump's coverage: seen before (same graph), else from the run's previous coverage and what
    changed since (the changed nodes alone), else counted over every node."""
    if cross.covers is None:
        return coverage(dump)
    got = cross.covers.get(digest)
    if got is None:
        got = coverage_after(before, change) if before is not None and change is not None else coverage(dump)
        cross.covers[digest] = got
    return got


def _step(
    tp: TransformPair,
    loader: DumpLoader,
    rb: RunState,
    rc: RunState,
    cross: CrossState,
    logs: dict[RunId, LogIndex],
    unreadable: list[UnreadableDump],
    formats: dict[RunId, set[str]],
) -> TransformGraphDiff:
    db, dig_b = _load_side(tp.baseline, BASELINE, loader, unreadable, formats[BASELINE])
    dc, dig_c = _load_side(tp.candidate, CANDIDATE, loader, unreadable, formats[CANDIDATE])
    for st, dump in ((rb, db), (rc, dc)):
        if dump is not None and st.dump is None:  # the run's first readable dump: how many layers it holds
            st.layers, st.sizes = layers_of(dump), sizes_of(dump)
    same_b, same_c = dig_b == rb.digest, dig_c == rc.digest
    at = (tp.transform, tp.occurrence)
    reuse = cross.covers is not None
    change_b, change_c = _change(rb, db, same_b, reuse), _change(rc, dc, same_c, reuse)
    delta_b = with_replaced(tp.transform, rb.dump, db,
                        _delta(rb.dump, db, same_b, tp.candidate is None, logs[BASELINE].get(at), change_b))
    delta_c = with_replaced(tp.transform, rc.dump, dc,
                        _delta(rc.dump, dc, same_c, tp.baseline is None, logs[CANDIDATE].get(at), change_c))
    cov_b = None if db is None else rb.cover if same_b else _coverage(db, dig_b, cross, rb.cover, change_b)
    cov_c = None if dc is None else rc.cover if same_c else _coverage(dc, dig_c, cross, rc.cover, change_c)
    base_diff = TransformGraphDiff(
        stage=tp.stage,
        transform=tp.transform,
        occurrence=tp.occurrence,
        baseline_file=tp.baseline.path.name if tp.baseline is not None and db is not None else None,
        candidate_file=tp.candidate.path.name if tp.candidate is not None and dc is not None else None,
        identical=False,
        structure_equal=False,
        coverage=Coverages(cov_b, cov_c, rb.cover, rc.cover),
        delta=Deltas(delta_b, delta_c),
        bodies=None if db is None or dc is None else (dig_b, dig_c),
    )
    # Remember this dump as "previous" for the next transform of each run, now: the previous dumps are not
    # needed any more, and letting them go (with what changed since them, which holds the nodes they alone
    # had) before the alignment keeps two parsed graphs fewer in memory.
    del change_b, change_c
    if db is not None:
        rb.dump, rb.digest, rb.cover = db, dig_b, cov_b
    if dc is not None:
        rc.dump, rc.digest, rc.cover = dc, dig_c, cov_c
    if db is None or dc is None:
        result = base_diff
    elif dig_b == dig_c:
        result = replace(base_diff, identical=True, structure_equal=True,
                         pairs_by_kind=((MatchKind.IDENTICAL, db.node_count),))
    else:
        result = _compare(db, dc, base_diff, cross, (dig_b, dig_c))
    if db is not None and dc is not None:
        hints = find_hints(
            tp,
            cross.alignments,
            cross.identical_prev,
            delta_b,
            delta_c,
            cross.lost_since,
            cross.unmatched_b_since,
            logs,
        )
        result = replace(result, hints=tuple(hints))
        advance(cross, result)
    return result


def _signatures(unmatched: Iterable[Unmatched]) -> dict[int, RegionSig]:
    """Each region's sorted baseline and candidate targets."""
    sides: dict[int, tuple[list[str], list[str]]] = {}
    for u in unmatched:
        if u.region is not None:
            sides.setdefault(u.region, ([], []))[0 if u.run == BASELINE else 1].append(u.target)
    return {r: (tuple(sorted(b)), tuple(sorted(c))) for r, (b, c) in sides.items()}


def _compare(db: GraphDump, dc: GraphDump, base: TransformGraphDiff, cross: CrossState,
             key: tuple[bytes, bytes]) -> TransformGraphDiff:
    """Align the pair and tell new differences from inherited ones."""
    if cross.covers is not None and cross.memo is not None and cross.memo_key == key:
        a = cross.memo  # same two graphs as the previous transform: same alignment
    else:
        a = align_dumps(db, dc)
        if cross.covers is not None:
            cross.memo_key, cross.memo = key, a
    cross.last_key, cross.last = key, a
    # New vs inherited: a difference is reported where it first appears (names are stable within a run).
    new_lost = [m for m in a.changes if m.kind is MetaChangeKind.LOST and m.candidate not in cross.lost_since]
    new_changed = [m for m in a.changes
                   if m.kind is MetaChangeKind.CHANGED and m.candidate not in cross.changed_since]
    # A region continues an earlier one when one of its nodes had no counterpart before, or when it holds
    # the same ops as a region of the previous transform (a pass renamed its nodes within the run).
    sigs = _signatures(a.unmatched)
    continuing = {u.region for u in a.unmatched if u.region is not None
                  and u.name in (cross.unmatched_b_since if u.run == BASELINE else cross.unmatched_c_since)}
    continuing |= {r for r, sig in sigs.items() if sig in cross.region_sigs}
    cross.pending, cross.pending_sigs = a.aligns, set(sigs.values())
    structure_equal = not a.unmatched and not a.rewired and not a.notes
    return replace(
        base,
        structure_equal=structure_equal,
        pairs_by_kind=a.counts,
        unmatched=a.unmatched,
        regions=tuple(r if r.id in continuing else replace(r, new=True) for r in a.regions),
        rewired=a.rewired,
        meta_changes=a.changes,
        new_meta_changes=tuple(new_lost + new_changed),
        notes=a.notes,
    )


__all__ = ["analyze_graphs"]
