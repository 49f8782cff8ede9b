"""Sentences about the two logs for the report's notes: how they were captured, restores, errors printed after
the pipeline, which ranks were compared. Notes, not findings: none of this is a difference to gate on."""

from __future__ import annotations

from ad_diff.core.model import BASELINE, CANDIDATE, RunId, State
from ad_diff.discover.capture import LAYERS
from ad_diff.kinds.log.model import AfterEnd, IssueKind, LogComparison, RunLog

_LABELS = {x.name: x.label for x in LAYERS} | {"github-group": "GitHub Actions ##[group] markers"}


def _after_end(log: RunLog) -> tuple[str, AfterEnd] | None:
    """The first error printed after a rank's pipeline finished, with the ranks that show it."""
    hits = [(rl.rank, rl.after_end) for rl in log.rank_logs() if rl.after_end is not None]
    if not hits:
        return None
    ae = hits[0][1]
    assert ae is not None
    ranks = [r for r, _ in hits if r is not None]
    who = ""
    if len(log.rank_logs()) > 1:
        who = f" (rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))})"
    return who, ae


def _after_end_text(ae: AfterEnd) -> str:
    where = f"{ae.path.name}:{ae.line}" if ae.path else f"line {ae.line}"
    how = "Python reported it as `Exception ignored`, as at interpreter shutdown" if ae.ignored else (
        "it came after the pipeline's final transform")
    return f"{where}: {ae.text} ({how}); not a crash"


def log_notes(section: LogComparison, run_ids: tuple[RunId, RunId] = (BASELINE, CANDIDATE)) -> list[str]:
    """Every note about the two logs, baseline first."""
    out: list[str] = []
    logs = {BASELINE: section.baseline, CANDIDATE: section.candidate}
    for run in run_ids:
        log = logs[run]
        out += [f"{run} log {log.path}: {i.text} (shown as U+FFFD)" for i in log.issues
                if i.kind is IssueKind.ENCODING]
        if log.capture:
            what = "; ".join(_LABELS.get(c, c) for c in log.capture)
            out.append(f"{run} log {log.path.name}: captured with line prefixes, stripped before reading: "
                       f"{what}")
    after = {run: _after_end(logs[run]) for run in run_ids}
    b, c = after[BASELINE], after[CANDIDATE]
    if b and c and b[1].text == c[1].text:
        out.append(f"baseline and candidate logs: an error was printed after the pipeline finished ("
                   f"{_after_end_text(c[1])}); both runs show it, so the change under review did not cause "
                   "it")
    else:
        for run, got in after.items():
            if got:
                other = "the baseline" if run == CANDIDATE else "the candidate"
                out.append(f"{run} log{got[0]}: an error was printed after the pipeline finished "
                           f"({_after_end_text(got[1])}); {other} does not show it")
    for run in run_ids:
        log = logs[run]
        if log.restored is None:
            continue
        sides = (r.candidate if run == CANDIDATE else r.baseline for r in section.rows)
        n = sum(1 for side in sides if side.state is State.RESTORED)
        rs = log.restored
        at = f" at '{rs.boundary}'" if rs.boundary else ""
        out.append(f"{run} restored {rs.cache.label}{at} (line {rs.line}, from {rs.source}): {n} "
                   f"transform(s) before it did not run in the {run}; not compared, restored from "
                   f"{rs.cache.label}")
    comps = section.rank_comparisons()
    if len(comps) > 1:
        out.append(f"ranks compared: {', '.join(str(rc.rank) for rc in comps)} (every rank both runs have); "
                   f"the tables show rank {comps[0].rank}, findings name the ranks they are about")
    elif section.narrowed and max(len(section.baseline.rank_logs()), len(section.candidate.rank_logs())) > 1:
        out.append(f"only rank {comps[0].rank} compared (--rank); the other ranks were checked for "
                   "completeness only")
    return out
