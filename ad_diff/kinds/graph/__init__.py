"""The graph kind: the dumps AD writes after every transform (``AD_DUMP_GRAPHS_DIR``), compared node by node.

Per dump pair: hash, parse each distinct graph once, align nodes across the runs, measure metadata coverage
and rewritten regions, and find root-cause hints for match losses (``analysis``: measurements only). The
rules stage (``classify``, with the rules in ``rules``) turns them into findings, and the folder listings
(:mod:`ad_diff.discover.dumps`: gaps, duplicates, unreadable entries) into input findings; a folder that
cannot be analysed degrades to ``ADI006`` while the log comparison stands. The hints attach to the log's
match losses in the explain stage.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ad_diff.core.model import Finding
from ad_diff.core.rules import ANALYSIS_FAILED, ONE_SIDED, STANDS
from ad_diff.errors import AdDiffError
from ad_diff.kinds.base import Context, SectionKey, Skipped, SkipReason
from ad_diff.kinds.graph import rules

# The graph model, diff and classify modules are imported where a run has dumps: the registry
# (ad_diff.kinds) imports this module for every comparison, log-only ones included.
if TYPE_CHECKING:
    from ad_diff.core.facts import Evidence, Facts
    from ad_diff.core.view import SectionView, ViewContext
    from ad_diff.kinds.graph.diff import GraphAnalysis

__all__ = ["GRAPH", "STANDS", "GraphKind"]



def _one_event(findings: list[Finding]) -> list[Finding]:
    """The findings that each say a run's dumps are another run's (:data:`rules.FOREIGN_DUMPS`) marked as one
    event of that run: one root cause, however many of them show it."""
    codes = {r.code for r in rules.FOREIGN_DUMPS}
    out = []
    for f in findings:
        run = dict(f.evidence).get("run")
        if f.code in codes and run:
            f = replace(f, evidence=tuple(sorted(
                {**dict(f.evidence), "event": f"dumps_of_another_run:{run}"}.items())))
        out.append(f)
    return out


LAYERS_KEY = "model_kwargs.num_hidden_layers"
"""Where an AD config sets how many decoder layers the model is built with."""
IDENTITY = (
    (LAYERS_KEY, "layers", "{} decoder layer(s)"),
    ("model_kwargs.hidden_size", "hidden_size", "an embedding of hidden size {}"),
    ("model_kwargs.vocab_size", "vocab_size", "an embedding of {} vocabulary entries"),
)
"""What a run's dumps show of its model, checked against its own config: the config key, what the dumps
show (:attr:`GraphAnalysis.layers`, :attr:`GraphAnalysis.sizes`) and how a finding says it."""


def _identity(section: GraphAnalysis, ctx: Context) -> list[Finding]:
    """ADG016 per run and model size whose dumps show another value than the run's config builds."""
    out = []
    explicit = (ctx.settings.baseline_config, ctx.settings.candidate_config)
    runs = zip((ctx.baseline, ctx.candidate), section.layers, section.sizes, explicit, strict=True)
    for art, layers, sizes, given in runs:
        shown = {"layers": layers, **sizes}
        for key, what, says in IDENTITY:
            found, declared = shown.get(what), ctx.config.setting(art.root, given, key)
            judged = found is not None and isinstance(declared, int) and not isinstance(declared, bool)
            if not judged or declared == found:
                continue
            out.append(rules.DUMP_MODEL_MISMATCH.make(
                run=art.run_id, found=says.format(found), declared=declared, key=key,
                evidence={"found": found, "declared": declared, "key": key, "run": art.run_id}))
    return out


