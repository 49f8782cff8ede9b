"""Scenarios of issue 40 ("one model of the run"): ad-diff judges what the runs did, not how they printed it.

Most are derived from a scenario of :mod:`.scenarios` by one change of presentation (log format, prefix,
verbosity, the dumps' output line), of run events (a graph-cache load, a world size) or of what the user
switched off, so that their expected outcome is the original's by construction; the others add one
substantive change (a loss after the cache point, dumps left over from another model, a rank-only change).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .run_folder import Side
from .scenarios import BASE, Scenario

_CACHE_POINT = "sharding_transform_executor"
By = dict[str, Scenario]


def _graph_cache(by: By) -> Side:
    """cache_restore's candidate, restored from AD's graph cache instead of a pipeline snapshot."""
    side = replace(by["cache_restore"].candidate, restore_cache="graph")
    assert side.restored_at == _CACHE_POINT
    return side


def graph_cache_load(by: By) -> Scenario:
    return Scenario(
        "graph_cache_load", "The candidate loaded AD's graph cache (AD_ENABLE_CACHING).",
        "The candidate logs `[cache] Loaded graph from /cache/ad-graphs/<key>/graph.pt` (AD logger prefix, no "
        "transform context) where cache_restore logs its pipeline snapshot line, and runs only the transforms "
        f"after the sharding stage: no log lines and no dumps up to {_CACHE_POINT}, its dump counter restarting "
        "at 001 with load_weights.",
        f"Pass with no error or warning: the transforms up to {_CACHE_POINT} are not compared, restored from "
        "AD's graph cache (one note, not one finding per transform); everything after is compared as usual and "
        "is the same.", "pass", (),
        BASE, _graph_cache(by))


BUILDERS: list[Callable[[By], Scenario]] = [
    graph_cache_load]


def fact_scenarios(existing: list[Scenario]) -> list[Scenario]:
    """The issue 40 scenarios, in manifest order; ``existing`` holds the scenarios they are derived from."""
    by = {sc.name: sc for sc in existing}
    return [build(by) for build in BUILDERS]


__all__ = ["fact_scenarios"]
