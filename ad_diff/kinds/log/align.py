"""Pair the transforms of two logs into comparison rows, in pipeline order.

Transforms are matched by ``(transform, occurrence)`` (AD keys are unique across stages, and a key whose
stage moved is still the same transform), never by position, so a transform added
or removed in one run does not shift every later row. The merged order follows both runs: an LCS over
the two key sequences (difflib) keeps common transforms in their shared order and slots run-only
transforms in where they ran.
"""

from __future__ import annotations

import difflib
from fnmatch import fnmatchcase

from ad_diff.core.model import Side, State, TransformComparison, TransformRecord
from ad_diff.kinds.log.model import RunLog

_ABSENT = Side(State.ABSENT, None)

Key = tuple[str, int]


def _side(r: TransformRecord | None) -> Side:
    return _ABSENT if r is None else Side(r.state, r.matches, r.timing, r.failure, r.stage)


def _keys(log: RunLog, ignore: tuple[str, ...]) -> list[tuple[Key, TransformRecord]]:
    return [
        ((r.transform, r.occurrence), r)
        for r in log.transforms
        if not any(fnmatchcase(r.transform, pat) for pat in ignore)
    ]


def pair_transforms(
    baseline: RunLog, candidate: RunLog, ignore: tuple[str, ...] = ()
) -> tuple[TransformComparison, ...]:
    """Return one row per transform seen in either run, in merged pipeline order.

    ``ignore`` holds fnmatch globs of transform keys left out entirely.
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
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for (k, br), (_, cr) in zip(b[i1:i2], c[j1:j2], strict=True):
                rows.append(TransformComparison(br.stage, k[0], k[1], _side(br), _side(cr)))
            continue
        # Keys present on both sides but out of order (a stage moved) are paired on the baseline position.
        for k, br in b[i1:i2]:
            rows.append(TransformComparison(br.stage, k[0], k[1], _side(br), _side(c_by_key.get(k))))
        for k, cr in c[j1:j2]:
            if k in b_keys:
                continue
            rows.append(TransformComparison(cr.stage, k[0], k[1], _ABSENT, _side(cr)))
    return tuple(rows)
