"""The log kind: each run's AutoDeploy log, parsed and paired transform by transform.

The log is the spine of every comparison: its per-transform rows (:class:`LogComparison`) are what the other
kinds hang their findings on, so it runs first and always. A snapshot baseline (``ad-diff snapshot``)
stands in for the baseline's log.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ad_diff.errors import AdDiffError, InputError
from ad_diff.kinds.base import Context, SectionKey, Skipped
from ad_diff.kinds.log import classify, parse, rules
from ad_diff.kinds.log.classify import classify_log
from ad_diff.kinds.log.compare import compare_logs
from ad_diff.kinds.log.model import LogComparison, LogEnd, RunLog
from ad_diff.kinds.log.notes import log_notes
from ad_diff.kinds.log.ranks import with_primary
from ad_diff.kinds.log.rules import INCOMPLETE

if TYPE_CHECKING:
    from ad_diff.core.facts import Evidence, Facts
    from ad_diff.core.model import Finding
    from ad_diff.core.view import SectionView, ViewContext
    from ad_diff.discover import RunArtifacts
    from ad_diff.discover.logs import LogFile


def read_log(source: Path | Sequence[LogFile], rank: int | None = 0) -> RunLog:
    """A run's AutoDeploy log (one file, or one :class:`LogFile` per rank) parsed into a :class:`RunLog`
    (:func:`ad_diff.kinds.log.parse.parse`: ``rank`` is the primary rank; raises ``InputError``)."""
    return parse.parse(source, rank=rank)


def attribute_results(log: RunLog, names: list[tuple[str, str]]) -> tuple[RunLog, str]:
    """``log`` with its anonymous (``#n``) results named from the (stage, transform) of each dump file, and
    a sentence saying what was done (:func:`ad_diff.kinds.log.attribute.attribute`)."""
    from ad_diff.kinds.log.attribute import attribute  # lazy: only for a log whose results name no transform

    return attribute(log, names)


def _dump_names(art: RunArtifacts, notes: list[str]) -> list[tuple[str, str]] | None:
    """The (stage, transform) of the run's dump files in order; ``None`` when it has none to read."""
    if art.graphs is None:
        return []
    from ad_diff.discover.dumps import list_dumps  # lazy: the dump listing only for anonymous results

    try:
        return [(d.stage, d.transform) for d in list_dumps(art.graphs)[0]]
    except AdDiffError as e:  # unreadable dumps: the results stay positional (#n), and we say why
        notes.append(f"{art.run_id}: result lines name no transform and the dumps could not name them ({e})")
        return None


def _named(blog: RunLog, clog: RunLog, ctx: Context) -> tuple[RunLog, RunLog]:
    """Both logs with the result lines that carry no transform (L2 logger) named (:func:`name_results`)."""
    for art in (ctx.baseline, ctx.candidate):
        mine, other = (blog, clog) if art is ctx.baseline else (clog, blog)
        if not mine.anonymous:
            continue
        explicit = ctx.settings.baseline_config if art is ctx.baseline else ctx.settings.candidate_config
        # lazy: only for a log whose results name no transform (L2 logger)
        from ad_diff.kinds.log.attribute import name_results

        named, notes = name_results(mine, _dump_names(art, ctx.notes), other,
                                    ctx.config.pipeline(art.root, explicit))
        ctx.notes += [f"{art.run_id}: {n}" for n in notes]
        blog, clog = (named, clog) if art is ctx.baseline else (blog, named)
    return blog, clog


def _shared_primary(blog: RunLog, clog: RunLog) -> tuple[RunLog, RunLog]:
    """Both logs led by the same rank: rank 0 when both have it, else the lowest rank both have."""
    if blog.rank == clog.rank or blog.rank is None or clog.rank is None:
        return blog, clog
    shared = sorted(set(blog.ranks_seen) & set(clog.ranks_seen))
    if not shared:
        raise InputError(clog.path, f"has ranks {', '.join(map(str, clog.ranks_seen))} and the baseline "
                                    f"{', '.join(map(str, blog.ranks_seen))}: no rank in common; pick one "
                                    "with --rank")
    lead = 0 if 0 in shared else shared[0]
    return with_primary(blog, lead), with_primary(clog, lead)


class LogKind:
    """See the module docstring."""

    key: SectionKey[LogComparison] = SectionKey("log", "Transforms")
    rules = rules.RULES

    def analyze(self, ctx: Context) -> LogComparison | Skipped:
        """Parse both logs (every rank, or ``settings.rank``) and pair their transforms rank by rank."""
        settings = ctx.settings
        ctx.progress("reading logs", 0, 2)
        if ctx.from_snapshot:
            from ad_diff.discover import snapshot  # lazy: only for a snapshot baseline

            _, blog = snapshot.load_as_run(settings.baseline)
        else:
            blog = parse.parse(ctx.baseline.logs, rank=settings.rank)
        ctx.progress("reading logs", 1, 2)
        clog = parse.parse(ctx.candidate.logs, rank=settings.rank)
        ctx.progress("reading logs", 2, 2)
        if settings.rank is None:
            blog, clog = _shared_primary(blog, clog)
        blog, clog = _named(blog, clog, ctx)
        section = compare_logs(blog, clog, settings.ignore_transforms, narrowed=settings.rank is not None)
        ctx.notes += log_notes(section)
        return section

    def classify(self, section: LogComparison | Skipped, ctx: Context) -> list[Finding]:
        """Match losses, state changes and each log's health (ADL rules)."""
        if isinstance(section, Skipped):
            return []
        return classify.classify(section, ctx.settings.collapse_fraction)

    def explain(self, section: LogComparison, findings: list[Finding], ctx: Context) -> tuple[LogComparison,
                                                                                               list[Finding]]:
        """Nothing to add: what the log shows that another kind saw too (a moved transform) is settled by the
        rules' data (``REORDERED.yields_to``, :mod:`ad_diff.explain.roles`)."""
        return section, findings

    def facts(self, section: LogComparison, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
        """This kind's facts for the accounting pass:
        each rank's transform results and the lines no reader claims (:mod:`.facts`)."""
        from ad_diff.kinds.log.facts import facts  # lazy: read when the accounting runs

        return facts(section, ctx, ev, ignored)

    def view(self, section: LogComparison, ctx: ViewContext) -> SectionView | None:
        """None: the per-transform table is part of the report's frame (every reporter draws it)."""
        return None


__all__ = [
    "INCOMPLETE",
    "LOG",
    "LogComparison",
    "LogEnd",
    "LogKind",
    "RunLog",
    "attribute_results",
    "classify_log",
    "read_log",
]

LOG = LogKind()
"""The log kind's one instance (registered in :data:`ad_diff.kinds.KINDS`)."""
