"""A toy kind for tests: each run's ``toy.txt`` (one number), compared. The smallest complete kind.

It is one folder like every kind of ``ad_diff/kinds/`` (``model``, ``parse``, ``rules``, ``section`` and this
``__init__`` exposing the :class:`~ad_diff.kinds.base.Kind` object) and imports nothing of another kind:
``tests/unit/kinds/test_toy_kind.py`` registers it with one line and runs it end to end.
"""

from __future__ import annotations

from ad_diff.core.facts import Evidence, Facts
from ad_diff.core.model import Finding
from ad_diff.core.view import SectionView, ViewContext
from ad_diff.kinds.base import Context, SectionKey, Skipped, SkipReason
from tests.unit.kinds.toy import rules
from tests.unit.kinds.toy.model import ToyComparison
from tests.unit.kinds.toy.parse import parse
from tests.unit.kinds.toy.section import view as section_view


class ToyKind:
    """See the module docstring."""

    key: SectionKey[ToyComparison] = SectionKey("toy", "Toy numbers")
    rules = rules.RULES

    def analyze(self, ctx: Context) -> ToyComparison | Skipped:
        """Read both runs' numbers (measurement only), or say why not."""
        base, cand = parse(ctx.baseline.root), parse(ctx.candidate.root)
        if base is None or cand is None:
            return Skipped(SkipReason.NO_DATA, "a run has no toy.txt")
        return ToyComparison(base, cand, transforms=len(ctx.rows))

    def classify(self, section: ToyComparison | Skipped, ctx: Context) -> list[Finding]:
        """The toy rule's findings."""
        return [] if isinstance(section, Skipped) else rules.classify(section)

    def explain(self, section: ToyComparison, findings: list[Finding], ctx: Context
                ) -> tuple[ToyComparison, list[Finding]]:
        """Nothing to add."""
        return section, findings

    def facts(self, section: ToyComparison, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
        """No facts of its own for the accounting: its one number is judged by its own rule."""
        return Facts()

    def view(self, section: ToyComparison, ctx: ViewContext) -> SectionView:
        """What every report shows of the toy section (:mod:`.section`)."""
        return section_view(section, ctx)


TOY = ToyKind()
"""The toy kind's one instance."""
