"""The accounting pass: every difference between what the two runs did is accounted for.

Each kind contributes the facts of its own input (:meth:`ad_diff.kinds.base.Kind.facts`: the log kind each
rank's transform results and the lines no reader claims, the graph kind the canonical dumps, the tensor kind
the recorded tensors, the config kind the effective config keys); the pass adds the run folder's own records
(``run.json``, files no kind reads). A kind the user switched off, or that was not compared, contributes
nothing. The line normalisers of :data:`.noise.NOISE_RULES` run over the unclaimed log lines, and each
difference left is judged: covered by a finding or another difference (:func:`.coverage.covered`, the one
coverage relation), absorbed by a noise rule, or left over. A leftover log line is an ``ADA002`` warning (a
line no reader claims is never a gate by itself); anything else left over is an ``ADA001`` finding naming it.

It runs in the explain stage after each kind's own explain (so config explanations count) and before the
user's filters and expected changes (so an unaccounted difference can be acknowledged like any finding).
docs/accounting.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ad_diff.core.facts import Difference, Evidence, Facts, Item, SaidKey
from ad_diff.core.model import Finding
from ad_diff.explain import roles
from ad_diff.explain.accounting import inventory as inv
from ad_diff.explain.accounting.coverage import covered
from ad_diff.explain.accounting.model import Accounting, RuleCount
from ad_diff.explain.accounting.noise import ABSORBING, LINE_NORMALISERS, NOISE_RULES
from ad_diff.explain.accounting.rules import UNACCOUNTED, UNRECOGNISED_LINES
from ad_diff.kinds.base import SkipReason

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context, Kind

MAX_FINDINGS = 20
"""Findings of each accounting rule per comparison; the rest are counted in one more finding."""
LINE_EXCERPT = 300
"""Characters of an unrecognised line kept in a finding's evidence (a log line may be 64 KiB)."""


def _ignored(ctx: Context) -> frozenset[str]:
    """Transforms of either log left out with ``--ignore-transform``: their facts are no facts."""
    pats = ctx.settings.ignore_transforms
    if not pats:
        return frozenset()
    names = {r.transform for log in (ctx.baseline_log, ctx.candidate_log) if log is not None
             for rl in log.rank_logs() for r in rl.transforms}
    return frozenset(t for t in names if any(fnmatchcase(t, p) for p in pats))


def _normalised(said: Counter[str], root: Path, absorbed: Counter[str], other: Counter[str],
                other_root: Path) -> tuple[Counter[str], Counter[str]]:
    """Both sides' lines of one transform through every line normaliser, counting what each absorbed (the
    differences that vanish once it applies, in rule order)."""
    b, c = said, other
    for rule in LINE_NORMALISERS:
        assert rule.normalise is not None  # every line normaliser has one (noise.LINE_NORMALISERS)
        before = sum(((b - c) + (c - b)).values())
        nb: Counter[str] = Counter()
        nc: Counter[str] = Counter()
        for text, n in b.items():
            nb[rule.normalise(text, root)] += n
        for text, n in c.items():
            nc[rule.normalise(text, other_root)] += n
        b, c = nb, nc
        absorbed[rule.name] += (before - sum(((b - c) + (c - b)).values())) // 2
    return b, c


def _said(said: tuple[dict[SaidKey, Counter[str]], dict[SaidKey, Counter[str]]], ctx: Context,
          out: Facts) -> None:
    """The lines no reader claims, compared transform by transform after the line normalisers."""
    b, c = said
    out.sizes.append((Item.LOG_LINE, sum(x.total() for x in b.values()), sum(x.total() for x in c.values())))
    for key in sorted(b.keys() | c.keys(), key=lambda k: (-1 if k[0] is None else k[0], *k[1:])):
        rank, stage, transform, _occ = key
        bs, cs = b.get(key, Counter()), c.get(key, Counter())
        if bs == cs:
            continue
        bs, cs = _normalised(bs, ctx.baseline.root, out.absorbed, cs, ctx.candidate.root)
        for text in sorted(bs.keys() | cs.keys()):
            nb, nc = bs.get(text, 0), cs.get(text, 0)
            if nb != nc:
                out.differences.append(Difference(
                    Item.LOG_LINE, f"`{text[:LINE_EXCERPT]}`", str(nb) if nb else None,
                    str(nc) if nc else None,
                    transform=transform, stage=stage, rank=rank, key=text))


def _run_records(ctx: Context, out: Facts) -> None:
    """``run.json`` and the files no kind reads."""
    out.compare(Item.RUN_INFO, inv.run_info(ctx.baseline.root), inv.run_info(ctx.candidate.root),
                lambda k, b, c: Difference(Item.RUN_INFO, f"run.json {k}", b, c, key=k))
    claimed = {lf.path for art in (ctx.baseline, ctx.candidate) for lf in art.logs}
    claimed |= {art.root / inv.RUN_JSON for art in (ctx.baseline, ctx.candidate)}
    out.compare(Item.FILE, inv.files(ctx.baseline.root, claimed), inv.files(ctx.candidate.root, claimed),
                lambda k, b, c: Difference(Item.FILE, f"file {k}", b, c, key=k))


