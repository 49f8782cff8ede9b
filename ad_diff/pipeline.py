"""The library entry point: ``run(settings) -> DiffResult``.

Read top to bottom, this is the whole flow: discover -> parse -> align -> measure -> classify. Rendering
and gating happen after, on the returned value (``ad_diff.report``, ``ad_diff.gate``).
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from ad_diff.core.model import BASELINE, CANDIDATE, Finding, TransformComparison
from ad_diff.core.result import DiffResult
from ad_diff.discover import RunArtifacts, discover
from ad_diff.errors import AdDiffError
from ad_diff.explain import expected as expectations
from ad_diff.kinds.graph.folder import ANALYSIS_FAILED, DUMPS_EMPTY, ONE_SIDED, check_dump_folder, dump_count
from ad_diff.kinds.log import parse as log_parser
from ad_diff.kinds.log import snapshot
from ad_diff.kinds.log.align import pair_transforms
from ad_diff.kinds.log.model import RunLog
from ad_diff.kinds.log.rules import classify_log
from ad_diff.progress import ProgressFn, no_progress
from ad_diff.settings import Settings

if TYPE_CHECKING:
    from ad_diff.kinds.graph.model import GraphDump


def _one_sided(what: str, analysis: str, b: object, c: object) -> list[Finding]:
    if (b is None) == (c is None):
        return []
    present, missing = ("baseline", "candidate") if c is None else ("candidate", "baseline")
    return [ONE_SIDED.make(what=what, present=present, missing=missing, analysis=analysis)]


def _config(settings: Settings, base: RunArtifacts, cand: RunArtifacts, blog: RunLog, clog: RunLog,
            rows: tuple[TransformComparison, ...], findings: list[Finding], sections: dict[str, object]) -> list[Finding]:
    """Diff the runs' configs (when any run has one) and mark findings explained or unexplained by them."""
    from ad_diff.kinds.config import parse as run_config

    # a snapshot baseline (a file) carries no config
    bcfg = run_config.parse(base.root, settings.baseline_config) if base.root.is_dir() else None
    ccfg = run_config.parse(cand.root, settings.candidate_config)
    if bcfg is None and ccfg is None:
        return findings
    # imported only when a run has a config: the config diff pulls in deepdiff (and with it pandas)
    from ad_diff.kinds.config.compare import analyze_config
    from ad_diff.kinds.config.explain import explain_findings, with_explanations

    analysis = analyze_config(bcfg, ccfg, blog, clog)
    out = list(explain_findings(findings, rows, analysis, settings.config_explained_gates))
    sections["config"] = with_explanations(analysis, out)
    return out


def _tensors(settings: Settings, base: RunArtifacts, cand: RunArtifacts, sections: dict[str, object]) -> list[Finding]:
    """Compare recorded tensors; graph order, introducing transforms and renamed nodes come from the dumps."""
    from ad_diff.kinds.tensors.analysis import analyze_tensors

    node_order: list[str] | None = None
    node_transform: dict[str, str] | None = None
    renamed: dict[str, str] | None = None
    ga = sections.get("graph")
    if ga is not None:
        final = _final_dumps(base, cand)
        if final is not None:
            node_order = [n.name for sec in final[1].sections for n in sec.nodes]
            renamed = _renames(*final)
        node_transform = {}
        for t in ga.transforms:  # type: ignore[attr-defined]
            for u in t.unmatched:
                if u.run == "candidate":
                    node_transform.setdefault(u.name, t.transform)
    ta = analyze_tensors(base.tensors, cand.tensors, settings, node_order=node_order,  # type: ignore[arg-type]
                         node_transform=node_transform, renamed=renamed)
    sections["tensors"] = ta
    return list(ta.findings)


def _final_dumps(base: RunArtifacts, cand: RunArtifacts) -> tuple[GraphDump, GraphDump] | None:
    """The last dump of each run, parsed (None when either run has none)."""
    from ad_diff.kinds.graph import parse as dump_parser
    from ad_diff.kinds.graph.pair import list_dumps

    assert base.graphs is not None and cand.graphs is not None
    refs_b, refs_c = list_dumps(base.graphs)[0], list_dumps(cand.graphs)[0]
    if not refs_b or not refs_c:
        return None
    return dump_parser.parse(refs_b[-1].path), dump_parser.parse(refs_c[-1].path)


