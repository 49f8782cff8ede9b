"""Run-level events in a log (FORMATS.md section 7): a restored cached graph, cache saves and rebuilds.

What the run did, wherever the line came from: with AD's logger prefix or without, inside a transform's
context or not. A restore decides what can be compared (the transforms before it did not run in that run);
the other events are kept for the report.
"""

from __future__ import annotations

import re

from ad_diff.core import lazy
from ad_diff.core.runlog import Cache, EventKind, Restore, RunEvent

_RESTORED = lazy.pattern(r"^Restored AutoDeploy pipeline snapshot for '([^']+)' from (.*)$")
CACHE = re.compile(
    r"^\[cache\] (?:(Loaded graph from) (.*)|(Saved graph to) |(Corrupt cache entry) "
    r"|(Evicting|Failed to write))"
)
"""The graph cache's lines (FORMATS.md 7.1): a load (group 2: where from), a save, a rebuild, book-keeping."""
SNAPSHOT_SAVED = "Saved AutoDeploy pipeline snapshot "
SNAPSHOT_REBUILT = ("Pipeline snapshot manifest mismatch ", "Skipping boundary ")


def read_event(msg: str, line: int, after: int) -> Restore | RunEvent | None:
    """The event a message (no logger prefix, no transform context) records, ``None`` for none; ``after``:
    how many results the rank logged before it (where a restore without a named boundary takes effect)."""
    if msg.startswith("Restored AutoDeploy"):
        r = _RESTORED.match(msg)
        if r:
            return Restore(r.group(1), r.group(2).strip(), line, Cache.PIPELINE, after)
    c = CACHE.match(msg)
    if c is not None:
        if c.group(1):
            return Restore(None, c.group(2).strip(), line, Cache.GRAPH, after)
        kind = (EventKind.CACHE_SAVED if c.group(3) else EventKind.CACHE_REBUILT if c.group(4)
                else EventKind.CACHE_OTHER)
    elif msg.startswith(SNAPSHOT_SAVED):
        kind = EventKind.SNAPSHOT_SAVED
    elif msg.startswith(SNAPSHOT_REBUILT):
        kind = EventKind.CACHE_REBUILT
    else:
        return None
    return RunEvent(kind, line, msg[:300])


__all__ = ["CACHE", "read_event"]