def _group_key(d: Difference) -> tuple[str, str]:
    if d.item is Item.TRANSFORM:
        return d.item.value, str(d.rank)
    if d.item is Item.LOG_LINE:
        return d.item.value, f"{d.rank}/{d.transform}"
    return d.item.value, d.key


def _grouped(left: list[Difference]) -> list[list[Difference]]:
    groups: dict[tuple[str, str], list[Difference]] = {}
    for d in left:
        groups.setdefault(_group_key(d), []).append(d)
    return list(groups.values())


def _unaccounted(groups: list[list[Difference]]) -> list[Finding]:
    out: list[Finding] = []
    for members in groups[:MAX_FINDINGS]:
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
    rest = sum(len(m) for m in groups[MAX_FINDINGS:])
    if rest:
        first = groups[MAX_FINDINGS][0]
        out.append(UNACCOUNTED.make(what=f"{rest} more difference(s), first {first.subject}",
                                    values=first.values(), more="",
                                    evidence={"item": first.item.value, "differences": rest}))
    return out


def _unrecognised(groups: list[list[Difference]]) -> list[Finding]:
    """One ``ADA002`` warning per rank and transform whose unclaimed lines differ."""
    out: list[Finding] = []
    for members in groups[:MAX_FINDINGS]:
        d = members[0]
        lines = "; ".join(f"{m.subject} ({m.values()})" for m in members[:3])
        more = f"; and {len(members) - 3} more line(s)" if len(members) > 3 else ""
        where = f" on rank {d.rank}" if d.rank is not None else ""
        out.append(UNRECOGNISED_LINES.make(
            transform=d.transform, stage=d.stage, where=where, lines=lines,
            more=more, evidence={"item": d.item.value, "rank": d.rank, "lines": [
                [m.key[:LINE_EXCERPT], m.baseline, m.candidate] for m in members[:50]]},
        ))
    return out


def account(ctx: Context, findings: list[Finding], kinds: Sequence[Kind[Any]]
            ) -> tuple[list[Finding], Accounting | None]:
    """The ``ADA0xx`` findings for what nothing accounts for, and the pass's report (``None`` when a snapshot
    stands in for the baseline: it holds counts only, no folder to inventory)."""
    if ctx.from_snapshot:
        return [], None
    ev = Evidence()
    ev.add_findings(findings)
    ev.roles = {roles.role(f) for f in findings}  # what coverage reads of a rule (docs/rules.md, Roles)
    ignored = _ignored(ctx)
    gathered = Facts()
    switched_off: list[str] = []
    for kind in kinds:
        section = ctx.sections.get(kind.key.name)
        if section is None:
            why = ctx.skipped.get(kind.key.name)
            if why is not None and why.reason is SkipReason.DISABLED:
                switched_off.append(kind.key.name)
            elif why is not None and why.reason is not SkipReason.NO_DATA:
                gathered.notes.append(f"{kind.key.title.lower()} not inventoried: not compared "
                                      f"({why.detail})")
            continue
        got = kind.facts(section, ctx, ev, ignored)
        gathered.differences += got.differences
        gathered.sizes += got.sizes
        gathered.absorbed.update(got.absorbed)
        gathered.notes += got.notes
        if got.said is not None:
            _said(got.said, ctx, gathered)
    _run_records(ctx, gathered)
    n_covered = 0
    left: list[Difference] = []
    absorbed = gathered.absorbed
    for d in gathered.differences:
        if covered(d, ev):
            n_covered += 1
            continue
        rule = next((r for r in ABSORBING if r.item is d.item and r.absorbs and r.absorbs(d, ev)), None)
        if rule is not None:
            absorbed[rule.name] += 1
        else:
            left.append(d)
    lines = [d for d in left if d.item is Item.LOG_LINE]
    gating = [d for d in left if d.item is not Item.LOG_LINE]
    counts = tuple(RuleCount(r.name, r.item, absorbed[r.name], r.description) for r in NOISE_RULES)
    result = Accounting(
        inventory=tuple((item.value, b, c) for item, b, c in gathered.sizes),
        differences=len(gathered.differences), covered=n_covered, noise=counts, unaccounted=len(gating),
        notes=tuple(gathered.notes), switched_off=tuple(switched_off), examples=tuple(gating[:MAX_FINDINGS]),
        unrecognised=len(lines),
    )
    return _unaccounted(_grouped(gating)) + _unrecognised(_grouped(lines)), result


__all__ = ["account"]