def _renames(db: GraphDump, dc: GraphDump) -> dict[str, str]:
    """Candidate -> baseline node names that alignment paired in two dumps and that differ."""
    from ad_diff.kinds.graph.align import align_sections

    sections_c = {sec.name: sec for sec in dc.sections}
    out: dict[str, str] = {}
    for sb in db.sections:
        sc = sections_c.get(sb.name)
        if sc is None:
            continue
        al = align_sections(sb, sc, db.fmt, dc.fmt)
        for i, j in enumerate(al.mb):
            if j >= 0 and al.b.names[i] != al.c.names[j]:
                out[al.c.names[j]] = al.b.names[i]
    return out


def _snapshot_coverage(settings: Settings, cand: RunArtifacts) -> list[Finding]:
    """Metadata lost against the coverage a snapshot recorded (transform-level counts only)."""
    from ad_diff.kinds.graph.rules import SNAPSHOT_COVERAGE

    out = []
    for key, before, after in snapshot.check_coverage(settings.baseline, cand.graphs):
        stage, _, transform = key.partition("/")
        out.append(SNAPSHOT_COVERAGE.make(transform=transform.split("#")[0], stage=stage, before=before,
                                          after=after, evidence={"dump": key}))
    return out


_STANDS = "the per-transform match counts from the logs still stand"


def _graphs(base: RunArtifacts, cand: RunArtifacts, blog: RunLog, clog: RunLog, findings: list[Finding],
            sections: dict[str, object], notes: list[str]) -> list[Finding]:
    """Check both dump folders, then compare them; returns the new findings (hints are attached in place).

    An unreadable part of a dump folder becomes a gating finding that says what still stands, not an exit 2
    that would also throw away the log comparison.
    """
    assert base.graphs is not None and cand.graphs is not None
    new: list[Finding] = []
    counts: dict[str, int] = {}
    for art in (base, cand):
        assert art.graphs is not None
        new += check_dump_folder(art.graphs, art.run_id)
        counts[art.run_id] = dump_count(art.graphs)
    nb, nc = counts[base.run_id], counts[cand.run_id]
    if nb == 0 and nc == 0:
        notes.append("graph analysis not run: both graphs/ folders hold no dump files")
        return new
    if nb == 0 or nc == 0:
        empty, other = (base, cand) if nb == 0 else (cand, base)
        return new + [DUMPS_EMPTY.make(run=empty.run_id, other=other.run_id, count=max(nb, nc))]
    from ad_diff.kinds.graph.analysis import analyze_graphs, attach_hints

    try:
        ga = analyze_graphs(base.graphs, cand.graphs, blog, clog)
    except AdDiffError as e:
        return new + [ANALYSIS_FAILED.make(analysis="graph analysis", error=str(e), stands=_STANDS)]
    findings[:] = attach_hints(tuple(findings), ga)
    sections["graph"] = ga
    return new + list(ga.findings)


def _attribute(log: RunLog, art: RunArtifacts, notes: list[str]) -> RunLog:
    """Name result lines that carry no transform (L2 logger) from the order of the run's dump files."""
    if not log.anonymous:
        return log
    names: list[tuple[str, str]] = []
    if art.graphs is not None:
        from ad_diff.kinds.graph.pair import list_dumps

        try:
            names = [(d.stage, d.transform) for d in list_dumps(art.graphs)[0]]
        except AdDiffError as e:  # unreadable dumps: the results stay positional (#n), and we say why
            notes.append(f"{art.run_id}: result lines name no transform and the dumps could not name them ({e})")
            return log
    log, note = log_parser.attribute(log, names)
    notes.append(f"{art.run_id}: {note}")
    return log


