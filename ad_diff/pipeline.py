"""The library entry point: ``run(settings) -> DiffResult``.

Read top to bottom, this is the whole flow: discover the two runs, then for every kind (log, graph dumps,
tensors, AD config; ``ad_diff.kinds.KINDS``) analyze (parse -> align -> measure) and classify, then the
explain passes over all findings. Rendering and gating happen after, on the returned value
(``ad_diff.report``, ``ad_diff.gate``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ad_diff import __version__
from ad_diff.core.gcpause import paused_gc
from ad_diff.core.model import BASELINE, CANDIDATE, Finding
from ad_diff.core.rules import SHARED_WITH_BASELINE
from ad_diff.discover import RunArtifacts, check_runs, discover, identity, is_snapshot
from ad_diff.explain import run as explain
from ad_diff.kinds import CONFIG, KINDS, LOG
from ad_diff.kinds.base import Context, Kind, Skipped
from ad_diff.kinds.log import parse as log_parser
from ad_diff.progress import ProgressFn, no_progress
from ad_diff.result import DiffResult
from ad_diff.settings import Settings


def _runs(settings: Settings) -> tuple[RunArtifacts, RunArtifacts, bool]:
    """Both runs' artifacts; a snapshot baseline (``ad-diff snapshot``) stands in for a whole run folder."""
    check_runs(settings.baseline, settings.candidate, settings.log_options)  # names both when both are bad
    identity.check_distinct(settings.baseline, settings.candidate, (BASELINE, CANDIDATE))
    cand = discover(settings.candidate, CANDIDATE, settings.candidate_log, settings.log_options[1])
    if is_snapshot(settings.baseline):
        # lazy: the snapshot reader only for a snapshot baseline (start-up, docs/benchmark.md)
        from ad_diff.discover import snapshot

        base, _ = snapshot.load_as_run(settings.baseline)
        return base, cand, True
    return discover(settings.baseline, BASELINE, settings.baseline_log, settings.log_options[0]), cand, False


@paused_gc()  # millions of small cycle-free objects: the collector's scans cost more than they free
def run(settings: Settings, progress: ProgressFn = no_progress,
        kinds: Sequence[Kind[Any]] = KINDS) -> DiffResult:
    """Compare the baseline and candidate runs described by ``settings``.

    ``settings.baseline`` may be a snapshot file (``ad-diff snapshot``) instead of a run folder.
    ``progress(description, completed, total)`` is called as long work advances (see ad_diff.progress).
    ``kinds``: the kinds compared, in order (the registry :data:`ad_diff.kinds.KINDS`; a test may add one).
    Raises :class:`ad_diff.errors.AdDiffError` for unusable input (a log or config that cannot be read);
    everything else, unreadable dumps and tensors included, is reported as findings and notes in the result.
    """
    base, cand, from_snapshot = _runs(settings)
    ctx = Context(settings, base, cand, from_snapshot=from_snapshot, progress=progress, config=CONFIG)
    findings: list[Finding] = _shared_files(settings)
    skipped = ctx.skipped
    for kind in kinds:
        section = kind.analyze(ctx)  # parse -> align -> measure, or Skipped(why not)
        if isinstance(section, Skipped):
            skipped[kind.key.name] = section
        else:
            ctx.sections[kind.key.name] = section
            if kind is LOG:
                ctx.baseline_log, ctx.candidate_log, ctx.rows = (
                    section.baseline,
                    section.candidate,
                    section.rows,
                )
        findings += kind.classify(section, ctx)
    explained = explain(ctx, findings, tuple(kinds))
    return DiffResult(
        baseline=base,
        candidate=cand,
        baseline_log=ctx.baseline_log,
        candidate_log=ctx.candidate_log,
        transforms=ctx.rows,
        findings=explained.findings,
        sections=dict(ctx.sections),
        skipped=dict(skipped),
        notes=tuple(ctx.notes),
        groups=explained.groups,
        ignored_transforms=explained.ignored_transforms,
        ignored_findings=explained.ignored_findings,
        accounting=explained.accounting,
        section_kinds=tuple(k for k in kinds if k is not LOG),
    )


def take_snapshot(run: Path, rank: int = 0, log: Path | None = None) -> dict[str, Any]:
    """Read run folder ``run`` and return its snapshot as plain data (``ad-diff snapshot``; written out by
    :func:`ad_diff.discover.snapshot.dump`): the log's per-transform states and counts, and the dumps'
    metadata coverage."""
    from ad_diff.discover import snapshot  # lazy: only when a snapshot is taken
    from ad_diff.kinds.graph.snapshot import coverage_to_record  # parses dumps: only when a snapshot is taken
    art = discover(run, BASELINE, log, "--log")  # `ad-diff snapshot --log FILE`
    assert art.log is not None  # discover raises otherwise
    parsed = log_parser.parse(art.logs, rank=rank)
    transforms = []
    for t in parsed.transforms:
        row: dict[str, Any] = {"stage": t.stage, "transform": t.transform, "state": t.state.value,
                               "matches": t.matches}
        if t.occurrence:
            row["occurrence"] = t.occurrence
        transforms.append(row)
    data: dict[str, Any] = {
        snapshot.MARKER: snapshot.SNAPSHOT_VERSION,
        "tool": f"ad-diff {__version__}",
        "source": str(run),
        "log": art.log.name,
        "rank": parsed.rank,
        "log_formats": list(parsed.formats),
        "log_prefixes": list(parsed.prefixes),
        "end": parsed.end.value,
        "end_detail": parsed.end_detail,
        "transforms": transforms,
    }
    coverage = coverage_to_record(art.graphs, run)
    if coverage:
        data["metadata_coverage"] = coverage
    return data


def _shared_files(settings: Settings) -> list[Finding]:
    """ADI007 when candidate files are the baseline's own (:func:`ad_diff.discover.identity.shared_files`)."""
    given_c = [*settings.candidate_log, *([settings.candidate_config] if settings.candidate_config else [])]
    given_b = [*settings.baseline_log, *([settings.baseline_config] if settings.baseline_config else [])]
    shared = identity.shared_files(settings.baseline, settings.candidate, given_b, given_c)
    if not shared:
        return []
    examples = "; ".join(s.describe() for s in shared[:3])
    if len(shared) > 3:
        examples += f"; and {len(shared) - 3} more"
    return [SHARED_WITH_BASELINE.make(
        count=len(shared), examples=examples,
        evidence={"shared": [[s.candidate, s.baseline, s.how] for s in shared[:50]]})]


__all__ = ["run", "take_snapshot"]
