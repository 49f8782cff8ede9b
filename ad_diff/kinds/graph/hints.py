"""Root-cause hints for a match loss, from what the dumps show upstream of the transform that lost matches.

Evidence used, and nothing else:

* the baseline nodes the transform consumed (present in the baseline's previous dump, gone from its dump);
* their counterparts in the candidate's previous dump, through the previous cross-run alignment;
* whether those counterparts (or their inputs) had lost metadata, and at which transform that loss first
  appeared (``metadata_lost_upstream``);
* whether those baseline nodes had no counterpart at all, i.e. sat in a rewritten region, and where that
  region first appeared, with the op forms on both sides (``op_form_changed_upstream``);
* or, when the previous dumps were byte-identical, the fact that the graphs fed to the transform were the
  same in both runs (``no_upstream_difference``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ad_diff.core.graphops import op_name
from ad_diff.core.model import BASELINE, CANDIDATE, RunId, State
from ad_diff.kinds.graph.diff import Hint, HintKind, RunDelta
from ad_diff.kinds.graph.model import split_dump_key

if TYPE_CHECKING:
    from ad_diff.kinds.graph.aligned import AlignedSection
    from ad_diff.kinds.graph.pair import LogIndex, TransformPair


def chain(targets: list[str]) -> str:
    """Distinct short targets in first-seen order, joined with `` -> ``."""
    seen: list[str] = []
    for t in targets:
        s = op_name(t)
        if s not in seen:
            seen.append(s)
    return " -> ".join(seen)


def _lost_matches(
    tp: TransformPair, logs: dict[RunId, LogIndex], db: RunDelta | None, dc: RunDelta | None
) -> bool:
    rb = logs[BASELINE].get((tp.transform, tp.occurrence))
    rc = logs[CANDIDATE].get((tp.transform, tp.occurrence))
    if rb is not None and rc is not None:
        if rc.state is State.DISABLED or rb.matches is None or rb.matches == 0:
            return False  # disabling is a config question, not an upstream cause
        return rc.matches is None or rc.matches < rb.matches
    return db is not None and dc is not None and db.removed > dc.removed


def find_hints(
    tp: TransformPair,
    prev: Sequence[AlignedSection] | None,
    prev_identical: bool,
    delta_b: RunDelta | None,
    delta_c: RunDelta | None,
    lost_since: dict[str, str],
    unmatched_b_since: dict[str, str],
    logs: dict[RunId, LogIndex],
) -> list[Hint]:
    """Hints for ``tp`` if it lost matches; ``prev`` is the alignment of the dumps just before it."""
    if not _lost_matches(tp, logs, delta_b, delta_c) or delta_b is None or not delta_b.removed_names:
        return []
    consumed = delta_b.removed_names
    if prev is None:
        if not prev_identical:
            return []
        return [
            Hint(
                HintKind.NO_UPSTREAM_DIFFERENCE,
                "",
                "",
                f"the dumps before {tp.transform} are byte-identical in both runs, so the graph it received "
                f"was the same; the loss comes from {tp.transform} itself (its code or configuration), not "
                "from upstream",
            )
        ]
    meta, form = _trace(prev, consumed, lost_since, unmatched_b_since)
    hints: list[Hint] = []
    for cause in sorted(meta):
        stage, transform, _ = split_dump_key(cause)
        nodes = sorted(meta[cause])
        hints.append(
            Hint(
                HintKind.METADATA_LOST_UPSTREAM,
                transform,
                stage,
                f"{len(nodes)} candidate node(s) feeding what {tp.transform} rewrote in the baseline lack "
                f"shape/dtype metadata since {cause} (e.g. {', '.join(nodes[:4])})",
                tuple(nodes),
            )
        )
    for cause in sorted(form):
        stage, transform, _ = split_dump_key(cause)
        items = form[cause]
        b_nodes = sorted({al.names_b[i] for al, i in items})
        b_targets = [al.targets_b[i] for al, i in sorted(items, key=lambda t: t[1])]
        c_targets: list[str] = []
        wanted = set(b_nodes)
        for al in prev:
            pos_c: dict[str, int] | None = None
            for r in al.regions:
                if wanted.intersection(r.baseline):
                    pos_c = al.pos_c() if pos_c is None else pos_c
                    c_targets.extend(al.targets_c[pos_c[n]] for n in r.candidate)
        hints.append(
            Hint(
                HintKind.OP_FORM_CHANGED_UPSTREAM,
                transform,
                stage,
                f"{tp.transform} rewrote `{chain(b_targets)}` in the baseline; in the candidate that part of "
                f"the graph is `{chain(c_targets) or 'absent'}` since {cause}",
                tuple(b_nodes),
            )
        )
    return hints


def _trace(
    prev: Sequence[AlignedSection],
    consumed: Sequence[str],
    lost_since: dict[str, str],
    unmatched_b_since: dict[str, str],
) -> tuple[dict[str, list[str]], dict[str, list[tuple[AlignedSection, int]]]]:
    """Where the baseline nodes a transform consumed came from in the candidate, by upstream cause: candidate
    nodes (the match or its inputs) without metadata since a dump, and baseline nodes with no candidate
    match since a dump (``(section, index)``)."""
    meta: dict[str, list[str]] = {}
    form: dict[str, list[tuple[AlignedSection, int]]] = {}
    for al in prev:
        prefix = "" if al.section == "(root)" else al.section + "/"
        pos_b: dict[str, int] | None = None
        for full in consumed:
            if prefix and not full.startswith(prefix):
                continue
            pos_b = al.pos_b() if pos_b is None else pos_b
            i = pos_b.get(full[len(prefix) :])
            if i is None:
                continue
            j = int(al.mb[i])
            if j < 0:
                cause = unmatched_b_since.get(al.names_b[i])
                if cause:
                    form.setdefault(cause, []).append((al, i))
                continue
            for k in [j, *al.inputs_c[j]]:
                cname = al.names_c[k]
                cause = lost_since.get(cname)
                if cause and cname not in meta.get(cause, []):
                    meta.setdefault(cause, []).append(cname)
    return meta, form
