"""Everything history reads of the comparison's kinds, through their packages' public names only.

History reads runs as the log kind does (its parser and run-end classes; the snapshot loader and the
dump listing come from the discover layer), judges one step as the log kind's rules would
(:func:`classify_log`, ``INCOMPLETE``), and names anonymous result lines from the dump order as ``compare``
does. Nothing else in
:mod:`ad_diff.history` imports :mod:`ad_diff.kinds`.
"""

from __future__ import annotations

from pathlib import Path

from ad_diff.discover.dumps import list_dumps
from ad_diff.discover.snapshot import load_as_run as load_snapshot
from ad_diff.errors import AdDiffError
from ad_diff.kinds.log import (
    INCOMPLETE,
    LogEnd,
    RunLog,
    attribute_results,
    classify_log,
    read_log,
)


def attribute(log: RunLog, graphs: Path | None) -> RunLog:
    """Name result lines that carry no transform (L2 logger) from the dump order, as ``compare`` does."""
    if not log.anonymous or graphs is None:
        return log
    try:
        names = [(d.stage, d.transform) for d in list_dumps(graphs)[0]]
    except AdDiffError:
        return log  # the results stay positional (#n), as in compare
    return attribute_results(log, names)[0]


__all__ = ["INCOMPLETE", "LogEnd", "RunLog", "attribute", "classify_log", "load_snapshot", "read_log"]
