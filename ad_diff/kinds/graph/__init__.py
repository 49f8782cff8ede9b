"""The graph kind: the dumps AD writes after every transform (``AD_DUMP_GRAPHS_DIR``), compared node by node.

Per dump pair: hash, parse each distinct graph once, align nodes across the runs, measure metadata coverage
and rewritten regions, and find root-cause hints for match losses (attached to the log's findings in the
explain stage). Folder problems (gaps, duplicates, unreadable entries) are input findings; a folder that
cannot be analysed degrades to ``ADI006`` while the log comparison stands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ad_diff.core.rules import ANALYSIS_FAILED, ONE_SIDED
from ad_diff.kinds.base import Context, SectionKey, Skipped
from ad_diff.kinds.graph import folder, rules
from ad_diff.kinds.graph.model import GraphAnalysis

if TYPE_CHECKING:
    from ad_diff.core.model import Finding
    from ad_diff.result import DiffResult

STANDS = "the per-transform match counts from the logs still stand"
"""What still holds when an analysis beside the logs cannot run."""


class GraphKind:
    """See the module docstring."""

    key: SectionKey[GraphAnalysis] = SectionKey("graph", "Graph dumps")
    rules = folder.RULES + rules.RULES

    def analyze(self, ctx: Context) -> GraphAnalysis | Skipped:
        """Compare both runs' dump folders transform by transform."""
        from ad_diff.errors import AdDiffError
        from ad_diff.kinds.graph.analysis import analyze_graphs

        base, cand = ctx.baseline, ctx.candidate
        if ctx.from_snapshot:
            ctx.notes.append("baseline is a snapshot: node-level graph and tensor comparisons not run")
            return Skipped("snapshot", "the baseline is a snapshot (counts and coverage only)")
        if base.graphs is None and cand.graphs is None:
            ctx.notes.append("graph analysis not run: neither run has graphs/ (log-only comparison)")
            return Skipped("no_data", "neither run has graphs/")
        if base.graphs is None or cand.graphs is None:
            present = base if cand.graphs is None else cand
            return Skipped("one_sided", "graph dumps (graphs/)", run=present.run_id)
        if not ctx.settings.graphs:
            ctx.notes.append("graph analysis not run: disabled with --no-graphs")
            return Skipped("disabled", "disabled with --no-graphs")
        counts = {art.run_id: folder.dump_count(art.graphs) for art in (base, cand) if art.graphs is not None}
        nb, nc = counts[base.run_id], counts[cand.run_id]
        if nb == 0 and nc == 0:
            ctx.notes.append("graph analysis not run: both graphs/ folders hold no dump files")
            return Skipped("empty", "both graphs/ folders hold no dump files")
        if nb == 0 or nc == 0:
            empty = base if nb == 0 else cand
            return Skipped("empty_one", str(max(nb, nc)), run=empty.run_id)
        try:
            return analyze_graphs(base.graphs, cand.graphs, ctx.baseline_log, ctx.candidate_log)
        except AdDiffError as e:
            return Skipped("unreadable", str(e))

    def classify(self, section: GraphAnalysis | Skipped, ctx: Context) -> list[Finding]:
        """Folder findings (ADI002-005), then the graph findings (ADG) or why the analysis did not run."""
        base, cand = ctx.baseline, ctx.candidate
        if isinstance(section, Skipped):
            if section.reason == "snapshot":
                return _snapshot_coverage(ctx)
            if section.reason == "one_sided":
                present, missing = (base, cand) if section.run == base.run_id else (cand, base)
                return [ONE_SIDED.make(what=section.detail, present=present.run_id, missing=missing.run_id,
                                       analysis="graph analysis")]
            if section.reason in ("no_data", "disabled"):
                return []
        out: list[Finding] = []
        for art in (base, cand):
            assert art.graphs is not None
            out += folder.check_dump_folder(art.graphs, art.run_id)
        if isinstance(section, Skipped):
            if section.reason == "empty_one":
                other = cand if section.run == base.run_id else base
                out.append(folder.DUMPS_EMPTY.make(run=section.run, other=other.run_id, count=int(section.detail)))
            elif section.reason == "unreadable":
                out.append(ANALYSIS_FAILED.make(analysis="graph analysis", error=section.detail, stands=STANDS))
            return out
        return out + list(section.findings)

    def explain(self, section: GraphAnalysis, findings: list[Finding], ctx: Context) -> tuple[GraphAnalysis,
                                                                                               list[Finding]]:
        """Attach the dumps' root-cause hints to the match losses they explain."""
        from ad_diff.kinds.graph.analysis import attach_hints

        return section, list(attach_hints(tuple(findings), section))

    def render_markdown(self, section: GraphAnalysis, result: DiffResult) -> str:
        """The ``Graph dumps`` section."""
        from ad_diff.kinds.graph.section import render_markdown

        return render_markdown(section, result.ignored_transforms)

    def render_terminal(self, section: GraphAnalysis, result: DiffResult) -> Any:
        """The graph section at a glance."""
        from ad_diff.kinds.graph.section import render_terminal

        return render_terminal(section)


def _snapshot_coverage(ctx: Context) -> list[Finding]:
    """Metadata lost against the coverage a snapshot recorded (transform-level counts only)."""
    from ad_diff.kinds.log import snapshot

    out = []
    for key, before, after in snapshot.check_coverage(ctx.settings.baseline, ctx.candidate.graphs):
        stage, _, transform = key.partition("/")
        out.append(rules.SNAPSHOT_COVERAGE.make(transform=transform.split("#")[0], stage=stage, before=before,
                                                after=after, evidence={"dump": key}))
    return out


GRAPH = GraphKind()
"""The graph kind's one instance (registered in :data:`ad_diff.kinds.KINDS`)."""
