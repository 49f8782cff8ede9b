"""The log kind: each run's AutoDeploy log, parsed and paired transform by transform.

The log is the spine of every comparison: its per-transform rows (:class:`LogComparison`) are what the other
kinds hang their findings on, so it runs first and always. A snapshot baseline (``ad-diff snapshot``)
stands in for the baseline's log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ad_diff.kinds.base import Context, SectionKey, Skipped
from ad_diff.kinds.log import rules
from ad_diff.kinds.log.model import IssueKind, RunLog
from ad_diff.kinds.log.section import LogComparison

if TYPE_CHECKING:
    from ad_diff.core.model import Finding
    from ad_diff.discover import RunArtifacts
    from ad_diff.result import DiffResult


def _attribute(log: RunLog, art: RunArtifacts, notes: list[str]) -> RunLog:
    """Name result lines that carry no transform (L2 logger) from the order of the run's dump files."""
    from ad_diff.errors import AdDiffError
    from ad_diff.kinds.log.attribute import attribute

    if not log.anonymous:
        return log
    names: list[tuple[str, str]] = []
    if art.graphs is not None:
        from ad_diff.kinds.graph.pair import list_dumps

        try:
            names = [(d.stage, d.transform) for d in list_dumps(art.graphs)[0]]
        except AdDiffError as e:  # unreadable dumps: the results stay positional (#n), and we say why
            notes.append(f"{art.run_id}: result lines name no transform and the dumps could not name them "
                         f"({e})")
            return log
    log, note = attribute(log, names)
    notes.append(f"{art.run_id}: {note}")
    return log


class LogKind:
    """See the module docstring."""

    key: SectionKey[LogComparison] = SectionKey("log", "Transforms")
    rules = rules.RULES

    def analyze(self, ctx: Context) -> LogComparison | Skipped:
        """Parse both logs (rank ``settings.rank``) and pair their transforms."""
        from ad_diff.kinds.log import parse, snapshot
        from ad_diff.kinds.log.align import pair_transforms

        settings = ctx.settings
        ctx.progress("reading logs", 0, 2)
        if ctx.from_snapshot:
            _, blog = snapshot.load_as_run(settings.baseline)
        else:
            assert ctx.baseline.log is not None  # discover raises otherwise
            blog = parse.parse(ctx.baseline.log, rank=settings.rank)
        ctx.progress("reading logs", 1, 2)
        assert ctx.candidate.log is not None
        clog = parse.parse(ctx.candidate.log, rank=settings.rank)
        ctx.progress("reading logs", 2, 2)
        for run_id, log in ((ctx.baseline.run_id, blog), (ctx.candidate.run_id, clog)):
            ctx.notes += [f"{run_id} log {log.path}: {i.text} (shown as U+FFFD)" for i in log.issues
                          if i.kind is IssueKind.ENCODING]
        blog = _attribute(blog, ctx.baseline, ctx.notes)
        clog = _attribute(clog, ctx.candidate, ctx.notes)
        return LogComparison(blog, clog, pair_transforms(blog, clog, settings.ignore_transforms))

    def classify(self, section: LogComparison | Skipped, ctx: Context) -> list[Finding]:
        """Match losses, state changes and each log's health (ADL rules)."""
        if isinstance(section, Skipped):
            return []
        return rules.classify(section, ctx.settings.collapse_fraction)

    def explain(self, section: LogComparison, findings: list[Finding], ctx: Context) -> tuple[LogComparison,
                                                                                               list[Finding]]:
        """Nothing to add: the log's findings are the ones the others explain."""
        return section, findings

    def render_markdown(self, section: LogComparison, result: DiffResult) -> str:
        """The transforms table is part of the report's frame (``ad_diff.report.markdown``)."""
        return ""

    def render_terminal(self, section: LogComparison, result: DiffResult) -> Any:
        """The transforms table is part of the report's frame (``ad_diff.report.terminal``)."""
        return None


__all__ = ["LOG", "LogComparison", "LogKind"]

LOG = LogKind()
"""The log kind's one instance (registered in :data:`ad_diff.kinds.KINDS`)."""
