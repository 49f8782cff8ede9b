"""The tensors kind: what each run recorded in ``tensors/`` (outputs, per-node captures, references).

Both runs' tensors are paired by name (per-node captures through the graph alignment of the final dumps),
streamed in chunks into statistics, judged against tolerances, and the first drifting node is named in
graph order when the dumps provide one.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ad_diff.core.model import BASELINE, CANDIDATE, State
from ad_diff.core.rules import ANALYSIS_FAILED, ONE_SIDED, STANDS
from ad_diff.errors import AdDiffError, UsageError
from ad_diff.kinds.base import Context, SectionKey, Skipped, SkipReason
from ad_diff.kinds.tensors import rules

if TYPE_CHECKING:  # the model is imported once tensors are compared (see rules)
    from ad_diff.core.facts import Evidence, Facts
    from ad_diff.core.model import Finding
    from ad_diff.core.moe import MoeRouting
    from ad_diff.core.view import SectionView, ViewContext
    from ad_diff.kinds.tensors.model import TensorAnalysis


class TensorsKind:
    """See the module docstring."""

    key: SectionKey[TensorAnalysis] = SectionKey("tensors", "Recorded tensors")
    rules = rules.RULES

    def analyze(self, ctx: Context) -> TensorAnalysis | Skipped:
        """Compare recorded tensors; graph order, introducing transforms and renames come from the dumps."""
        base, cand = ctx.baseline, ctx.candidate
        if ctx.from_snapshot:
            return Skipped(SkipReason.SNAPSHOT, "the baseline is a snapshot (counts and coverage only)")
        if base.tensors is None and cand.tensors is None:
            return Skipped(SkipReason.NO_DATA, "neither run has tensors/")
        if base.tensors is None or cand.tensors is None:
            present = base if cand.tensors is None else cand
            return Skipped(SkipReason.ONE_SIDED, "recorded tensors (tensors/)", run=present.run_id)
        if not ctx.settings.tensors:
            ctx.notes.append("tensor comparison not run: disabled with --no-tensors")
            return Skipped(SkipReason.DISABLED, "disabled with --no-tensors")
        # lazy: the measurement brings numpy, which a comparison without tensors never needs
        from ad_diff.kinds.tensors.analysis import analyze_tensors

        node_order: list[str] | None = None
        order_source: str | None = None
        node_transform: dict[str, str] | None = None
        renamed: dict[str, str] | None = None
        moe: tuple[MoeRouting, ...] = ()
        gf = ctx.graph_facts
        try:
            if gf is not None:
                if gf.final_order is not None:  # the graph kind parsed and aligned the last dumps already
                    # Captures are keyed by baseline names (renamed ones too): the order is the baseline's.
                    node_order = list(gf.final_order)
                    order_source = gf.final_source
                    renamed = dict(gf.renamed)
                    moe = tuple(gf.moe)
                node_transform = dict(gf.node_transform)
            return analyze_tensors(
                base.tensors,
                cand.tensors,
                ctx.settings,
                node_order=node_order,
                node_transform=node_transform,
                renamed=renamed,
                order_source=order_source,
                gathered=_gathered(ctx),
                moe=moe,
            )
        except UsageError:  # an option that cannot be honoured (--tensor-device cuda without CUDA): exit 2
            raise
        except AdDiffError as e:  # part of a run unreadable: say so, keep what still stands
            return Skipped(SkipReason.UNREADABLE, str(e))

    def classify(self, section: TensorAnalysis | Skipped, ctx: Context) -> list[Finding]:
        """The tensor findings (ADT), or why the comparison did not run."""
        base, cand = ctx.baseline, ctx.candidate
        if not isinstance(section, Skipped):
            from ad_diff.kinds.tensors.classify import classify  # lazy: the tensor model once tensors ran

            return classify(section)
        if section.reason is SkipReason.ONE_SIDED:
            present, missing = (base, cand) if section.run == base.run_id else (cand, base)
            return [
                ONE_SIDED.make(
                    what=section.detail,
                    present=present.run_id,
                    missing=missing.run_id,
                    analysis="numeric comparison",
                )
            ]
        if section.reason is SkipReason.UNREADABLE:
            return [ANALYSIS_FAILED.make(analysis="tensor comparison", error=section.detail, stands=STANDS)]
        return []

    def explain(
        self, section: TensorAnalysis, findings: list[Finding], ctx: Context
    ) -> tuple[TensorAnalysis, list[Finding]]:
        """Every drifting tensor gets its ranked likely causes (:mod:`ad_diff.kinds.tensors.causes`)."""
        from ad_diff.kinds.tensors import causes as C  # lazy: the cause ranking only where tensors drift

        drift = [f for f in findings if f.code in C.DRIFT_CODES]
        if isinstance(section, Skipped) or not drift:
            return section, findings
        node = next((f for f in findings if f.code == rules.FIRST_NODE.code), None)
        graph, config = ctx.graph_facts, ctx.config_facts
        evidence = (("graph dumps", graph), ("config", config))
        unchecked = [what for what, there in evidence if there is None]
        structural = C.structural_causes(ctx.rows, graph, findings)
        ranked = C.rank(node, structural, C.config_causes(config), unchecked, C.routing_causes(findings))
        tensors = sorted({f.tensor for f in drift if f.tensor})
        marked = C.mark_causes(findings, ranked, tensors, unchecked)
        return dataclasses.replace(section, causes=ranked, unchecked=tuple(unchecked)), marked

    def facts(self, section: TensorAnalysis, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
        """This kind's facts for the accounting pass:
        every recorded tensor and reference entry (:mod:`.facts`)."""
        from ad_diff.kinds.tensors.facts import facts  # lazy: read when the accounting runs

        return facts(section, ctx, ev, ignored)

    def view(self, section: TensorAnalysis, ctx: ViewContext) -> SectionView:
        """The ``Recorded tensors`` section (saying where ``--plots`` and ``--html`` put the plots)."""
        # lazy: only where the section is drawn
        from ad_diff.kinds.tensors.page import page
        from ad_diff.kinds.tensors.section import view

        return view(section, ctx, page(section, ctx))


GATHER = "gather_logits_before_lm_head"
"""AD's transform that computes logits at the last position of each sequence only."""


def _gathered(ctx: Context) -> dict[str, str]:
    """Runs whose logits keep only the last position, with the evidence: the transform applied in the log, or
    enabled in the run's AD config (asked through the context: the config kind reads configs)."""
    out: dict[str, str] = {}
    for row in ctx.rows:
        if row.transform != GATHER:
            continue
        for run, side in ((BASELINE, row.baseline), (CANDIDATE, row.candidate)):
            if side.state is State.APPLIED and (side.matches or 0) > 0:
                out[run] = f"{GATHER} applied in its log (matches={side.matches})"
    explicit = {BASELINE: ctx.settings.baseline_config, CANDIDATE: ctx.settings.candidate_config}
    for run, arts in ((BASELINE, ctx.baseline), (CANDIDATE, ctx.candidate)):
        if run not in out and arts.root.is_dir() and ctx.config.enables(arts.root, explicit[run], GATHER):
            out[run] = f"{GATHER} enabled in its AD config"
    return out


TENSORS = TensorsKind()
"""The tensors kind's one instance (registered in :data:`ad_diff.kinds.KINDS`)."""
