"""The log kind's model: a parsed AutoDeploy log (:mod:`ad_diff.core.runlog`).

The classes live in ``core`` because every kind reads the run's log (the graph kind pairs dumps with its
records, the config kind checks it against the config); this module names them for the log kind's own
stages and for the report.
"""

from __future__ import annotations

from ad_diff.core.runlog import (
    FINAL_TRANSFORMS,
    AfterEnd,
    IssueKind,
    LogEnd,
    LogIssue,
    RankLog,
    Restore,
    RunLog,
    pipeline_finished,
)

__all__ = ["FINAL_TRANSFORMS", "AfterEnd", "IssueKind", "LogEnd", "LogIssue", "RankLog", "Restore", "RunLog",
           "pipeline_finished"]
