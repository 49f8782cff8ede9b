"""Pair the transforms of two logs into comparison rows, in pipeline order (for one rank, or for every rank).

Transforms are matched by ``(transform, occurrence)`` (AD keys are unique across stages, and a key whose
stage moved is still the same transform), never by position, so a transform added or removed in one run
does not shift every later row. The merged order follows both runs: an LCS over the two key sequences
(difflib) keeps common transforms in their shared order and slots run-only transforms in where they ran.
Common transforms outside that shared order ran at another position: they are listed as :class:`Moved`.

A run that restored a cached graph (AD's pipeline cache or graph cache) never ran the transforms before its
restore point: on its side those rows are ``restored`` (not ``absent``), so nothing reads them as lost.
"""

from __future__ import annotations

import difflib
from fnmatch import fnmatchcase

from ad_diff.core.model import Side, State, TransformComparison, TransformRecord
from ad_diff.kinds.log.model import Moved, RankLog, Restore, RunLog

_ABSENT = Side(State.ABSENT, None)
_RESTORED = Side(State.RESTORED, None)

Key = tuple[str, int]


def _side(r: TransformRecord | None) -> Side:
    return _ABSENT if r is None else Side(r.state, r.matches, r.timing, r.failure, r.stage)


def _keys(records: tuple[TransformRecord, ...], ignore: tuple[str, ...]) -> list[tuple[Key, TransformRecord]]:
    return [
        ((r.transform, r.occurrence), r)
        for r in records
        if not any(fnmatchcase(r.transform, pat) for pat in ignore)
    ]


def pair_records(
    baseline: tuple[TransformRecord, ...],
    candidate: tuple[TransformRecord, ...],
    ignore: tuple[str, ...] = (),
    restored: tuple[Restore | None, Restore | None] = (None, None),
) -> tuple[tuple[TransformComparison, ...], tuple[Moved, ...]]:
    """One row per transform seen in either list, in merged pipeline order, and the transforms that moved.

    ``ignore`` holds fnmatch globs of transform keys left out entirely; ``restored`` the pipeline-cache
    restore of the baseline and of the candidate, if any.
    """
    b = _keys(baseline, ignore)
    c = _keys(candidate, ignore)
    bk = [k for k, _ in b]
    ck = [k for k, _ in c]
    rows: list[TransformComparison] = []
    sm = difflib.SequenceMatcher(a=bk, b=ck, autojunk=False)
    c_by_key: dict[Key, TransformRecord] = {}
    for k, r in c:
        c_by_key.setdefault(k, r)
    b_keys = set(bk)
    in_order: set[Key] = set()
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for (k, br), (_, cr) in zip(b[i1:i2], c[j1:j2], strict=True):
                rows.append(TransformComparison(br.stage, k[0], k[1], _side(br), _side(cr)))
                in_order.add(k)
            continue
        # Keys present on both sides but out of order (a stage moved) are paired on the baseline position.
        for k, br in b[i1:i2]:
            rows.append(TransformComparison(br.stage, k[0], k[1], _side(br), _side(c_by_key.get(k))))
        for k, cr in c[j1:j2]:
            if k in b_keys:
                continue
            rows.append(TransformComparison(cr.stage, k[0], k[1], _ABSENT, _side(cr)))
    moved = _moved(bk, ck, in_order, b, c)
    b_restore, c_restore = restored
    if c_restore is not None:
        rows = _mark_restored(rows, c_restore, candidate, candidate_side=True)
    if b_restore is not None:
        rows = _mark_restored(rows, b_restore, baseline, candidate_side=False)
    return tuple(rows), moved


def _moved(bk: list[Key], ck: list[Key], in_order: set[Key], b: list[tuple[Key, TransformRecord]],
           c: list[tuple[Key, TransformRecord]]) -> tuple[Moved, ...]:
    common = set(bk) & set(ck)
    out = []
    for i, (k, r) in enumerate(b):
        if k in common and k not in in_order:
            j = ck.index(k)
            before_b = b[i - 1][0][0] if i else None
            before_c = c[j - 1][0][0] if j else None
            out.append(Moved(r.stage, k[0], k[1], before_b, before_c))
    return tuple(out)


def _mark_restored(
    rows: list[TransformComparison], restore: Restore, mine: tuple[TransformRecord, ...], candidate_side: bool
) -> list[TransformComparison]:
    """Rows before the restore point that the restoring run lacks become ``restored`` there.

    The point is the boundary the cache names, where the other run ran it (up to and including it); else
    the first transform the restoring run logged after the restore line (up to, not including it).
    """
    def side(r: TransformComparison) -> Side:
        return r.candidate if candidate_side else r.baseline

    def other(r: TransformComparison) -> Side:
        return r.baseline if candidate_side else r.candidate

    upto = next((i for i, r in enumerate(rows)
                 if r.transform == restore.boundary and other(r).state is not State.ABSENT), None)
    if upto is None:
        first = mine[restore.after] if restore.after < len(mine) else None
        at = next((i for i, r in enumerate(rows) if first is not None
                   and (r.transform, r.occurrence) == (first.transform, first.occurrence)), len(rows))
        upto = at - 1
    out = list(rows)
    for i in range(upto + 1):
        r = out[i]
        if side(r).state is State.ABSENT:
            b, c = (r.baseline, _RESTORED) if candidate_side else (_RESTORED, r.candidate)
            out[i] = TransformComparison(r.stage, r.transform, r.occurrence, b, c)
    return out


def pair_transforms(
    baseline: RunLog | RankLog, candidate: RunLog | RankLog, ignore: tuple[str, ...] = ()
) -> tuple[TransformComparison, ...]:
    """Return one row per transform seen in either run (or rank), in merged pipeline order.

    ``ignore`` holds fnmatch globs of transform keys left out entirely.
    """
    return pair_records(baseline.transforms, candidate.transforms, ignore,
                        (baseline.restored, candidate.restored))[0]