class GraphKind:
    """See the module docstring."""

    key: SectionKey[GraphAnalysis] = SectionKey("graph", "Graph dumps")
    rules = rules.FOLDER_RULES + rules.RULES

    def analyze(self, ctx: Context) -> GraphAnalysis | Skipped:
        """Compare both runs' dump folders transform by transform."""
        base, cand = ctx.baseline, ctx.candidate
        if ctx.from_snapshot:
            ctx.notes.append("baseline is a snapshot: node-level graph and tensor comparisons not run")
            return Skipped(SkipReason.SNAPSHOT, "the baseline is a snapshot (counts and coverage only)")
        if base.graphs is None and cand.graphs is None:
            ctx.notes.append("graph analysis not run: neither run has graphs/ (log-only comparison)")
            return Skipped(SkipReason.NO_DATA, "neither run has graphs/")
        if base.graphs is None or cand.graphs is None:
            present = base if cand.graphs is None else cand
            return Skipped(SkipReason.ONE_SIDED, "graph dumps (graphs/)", run=present.run_id)
        if not ctx.settings.graphs:
            ctx.notes.append("graph analysis not run: disabled with --no-graphs")
            return Skipped(SkipReason.DISABLED, "disabled with --no-graphs")
        # One listing per run, vetted once (links, FIFOs): the analysis reads what it found, and classify
        # reports it (ADI002-005). Imported here: a log-only comparison never lists a graphs/ folder.
        from ad_diff.discover import dumps

        listings = (dumps.scan(base.graphs), dumps.scan(cand.graphs))
        nb, nc = listings[0].named, listings[1].named
        if nb == 0 and nc == 0:
            ctx.notes.append("graph analysis not run: both graphs/ folders hold no dump files")
            return Skipped(SkipReason.EMPTY, "both graphs/ folders hold no dump files")
        if nb == 0 or nc == 0:
            empty = base if nb == 0 else cand
            return Skipped(SkipReason.EMPTY_ONE, f"the {empty.run_id} run's graphs/ holds no dumps",
                           run=empty.run_id, count=max(nb, nc))
        # lazy: a comparison without dumps (log-only) never loads the parser and the analysis
        from ad_diff.kinds.graph.analysis import analyze_graphs
        from ad_diff.kinds.graph.facts import for_other_kinds

        try:
            analysis = analyze_graphs(base.graphs, cand.graphs, ctx.baseline_log, ctx.candidate_log,
                                      listings=listings)
        except AdDiffError as e:
            return Skipped(SkipReason.UNREADABLE, str(e))
        ctx.graph_facts = for_other_kinds(analysis)
        return analysis

    def classify(self, section: GraphAnalysis | Skipped, ctx: Context) -> list[Finding]:
        """Folder findings (ADI002-005), then the graph findings (ADG) or why the analysis did not run.

        The folder listings are measured here rather than in ``analyze`` because their findings stand even
        where the analysis did not run (an empty or unreadable folder): a name-and-stat scan, no content.
        """
        base, cand = ctx.baseline, ctx.candidate
        if isinstance(section, Skipped):
            if section.reason is SkipReason.SNAPSHOT:
                return _snapshot_coverage(ctx)
            if section.reason is SkipReason.ONE_SIDED:
                present, missing = (base, cand) if section.run == base.run_id else (cand, base)
                return [ONE_SIDED.make(what=section.detail, present=present.run_id, missing=missing.run_id,
                                       analysis="graph analysis")]
            if section.reason in (SkipReason.NO_DATA, SkipReason.DISABLED):
                return []
        # lazy: the listing and the graph findings only where a run has dumps
        from ad_diff.discover import dumps
        from ad_diff.kinds.graph.classify import classify, folder_findings

        out: list[Finding] = []
        listings = section.listings if not isinstance(section, Skipped) else None
        for k, art in enumerate((base, cand)):
            assert art.graphs is not None
            out += folder_findings(listings[k] if listings is not None else dumps.scan(art.graphs),
                                   art.run_id)
        if isinstance(section, Skipped):
            if section.reason is SkipReason.EMPTY_ONE:
                other = cand if section.run == base.run_id else base
                out.append(rules.DUMPS_EMPTY.make(run=section.run, other=other.run_id,
                                                  count=section.count or 0))
            elif section.reason is SkipReason.UNREADABLE:
                out.append(ANALYSIS_FAILED.make(analysis="graph analysis", error=section.detail,
                                                stands=STANDS))
            return out
        out += classify(section, ctx.baseline_log, ctx.candidate_log, ctx.rows)
        return _one_event(out + _identity(section, ctx))

    def explain(self, section: GraphAnalysis, findings: list[Finding], ctx: Context) -> tuple[GraphAnalysis,
                                                                                               list[Finding]]:
        """Attach what the dumps measured to the findings it explains (root-cause hints on match losses, new
        rewritten regions on the log findings of their transform); the section keeps its own findings for
        the JSON report."""
        from ad_diff.kinds.graph.evidence import attach  # lazy: only where the dumps were analysed

        own = {r.code for r in rules.RULES}
        mine = tuple(sorted((f for f in findings if f.code in own), key=Finding.sort_key))
        return replace(section, classified=mine), list(attach(tuple(findings), section))

    def facts(self, section: GraphAnalysis, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
        """This kind's facts for the accounting pass:
        every dump pair, in its canonical form (:mod:`.facts`)."""
        from ad_diff.kinds.graph.facts import facts  # lazy: read when the accounting runs

        return facts(section, ctx, ev, ignored)

    def view(self, section: GraphAnalysis, ctx: ViewContext) -> SectionView:
        """The ``Graph dumps`` section (:mod:`.section`)."""
        # lazy: only where the section is drawn
        from ad_diff.kinds.graph.page import page
        from ad_diff.kinds.graph.section import view

        return view(section, ctx, page(section, ctx))


def _snapshot_coverage(ctx: Context) -> list[Finding]:
    """Metadata lost against the coverage a snapshot recorded (transform-level counts only)."""
    # lazy: the coverage check parses the candidate's dumps, only for a snapshot baseline
    from ad_diff.discover.dumps import split_dump_key
    from ad_diff.kinds.graph import snapshot

    out = []
    for key, before, after in snapshot.check_coverage(ctx.settings.baseline, ctx.candidate.graphs):
        stage, transform, _ = split_dump_key(key)
        out.append(rules.SNAPSHOT_COVERAGE.make(transform=transform, stage=stage, before=before,
                                                after=after, evidence={"dump": key}))
    return out


GRAPH = GraphKind()
"""The graph kind's one instance (registered in :data:`ad_diff.kinds.KINDS`)."""
