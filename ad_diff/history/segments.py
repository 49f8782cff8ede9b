"""Run-length segments of every (model, transform occurrence) series of the long table, in numpy.

A model's series runs over the runs where that model has a complete, readable leaf (other runs are gaps,
not changes). In such a run a transform the log does not show is ``absent``. The table holds only the
rows that exist, so absent stretches are inserted where a key's run positions skip, before its first
row and after its last. Work is linear in the rows (plus a sort), whatever the number of keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ad_diff.core import lazy
from ad_diff.core.model import State
from ad_diff.history.columns import NO_COUNT, STATES

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy.module("pandas")

_SHIFT = 40
_LOW = (1 << _SHIFT) - 1
ABSENT = STATES.index(State.ABSENT.value) << _SHIFT  # absent, no count


def encode(state: np.ndarray, count: np.ndarray) -> np.ndarray:
    """One int64 per (state code, count): equal values have equal codes."""
    return (state.astype(np.int64) << _SHIFT) | (count.astype(np.int64) + 1)


def decode(value: int) -> tuple[str, int | None]:
    """``(state, matches)`` of a value code."""
    count = (value & _LOW) - 1
    return STATES[value >> _SHIFT], None if count == NO_COUNT else count


@dataclass(frozen=True)
class Segments:
    """Merged segments of all keys, sorted by key then position; a key's segments cover all its runs."""

    key_model: np.ndarray
    """Per key: model code."""
    key_transform: np.ndarray
    key_occurrence: np.ndarray
    key_stage: np.ndarray
    """Per key: stage code in the key's last run with a row."""
    key_position: np.ndarray
    """Per key: place in the pipeline (row position in its last run with a row), for display order."""
    seg_key: np.ndarray
    seg_start: np.ndarray
    """Position (index into the model's runs) of the segment's first run."""
    seg_length: np.ndarray
    seg_value: np.ndarray
    key_first: np.ndarray
    """Per key: index of its first segment (``key_first[k + 1]`` ends it)."""


def _empty() -> np.ndarray:
    return np.zeros(0, np.int64)


@dataclass(frozen=True)
class _Rows:
    """The complete leaves' rows, one per (key, position), sorted by key then position."""

    key: np.ndarray
    pos: np.ndarray
    """Place of the row's run among its model's used runs."""
    value: np.ndarray
    model: np.ndarray
    transform: np.ndarray
    occurrence: np.ndarray
    stage: np.ndarray
    position: np.ndarray


def _rows(table: pd.DataFrame, model_runs: list[np.ndarray]) -> _Rows:
    """Key, run position and value code of every row of a complete leaf (status code 0)."""
    ok = table["status"].cat.codes.to_numpy() == 0
    m = table["model"].cat.codes.to_numpy()[ok].astype(np.int64)
    run = table["run_index"].to_numpy()[ok].astype(np.int64)
    t = table["transform"].cat.codes.to_numpy()[ok].astype(np.int64)
    o = table["occurrence"].to_numpy()[ok].astype(np.int64)
    stage = table["stage"].cat.codes.to_numpy()[ok]
    position = table["position"].to_numpy()[ok]
    value = encode(
        table["state"].cat.codes.to_numpy()[ok],
        table["count"].to_numpy(dtype=np.int64, na_value=NO_COUNT)[ok],
    )
    # position of each row's run among its model's used runs
    n_runs = max((int(r.max()) + 1 for r in model_runs if len(r)), default=1)
    used = np.concatenate([mi * n_runs + r.astype(np.int64) for mi, r in enumerate(model_runs)] or [_empty()])
    model_start = np.cumsum([0] + [len(r) for r in model_runs])
    pos = np.searchsorted(used, m * n_runs + run) - model_start[m]
    # keys: (model, transform, occurrence), factorized in two steps so no product can overflow
    pair, _ = pd.factorize(m * (int(t.max(initial=0)) + 1) + t)
    key, _ = pd.factorize(pair.astype(np.int64) * (int(o.max(initial=0)) + 1) + o)
    key = key.astype(np.int64)
    order = np.lexsort((pos, key))
    key, pos, value = key[order], pos[order], value[order]
    m, t, o, stage, position = m[order], t[order], o[order], stage[order], position[order]
    # one row per (key, position): a hand-edited snapshot may repeat a transform; the last one counts
    keep = np.ones(len(key), bool)
    keep[:-1] = (key[1:] != key[:-1]) | (pos[1:] != pos[:-1])
    return _Rows(*(a[keep] for a in (key, pos, value, m, t, o, stage, position)))


