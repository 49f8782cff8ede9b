"""The accounting pass: every difference between the two run folders is accounted for.

It inventories both runs (:mod:`.inventory`), compares them item by item, lets the line and dump
normalisers of :data:`.noise.NOISE_RULES` remove what is noise by construction, and judges each difference
left: covered by a finding or another difference (:func:`.coverage.covered`, the one coverage relation),
absorbed by a noise rule, or *unaccounted*, which becomes an ``ADA001`` finding naming it. It runs in the
explain stage after each kind's own explain (so config explanations count) and before the user's filters and
expected changes (so an unaccounted difference can be acknowledged like any finding). docs/accounting.md.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ad_diff.core.model import Finding, State
from ad_diff.errors import InputError
from ad_diff.explain.accounting import inventory as inv
from ad_diff.explain.accounting.coverage import Evidence, covered
from ad_diff.explain.accounting.model import Accounting, Difference, Item, RuleCount
from ad_diff.explain.accounting.noise import ABSORBING, LINE_NORMALISERS, NOISE_RULES, TRANSFORM_LINE
from ad_diff.explain.accounting.rules import UNACCOUNTED
from ad_diff.kinds.config import CONFIG
from ad_diff.kinds.graph import GRAPH
from ad_diff.kinds.log.model import LogEnd
from ad_diff.kinds.tensors import TENSORS

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context

MAX_FINDINGS = 20
"""Unaccounted-difference findings per comparison; the rest are counted in one more finding."""


class _Run:
    """The differences found so far, inventory sizes and noise absorbed by normalisation."""

    def __init__(self) -> None:
        self.diffs: list[Difference] = []
        self.sizes: list[tuple[str, int, int]] = []
        self.absorbed: Counter[str] = Counter()
        self.notes: list[str] = []

    def pairwise(self, item: Item, b: dict[str, Any], c: dict[str, Any], make: Any) -> None:
        """Compare two ``{key: value}`` inventories; ``make(key, bvalue, cvalue)`` builds each difference."""
        self.sizes.append((item.value, len(b), len(c)))
        for key in sorted(b.keys() | c.keys()):
            bv, cv = b.get(key), c.get(key)
            if bv != cv:
                self.diffs.append(make(key, bv, cv))


def _transforms(run: _Run, ctx: Context, ev: Evidence) -> None:
    b, c = inv.transforms(ctx.baseline_log), inv.transforms(ctx.candidate_log)

    def make(key: str, bv: Any, cv: Any) -> Difference:
        _, rank, stage, transform = bv or cv
        who = f"rank {rank} " if rank is not None else ""
        return Difference(Item.TRANSFORM, f"{who}{transform} result", bv and bv[0], cv and cv[0],
                          transform=transform, stage=stage, rank=rank, key=key)

    run.pairwise(Item.TRANSFORM, b, c, make)
    ev.record_diffs = {d.transform for d in run.diffs if d.item is Item.TRANSFORM and d.transform}
    ev.primary = {log.rank for log in (ctx.baseline_log, ctx.candidate_log) if log is not None}
    for side, log in (("baseline", ctx.baseline_log), ("candidate", ctx.candidate_log)):
        if log is not None and log.pipelines > 1:
            ev.restarted.add(side)
        for rk in log.rank_logs() if log is not None else ():
            ev.ranks.add((side, rk.rank))
            if rk.end is not LogEnd.COMPLETE:
                ev.stopped.add((side, rk.rank))
    ev.restored_transforms = {
        r.transform for r in ctx.rows if State.RESTORED in (r.baseline.state, r.candidate.state)
    }


def _log_lines(run: _Run, ctx: Context) -> None:
    tally = inv.LineTally()
    nb = inv.log_lines(ctx.baseline, 1, tally)
    nc = inv.log_lines(ctx.candidate, -1, tally)
    run.sizes.append((Item.LOG_LINE.value, nb, nc))
    left, final = tally.steps()
    names, noise = tally.names, tally.noise
    for i, rule in enumerate(LINE_NORMALISERS, 1):
        run.absorbed[rule.name] += max(0, left[i - 1] - left[i]) // 2
    # (a form a step moved every line away from counts 0; every line left over sits at its named final form)
    for digest, n in sorted(((d, n) for d, n in final.items() if n), key=lambda kv: names[kv[0]]):
        text = names[digest]
        m = TRANSFORM_LINE.search(text)  # a normaliser may drop the prefix (dump-folder-path)
        stage, transform = (m.group("stage"), m.group("transform")) if m else ("", "")
        more, fewer = (f"{abs(n)} more", None) if n > 0 else (None, f"{abs(n)} more")
        run.diffs.append(Difference(Item.LOG_LINE, f"log line `{text[:160]}`", more, fewer,
                                    transform=transform or None, stage=stage or None, key=text))
    noise_lines = sum(1 for v in noise.values() if v)
    run.absorbed["log-noise"] += noise_lines


def _dumps(run: _Run, ctx: Context, ev: Evidence) -> None:
    a = ctx.section(GRAPH.key)
    if a is None:  # before the imports: a log-only comparison never loads the graph model
        run.notes.append("graph dumps not inventoried: the graph analysis did not run (see skipped)")
        return
    # lazy: a kind's model loads only when that kind ran (a log-only comparison loads none)
    from ad_diff.kinds.graph.diff import Absence, GraphAnalysis
    from ad_diff.kinds.graph.splits import only_split

    if not isinstance(a, GraphAnalysis):
        run.notes.append("graph dumps not inventoried: the graph analysis did not run (see skipped)")
        return
    prev: str | None = None
    differ: set[str] = set()  # two-sided dumps known to differ (read, or the same bodies as a pair read)
    compared = inv.DumpComparisons()
    nb = nc = 0
    for d in a.transforms:
        nb += d.baseline_file is not None
        nc += d.candidate_file is not None
        ev.upstream[d.key] = prev
        prev = d.key
        if d.moved is not None:
            ev.moved.add(d.transform)
        if d.missing is Absence.RESTORED:
            ev.restored_dumps.add(d.key)
        if d.two_sided:
            ev.dump_of.setdefault(d.transform, d.key)
        if d.identical:
            continue
        if only_split(d):
            ev.split_only.add(d.key)
        elif d.structure_equal and not d.meta_changes:
            ev.renamed_only.add(d.key)
        node, line = None, 0
        values: tuple[str | None, str | None] = (d.baseline_file, d.candidate_file)
        up = ev.upstream[d.key]
        paths = None
        if d.two_sided:
            assert d.baseline_file is not None
            assert d.candidate_file is not None
            paths = a.baseline_dir / d.baseline_file, a.candidate_dir / d.candidate_file
        if paths is not None and up is not None and up in differ:
            # its input differs, so it is covered whatever it holds (coverage.py): not read again; it is
            # known to differ itself when a pair with its bodies was read and differed
            run.diffs.append(Difference(Item.DUMP, f"graph dump after {d.transform}", *values,
                                        transform=d.transform, stage=d.stage, key=d.key))
            ev.dump_diffs.add(d.key)
            ev.dump_transforms.add(d.transform)
            known = compared.known(*paths, d.bodies)
            if known is not None and not known[0]:
                differ.add(d.key)
            continue
        if paths is not None:
            try:
                same, node, line, values = compared.compare(*paths, d.bodies)
            except (InputError, OSError) as e:  # swapped or gone since the graph kind read it: never equal
                same, node, line, values = False, None, 0, ("unreadable", str(e)[:200])
            if same:
                run.absorbed["fx-counter-renames"] += 1
                continue
            differ.add(d.key)
        where = f" at line {line}{f', node {node}' if node else ''}" if line else ""
        run.diffs.append(Difference(
            Item.DUMP, f"graph dump after {d.transform}{where}", *values,
            transform=d.transform, stage=d.stage, node=node, key=d.key,
        ))
        ev.dump_diffs.add(d.key)
        ev.dump_transforms.add(d.transform)
    run.sizes.append((Item.DUMP.value, nb, nc))


def _config(run: _Run, ctx: Context, ev: Evidence) -> None:
    a = ctx.section(CONFIG.key)
    if a is None:  # no config in either run: its model stays unloaded
        run.sizes.append((Item.CONFIG.value, 0, 0))
        return
    # lazy: a kind's model loads only when that kind ran (a log-only comparison loads none)
    from ad_diff.kinds.config.compare import _normalised
    from ad_diff.kinds.config.model import ConfigAnalysis
    from ad_diff.kinds.config.rules import CONFIG_MISSING, SETTING_CHANGED

    if not isinstance(a, ConfigAnalysis):
        run.sizes.append((Item.CONFIG.value, 0, 0))
        return
    ev.config_one_sided_code = CONFIG_MISSING.code
    ev.setting_code = SETTING_CHANGED.code
    # any YAML value (a mapping, a list) may stand where a number belongs: compared as text, never hashed
    sizes = {repr(cfg.data.get("world_size")) for cfg in (a.baseline, a.candidate) if cfg is not None}
    both = a.baseline is not None and a.candidate is not None
    ev.same_world_size = both and len(sizes) == 1 and repr(None) not in sizes
    if (a.baseline is None) != (a.candidate is None):
        run.sizes.append((Item.CONFIG.value, int(a.baseline is not None), int(a.candidate is not None)))
        run.diffs.append(Difference(Item.CONFIG, "AD config", "present" if a.baseline else None,
                                    "present" if a.candidate else None))
        return
    b = dict(inv.flatten(_normalised(a.baseline.data))) if a.baseline else {}
    c = dict(inv.flatten(_normalised(a.candidate.data))) if a.candidate else {}

    def make(key: str, bv: Any, cv: Any) -> Difference:
        parts = key.split(".")
        t = parts[1] if parts[0] == "transforms" and len(parts) > 2 else None
        return Difference(Item.CONFIG, f"config key {key}", bv, cv, transform=t, key=key)

    run.pairwise(Item.CONFIG, b, c, make)
    ev.config_diffs = {d.transform for d in run.diffs if d.item is Item.CONFIG and d.transform}


def _judged(ctx: Context, ev: Evidence) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """Per run, ``file -> name -> value`` of every tensor the tensor kind compared: the same value in both
    runs when it judged them identical, else the verdict on the candidate's side (so a difference within
    tolerance is one, absorbed by ``tensor-within-tolerance``, and one beyond is covered by its finding)."""
    out: tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]] = ({}, {})
    a = ctx.section(TENSORS.key)
    if a is None:  # before the import: a comparison without tensors never loads the tensor model
        return out
    # lazy: a kind's model loads only when that kind ran (a log-only comparison loads none)
    from ad_diff.kinds.tensors.model import TensorAnalysis, TensorVerdict

    if not isinstance(a, TensorAnalysis):
        return out
    for cmp in a.comparisons:
        same = cmp.verdict is TensorVerdict.IDENTICAL
        for i, (rec, root) in enumerate(((cmp.baseline, ctx.baseline.tensors),
                                         (cmp.candidate, ctx.candidate.tensors))):
            if root is None:
                continue
            try:
                rel = rec.path.relative_to(root).as_posix()
            except ValueError:
                continue
            said = "recorded" if same or i == 0 else cmp.verdict.value
            out[i].setdefault(rel, {})[rec.name] = f"{rec.dtype} {list(rec.shape)} {said}"
            if cmp.passed:
                ev.tensors_within.add(f"{rel}:{rec.name}")
    return out


def _tensors(run: _Run, ctx: Context, ev: Evidence) -> None:
    jb, jc = _judged(ctx, ev)
    b, c = inv.tensors(ctx.baseline.tensors, jb), inv.tensors(ctx.candidate.tensors, jc)

    def make(key: str, bv: Any, cv: Any) -> Difference:
        name = key.rpartition(":")[2] if ":" in key else None
        return Difference(Item.TENSOR, f"tensor {key}", bv, cv, tensor=name, key=key)

    run.pairwise(Item.TENSOR, b, c, make)


def _files(run: _Run, ctx: Context) -> None:
    run.pairwise(Item.RUN_INFO, inv.run_info(ctx.baseline.root), inv.run_info(ctx.candidate.root),
                 lambda k, b, c: Difference(Item.RUN_INFO, f"run.json {k}", b, c, key=k))
    claimed = {lf.path for art in (ctx.baseline, ctx.candidate) for lf in art.logs}
    claimed |= {art.root / inv.RUN_JSON for art in (ctx.baseline, ctx.candidate)}
    run.pairwise(Item.FILE, inv.files(ctx.baseline.root, claimed), inv.files(ctx.candidate.root, claimed),
                 lambda k, b, c: Difference(Item.FILE, f"file {k}", b, c, key=k))


def _group_key(d: Difference) -> tuple[str, str]:
    if d.item is Item.TRANSFORM:
        return d.item.value, str(d.rank)
    if d.item is Item.LOG_LINE:
        return d.item.value, d.transform or ""
    return d.item.value, d.key


def _findings(left: list[Difference]) -> list[Finding]:
    groups: dict[tuple[str, str], list[Difference]] = {}
    for d in left:
        groups.setdefault(_group_key(d), []).append(d)
    out: list[Finding] = []
    for members in list(groups.values())[:MAX_FINDINGS]:
        d = members[0]
        same_t = len({m.transform for m in members}) == 1
        more = f"; and {len(members) - 1} more {d.item} difference(s) like it" if len(members) > 1 else ""
        if d.item is Item.TRANSFORM and len(members) > 1:
            names = ", ".join(m.transform or "" for m in members[1:6])
            more += f" ({names}{', ...' if len(members) > 6 else ''})"
        out.append(UNACCOUNTED.make(
            transform=d.transform if same_t else None, stage=d.stage if same_t else None, node=d.node,
            tensor=d.tensor, what=d.subject, values=d.values(), more=more,
            evidence={"item": d.item.value, "key": d.key, "differences": len(members)},
        ))
    rest = sum(len(m) for m in list(groups.values())[MAX_FINDINGS:])
    if rest:
        first = list(groups.values())[MAX_FINDINGS][0]
        out.append(UNACCOUNTED.make(what=f"{rest} more difference(s), first {first.subject}",
                                    values=first.values(), more="",
                                    evidence={"item": first.item.value, "differences": rest}))
    return out


def account(ctx: Context, findings: list[Finding]) -> tuple[list[Finding], Accounting | None]:
    """The ``ADA001`` findings for what nothing accounts for, and the pass's report (``None`` when a snapshot
    stands in for the baseline: it holds counts only, no folder to inventory)."""
    if ctx.from_snapshot:
        return [], None
    run, ev = _Run(), Evidence()
    ev.user_reference = getattr(ctx.settings, "reference_dir", None) is not None
    ev.add_findings(findings)
    _transforms(run, ctx, ev)
    _log_lines(run, ctx)
    _dumps(run, ctx, ev)
    _config(run, ctx, ev)
    _tensors(run, ctx, ev)
    _files(run, ctx)
    n_covered = 0
    left: list[Difference] = []
    for d in run.diffs:
        if covered(d, ev):
            n_covered += 1
            continue
        rule = next((r for r in ABSORBING if r.item is d.item and r.absorbs and r.absorbs(d, ev)), None)
        if rule is not None:
            run.absorbed[rule.name] += 1
        else:
            left.append(d)
    noise_total = run.absorbed["log-noise"]
    counts = tuple(RuleCount(r.name, r.item, run.absorbed[r.name], r.description) for r in NOISE_RULES)
    result = Accounting(
        inventory=tuple(run.sizes), differences=len(run.diffs) + noise_total, covered=n_covered,
        noise=counts, unaccounted=len(left), notes=tuple(run.notes), examples=tuple(left[:MAX_FINDINGS]),
    )
    return _findings(left), result


__all__ = ["account"]