def run(settings: Settings, progress: ProgressFn = no_progress) -> DiffResult:
    """Compare the baseline and candidate runs described by ``settings``.

    ``settings.baseline`` may be a snapshot file (``ad-diff snapshot``) instead of a run folder.
    ``progress(description, completed, total)`` is called as long work advances (see ad_diff.progress).
    Raises :class:`ad_diff.errors.AdDiffError` for unusable input; everything else (including partial
    or missing data) is reported as findings and notes in the result.
    """
    # discover + parse logs (a snapshot baseline stands in for a whole run folder)
    progress("reading logs", 0, 2)
    cand: RunArtifacts = discover(settings.candidate, CANDIDATE, settings.candidate_log)
    from_snapshot = snapshot.is_snapshot(settings.baseline)
    if from_snapshot:
        base, blog = snapshot.load_as_run(settings.baseline)
    else:
        base = discover(settings.baseline, BASELINE, settings.baseline_log)
        assert base.log is not None  # discover raises otherwise
        blog = log_parser.parse(base.log, rank=settings.rank)
    progress("reading logs", 1, 2)
    assert cand.log is not None  # discover raises otherwise
    clog = log_parser.parse(cand.log, rank=settings.rank)
    progress("reading logs", 2, 2)
    notes: list[str] = []
    for run_id, log in ((base.run_id, blog), (cand.run_id, clog)):
        notes += [f"{run_id} log {log.path}: {i.text} (shown as U+FFFD)" for i in log.issues if i.kind == "encoding"]
    blog = _attribute(blog, base, notes)
    clog = _attribute(clog, cand, notes)

    # align + classify the per-transform comparison
    rows = pair_transforms(blog, clog, settings.ignore_transforms)
    findings: list[Finding] = classify_log(rows, blog, clog, settings.collapse_fraction)
    sections: dict[str, object] = {}

    # graph dumps, tensors, configs: each analysis runs only when both runs have the data
    if from_snapshot:  # a snapshot holds counts (and coverage): no node-level graph or tensor comparison
        notes.append("baseline is a snapshot: node-level graph and tensor comparisons not run")
        findings += _snapshot_coverage(settings, cand)
    else:
        findings += _one_sided("graph dumps (graphs/)", "graph analysis", base.graphs, cand.graphs)
        findings += _one_sided("recorded tensors (tensors/)", "numeric comparison", base.tensors, cand.tensors)
    if base.graphs is None and cand.graphs is None and not from_snapshot:
        notes.append("graph analysis not run: neither run has graphs/ (log-only comparison)")
    elif base.graphs is not None and cand.graphs is not None and not settings.graphs:
        notes.append("graph analysis not run: disabled with --no-graphs")
    elif base.graphs is not None and cand.graphs is not None:
        findings += _graphs(base, cand, blog, clog, findings, sections, notes)

    # recorded tensors: measured in chunks, judged against tolerances; per-node captures in graph order
    if base.tensors is not None and cand.tensors is not None:
        if not settings.tensors:
            notes.append("tensor comparison not run: disabled with --no-tensors")
        else:
            try:
                findings += _tensors(settings, base, cand, sections)
            except AdDiffError as e:  # part of a run unreadable: say so, keep what still stands
                sections.pop("tensors", None)
                findings.append(ANALYSIS_FAILED.make(analysis="tensor comparison", error=str(e), stands=_STANDS))

    # the runs' own AD configs: diff them and explain state/count changes by config changes
    findings = _config(settings, base, cand, blog, clog, rows, findings, sections)

    # filter + order deterministically
    kept = [
        f for f in findings
        if not any(fnmatchcase(f.code, pat) for pat in settings.ignore_codes)
        and not (f.transform and any(fnmatchcase(f.transform, p) for p in settings.ignore_transforms))
    ]
    # expected changes: matching findings become acknowledged (shown, not gating); unused entries are stale
    if settings.expected_changes is not None:
        kept = expectations.apply(expectations.load(settings.expected_changes), kept, rows, settings.model)
    kept.sort(key=Finding.sort_key)
    return DiffResult(
        baseline=base,
        candidate=cand,
        baseline_log=blog,
        candidate_log=clog,
        transforms=rows,
        findings=tuple(kept),
        sections=sections,
        notes=tuple(notes),
    )