def _runs(key: np.ndarray, pos: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, ...]:
    """Key, first and last position and value of each stretch of sorted rows with one value over
    consecutive positions."""
    first_row = np.ones(len(key), bool)
    first_row[1:] = key[1:] != key[:-1]
    new = first_row.copy()
    new[1:] |= (pos[1:] != pos[:-1] + 1) | (value[1:] != value[:-1])
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(key))[: len(starts)] - 1
    return key[starts], pos[starts], pos[ends], value[starts]


def _absent(
    s_key: np.ndarray, s_p0: np.ndarray, s_p1: np.ndarray, last_pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Key, first and last position of the absent stretches around the row stretches ``s_*`` (sorted by
    key then position): before a key's first row, between rows whose positions skip, after its last row
    (``last_pos``: per stretch, the last position of its key's model)."""
    s_first = np.ones(len(s_key), bool)
    s_first[1:] = s_key[1:] != s_key[:-1]
    s_last = np.ones(len(s_key), bool)
    s_last[:-1] = s_key[1:] != s_key[:-1]
    lead = s_first & (s_p0 > 0)
    gap = ~s_first
    gap[1:] &= s_p0[1:] > s_p1[:-1] + 1
    gap_idx = np.flatnonzero(gap)
    trail = s_last & (s_p1 < last_pos)
    a_key = np.concatenate([s_key[lead], s_key[gap_idx], s_key[trail]])
    a_p0 = np.concatenate([np.zeros(int(lead.sum()), np.int64), s_p1[gap_idx - 1] + 1, s_p1[trail] + 1])
    a_p1 = np.concatenate([s_p0[lead] - 1, s_p0[gap_idx] - 1, last_pos[trail]])
    return a_key, a_p0, a_p1


def build(table: pd.DataFrame, model_runs: list[np.ndarray]) -> Segments:
    """Segments of every key of ``table``'s complete leaves; ``model_runs[m]``: model m's used runs."""
    r = _rows(table, model_runs)
    n_of_model = np.diff(np.cumsum([0] + [len(u) for u in model_runs]))
    n_keys = int(r.key.max(initial=-1)) + 1
    key_model, key_t, key_o, key_stage, key_pos = (
        np.zeros(n_keys, a.dtype) for a in (r.model, r.transform, r.occurrence, r.stage, r.position)
    )
    # assigning in sorted order leaves each key's last row (its latest run) in place
    key_model[r.key], key_t[r.key], key_o[r.key] = r.model, r.transform, r.occurrence
    key_stage[r.key], key_pos[r.key] = r.stage, r.position

    s_key, s_p0, s_p1, s_val = _runs(r.key, r.pos, r.value)
    a_key, a_p0, a_p1 = _absent(s_key, s_p0, s_p1, n_of_model[key_model[s_key]] - 1)
    all_key = np.concatenate([s_key, a_key])
    all_p0 = np.concatenate([s_p0, a_p0])
    all_p1 = np.concatenate([s_p1, a_p1])
    all_val = np.concatenate([s_val, np.full(len(a_key), ABSENT, np.int64)])
    order = np.lexsort((all_p0, all_key))
    all_key, all_p0, all_p1, all_val = all_key[order], all_p0[order], all_p1[order], all_val[order]
    # merge neighbours of equal value (an `absent` row next to an inserted absent stretch)
    head = np.ones(len(all_key), bool)
    head[1:] = (all_key[1:] != all_key[:-1]) | (all_val[1:] != all_val[:-1])
    h = np.flatnonzero(head)
    h_end = np.append(h[1:], len(all_key))[: len(h)] - 1
    seg_key = all_key[h]
    key_first = np.searchsorted(seg_key, np.arange(n_keys + 1))
    return Segments(
        key_model,
        key_t,
        key_o,
        key_stage,
        key_pos,
        seg_key,
        all_p0[h],
        all_p1[h_end] - all_p0[h] + 1,
        all_val[h],
        key_first,
    )
