"""Naming the anonymous results of an L2 log (no ``[stage=..., transform=...]``) from the run's dumps."""

from __future__ import annotations

from dataclasses import replace

from ad_diff.kinds.log.model import RunLog


def attribute(log: RunLog, names: list[tuple[str, str]]) -> tuple[RunLog, str]:
    """Name a log's anonymous (``#n``) records from ``names`` = the (stage, transform) of each dump file.

    AD writes one dump per transform in pipeline order, except transforms that see no GraphModule (the
    factory stage's ``build_model``), which write none. So the dumps name the *last* ``len(names)`` results;
    earlier extra results stay unattributed. Returns the new log and a sentence saying what was done.
    """
    anon = [i for i, r in enumerate(log.transforms) if r.stage == "?"]
    if not anon:
        return log, ""
    what = f"{len(anon)} result line(s) name no transform (L2 logger)"
    if not names:
        return log, f"{what} and there are no dumps to name them"
    if len(names) > len(anon):
        return log, f"{what} but graphs/ holds {len(names)} dumps; they were left unattributed"
    recs = list(log.transforms)
    offset = len(anon) - len(names)
    for k, (stage, transform) in enumerate(names):
        i = anon[offset + k]
        r = recs[i]
        recs[i] = replace(r, stage=stage, transform=transform)
    named = tuple(recs)
    ranks = tuple(replace(rl, transforms=named) if rl.rank == log.rank else rl for rl in log.ranks)
    return replace(log, transforms=named, ranks=ranks), (
        f"{what}; {len(names)} named from the graphs/ dump order"
        + (f", the first {offset} left unattributed" if offset else ""))
