"""Tensors recorded per rank (``tensors/rank<r>/``), compared across world sizes.

Under tensor parallelism every rank ends with the model's whole output (the last all-reduce or all-gather
gives each rank the same logits), so a rank's outputs are the run's outputs and are judged as such: a
sharded run against an unsharded one compares **each rank's** outputs with the unsharded run's, under the
same tolerances (a bf16 all-reduce's rounding is within them: tests/unit/kinds/tensors/test_ranks.py); two
sharded runs compare rank by rank, and a rank only one run has is compared with the other run's lowest rank.

A rank's tensors are keyed ``<name>@rank<r>`` (the record keeps the file's own key); :func:`plain` gives
back the name the tolerances, references and logits rules are looked up by.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar

from ad_diff.core.model import BASELINE, CANDIDATE

RANK_FOLDER = re.compile(r"rank_?(\d{1,6})")
"""A rank's folder under ``tensors/`` (``rank1``, ``rank_1``)."""
R = TypeVar("R")
_KEY = re.compile(r"(?P<name>.+)@rank(?P<rank>\d{1,6})")


def key(name: str, rank: int) -> str:
    """The key of tensor ``name`` recorded by ``rank``."""
    return f"{name}@rank{rank}"


def split(k: str) -> tuple[str, int | None]:
    """``(name, rank)`` of a key; ``rank`` is ``None`` for a tensor no rank folder holds."""
    m = _KEY.fullmatch(k)
    return (m["name"], int(m["rank"])) if m else (k, None)


def plain(k: str) -> str:
    """The tensor's name without its rank."""
    return split(k)[0]


def _by_name(records: Mapping[str, object]) -> dict[str, dict[int | None, str]]:
    out: dict[str, dict[int | None, str]] = {}
    for k in records:
        name, rank = split(k)
        out.setdefault(name, {})[rank] = k
    return out


def _ranks(rs: list[int]) -> str:
    return ", ".join(map(str, sorted(rs)))


def spread(base: Mapping[str, R], cand: Mapping[str, R]) -> tuple[dict[str, R], dict[str, R], list[str]]:
    """Both runs' records keyed so that every rank one run recorded has a counterpart in the other: a run's
    rank-less record stands for each rank the other run recorded, else its lowest rank does. A rank-less key
    the other run lacks is left out once it has been spread. Returns both maps and a note per stand-in
    (which run's what was compared with which ranks)."""
    b, c = dict(base), dict(cand)
    stood: dict[tuple[str, str], set[int]] = {}  # (run that stood in, with what) -> ranks
    names_b, names_c = _by_name(base), _by_name(cand)
    for name in sorted(set(names_b) | set(names_c)):
        sides = {BASELINE: names_b.get(name, {}), CANDIDATE: names_c.get(name, {})}
        wanted = {r for keys in sides.values() for r in keys if r is not None}
        if not wanted:
            continue
        for run, out in ((BASELINE, b), (CANDIDATE, c)):
            own, other = sides[run], sides[CANDIDATE if run == BASELINE else BASELINE]
            mine = sorted(r for r in own if r is not None)
            stand = own.get(None) if None in own else (key(name, mine[0]) if mine else None)
            if stand is None:
                continue
            for r in sorted(wanted - set(own)):
                out[key(name, r)] = (base if run == BASELINE else cand)[stand]
                what = "unsharded outputs" if None in own else f"rank {mine[0]}"
                stood.setdefault((run, what), set()).add(r)
            if None in own and None not in other:
                del out[own[None]]
    notes = []
    for (by, what), rs in sorted(stood.items()):
        of = CANDIDATE if by == BASELINE else BASELINE
        notes.append(f"the {of} run's tensors of rank(s) {_ranks(list(rs))} are compared with the "
                     f"{by} run's {what} (same tolerances: every rank holds the whole output)")
    return b, c, notes
