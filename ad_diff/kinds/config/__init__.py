"""The config kind: the AutoDeploy configuration each run used (``config/`` or top-level YAML).

Layered files are merged in AD's order, the two effective configs are diffed (deepdiff, imported only when a
run has a config), each is checked against its own log (``analyze``: measurements only), the ADC rules turn
that into findings (``classify``), and in the explain stage the log's findings are marked *explained by
config* or *unexplained*. Unlike graphs and tensors, an unreadable config is an input error (exit 2): the
verdict's explanations would otherwise rest on a guess.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core.model import STAGES
from ad_diff.errors import AdDiffError
from ad_diff.kinds.base import Context, SectionKey, Skipped, SkipReason
from ad_diff.kinds.config import rules
from ad_diff.kinds.config.find import has_config

if TYPE_CHECKING:
    from ad_diff.core.facts import Evidence, Facts
    from ad_diff.core.model import Finding
    from ad_diff.core.view import SectionView, ViewContext
    from ad_diff.kinds.config.model import ConfigAnalysis


class ConfigKind:
    """See the module docstring."""

    key: SectionKey[ConfigAnalysis] = SectionKey("config", "Configuration")
    rules = rules.RULES

    def analyze(self, ctx: Context) -> ConfigAnalysis | Skipped:
        """Load both runs' effective configs, diff them and check each against its log."""
        # a snapshot baseline (a file) carries no config
        root_b, explicit_b = ctx.baseline.root, ctx.settings.baseline_config
        has_b = root_b.is_dir() and has_config(root_b, explicit_b)
        has_c = has_config(ctx.candidate.root, ctx.settings.candidate_config)
        if not (has_b or has_c):  # most runs: the loader, the model and YAML are never imported
            return Skipped(SkipReason.NO_DATA, "neither run holds an AD config")
        from ad_diff.kinds.config import parse  # lazy: the loader, the model and YAML only for a config

        bcfg = parse.parse(root_b, explicit_b) if has_b else None
        ccfg = parse.parse(ctx.candidate.root, ctx.settings.candidate_config) if has_c else None
        if bcfg is None and ccfg is None:
            return Skipped(SkipReason.NO_DATA, "neither run holds an AD config")
        # imported only when a run has a config: the config diff pulls in deepdiff (and with it pandas)
        from ad_diff.kinds.config.compare import analyze_config
        from ad_diff.kinds.config.facts import for_other_kinds

        analysis = analyze_config(bcfg, ccfg, ctx.baseline_log, ctx.candidate_log)
        ctx.config_facts = for_other_kinds(analysis)
        return analysis

    def classify(self, section: ConfigAnalysis | Skipped, ctx: Context) -> list[Finding]:
        """The ADC findings: config changes, a config on one side only, config-vs-log disagreements."""
        if isinstance(section, Skipped):
            return []
        from ad_diff.kinds.config.classify import classify  # lazy: the config model only for a config

        return classify(section)

    def explain(self, section: ConfigAnalysis, findings: list[Finding], ctx: Context) -> tuple[ConfigAnalysis,
                                                                                                list[Finding]]:
        """Mark findings explained or unexplained by a config change; the section keeps the config ones."""
        # lazy: the config model only where a run has a config
        from ad_diff.kinds.config.explain import explain_findings, with_explanations

        out = list(explain_findings(findings, ctx.rows, section, ctx.settings.config_explained_gates))
        return with_explanations(section, out), out

    def enables(self, root: Path, explicit: Path | None, transform: str) -> bool:
        """Whether the run's config enables ``transform`` (:class:`~ad_diff.kinds.base.ConfigLookup`: what
        the tensors kind asks, before this kind ran); ``False`` for a config this kind will report."""
        from ad_diff.kinds.config import parse  # lazy: the loader, the model and YAML only for a config

        try:
            if not has_config(root, explicit):
                return False
            cfg = parse.parse(root, explicit)
        except (AdDiffError, OSError, ValueError):
            return False  # this kind reports unreadable configs
        return cfg is not None and bool(cfg.enabled(transform))

    def setting(self, root: Path, explicit: Path | None, key: str) -> Any:
        """The value at ``key`` of the run's config (:class:`~ad_diff.kinds.base.ConfigLookup`)."""
        from ad_diff.kinds.config import parse  # lazy: the loader, the model and YAML only for a config

        try:
            if not has_config(root, explicit):
                return None
            cfg = parse.parse(root, explicit)
        except (AdDiffError, OSError, ValueError):
            return None  # this kind reports unreadable configs
        value: Any = cfg.data if cfg is not None else None
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def world_size(self, root: Path, explicit: Path | None) -> int | None:
        """The ``world_size`` the run's config declares (:class:`~ad_diff.kinds.base.ConfigLookup`)."""
        value = self.setting(root, explicit, "world_size")
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    def pipeline(self, root: Path, explicit: Path | None) -> tuple[tuple[str, str], ...]:
        """The run's configured transforms in AD's run order (:class:`~ad_diff.kinds.base.ConfigLookup`)."""
        from ad_diff.kinds.config import parse  # lazy: the loader, the model and YAML only for a config

        try:
            if not has_config(root, explicit):
                return ()
            cfg = parse.parse(root, explicit)
        except (AdDiffError, OSError, ValueError):
            return ()
        if cfg is None or not cfg.source.complete:
            return ()
        steps = [(cfg.stage(t), t) for t in cfg.transforms]
        if any(s not in STAGES for s, _ in steps):
            return ()  # a stage AD's order does not know: no order to trust
        return tuple(sorted(((str(s), t) for s, t in steps), key=lambda st: STAGES.index(st[0])))

    def facts(self, section: ConfigAnalysis, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
        """This kind's facts for the accounting pass:
        each run's effective config keys (:mod:`.facts`)."""
        from ad_diff.kinds.config.facts import facts  # lazy: read when the accounting runs

        return facts(section, ctx, ev, ignored)

    def view(self, section: ConfigAnalysis, ctx: ViewContext) -> SectionView:
        """The ``Configuration`` section (:mod:`.section`)."""
        # lazy: only where the section is drawn
        from ad_diff.kinds.config.page import page
        from ad_diff.kinds.config.section import view

        return view(section, ctx, page(section, ctx))


CONFIG = ConfigKind()
"""The config kind's one instance (registered in :data:`ad_diff.kinds.KINDS`)."""
