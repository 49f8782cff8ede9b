"""Search an indexed TensorRT-LLM source tree for the transforms and ops covering a pattern.

Evidence comes in separate pieces, each with its file and line:

1. **Transforms.** A registered transform whose key is a known transform of the family (:data:`KNOWN`,
   ``matched_by: table``), or whose module text inserts a known op of the family (``matched_by: source``).
2. **Ops from the source.** Every op a found transform's module names in an ``inserts``, ``backend`` or
   ``matches`` position (:mod:`~ad_diff.candidates.pyread`), with its registration's file and
   line and, in ``via``, where the transform names it. An op named there but registered nowhere in the
   tree's Python text is an ``op_reference`` at the naming line.
3. **Ops from the table.** Registrations of a known op name of the family not already tied by 2.
4. **Op tokens.** Any other registration whose name holds every distinctive op of the pattern
   (``silu`` and ``mul`` in ``silu_and_mul``).

For each found transform, the search pattern functions it registers are put beside the graph instance
(:class:`~ad_diff.candidates.model.PatternCheck`): where their ops differ, the report says how.
"""

from __future__ import annotations

from collections import Counter

from ad_diff.candidates.model import Evidence, KernelLookup, LookupStatus, PatternCheck, Tie
from ad_diff.candidates.ops import ELEMENTWISE, GEMM, LAYOUT, NEUTRAL
from ad_diff.candidates.patternfn import PatternFn
from ad_diff.candidates.source import (  # re-exported: callers index, then look up
    AD_DIR,
    Registration,
    SourceIndex,
    index_source,
    resolve_ad_dir,
)
from ad_diff.core.graphops import op_name
from ad_diff.core.known import KNOWN  # the table moved to core (the config kind reads it); re-exported

__all__ = ["AD_DIR", "KNOWN", "SourceIndex", "index_source", "lookup", "pattern_tokens", "resolve_ad_dir"]

EVIDENCE_ROLES = frozenset({"inserts", "backend", "matches"})
"""Roles that tie an op to a transform (``references`` is kept in the index, never used as evidence)."""

# Ops too common to identify a kernel by name (every fused kernel "adds" or "muls").
_TRIVIAL = (
    frozenset({"add", "sub", "mul", "div", "neg", "to", "_to_copy", "type_as", "float", "where"}) | LAYOUT
)


def pattern_tokens(pattern: tuple[str, ...]) -> tuple[str, ...]:
    """Distinctive op names of a pattern (``silu``, ``rsqrt``), used for the name search."""
    names = {op_name(t) for t in pattern}
    toks = {
        n for n in names if n not in _TRIVIAL and n not in GEMM and (n in ELEMENTWISE or n.isidentifier())
    }
    return tuple(sorted(toks))


def _token_ok(tokens: tuple[str, ...]) -> bool:
    # A single short token ("exp", "abs") matches too many unrelated names to count as evidence.
    return len(tokens) >= 2 or len(tokens[0]) >= 4


def _bare(symbol: str) -> str:
    return symbol.split("::", 1)[-1]


def _found_transforms(index: SourceIndex, ops: set[str], keys: set[str]) -> dict[str, Evidence]:
    found: dict[str, Evidence] = {}
    for r in index.registrations:
        if r.kind == "transform" and r.name in keys and r.name not in found:
            found[r.name] = Evidence("transform", r.name, r.path, r.line, "table")
    for m in index.modules:
        for t in m.transforms:
            if t.key in found:
                continue
            hit = next((x for x in t.refs if x.role in ("inserts", "backend") and _bare(x.op) in ops), None)
            if hit is not None:
                found[t.key] = Evidence(
                    "transform",
                    t.key,
                    m.path,
                    t.line,
                    "source",
                    note=f"its module {hit.detail or hit.role}: {hit.op} (line {hit.line})",
                )
    return found


def _ties(index: SourceIndex, transforms: dict[str, Evidence]) -> dict[str, list[Tie]]:
    funcs = {r.func: r for r in index.registrations if r.kind == "custom_op" and r.func}
    ties: dict[str, list[Tie]] = {}
    for key in transforms:
        src = index.transform(key)
        if src is None:
            continue
        m, t = src
        for ref in t.refs:
            if ref.role in EVIDENCE_ROLES:
                ties.setdefault(ref.op, []).append(Tie(key, ref.role, m.path, ref.line, ref.detail))
        for name, role, line, detail in t.wrappers:
            if role in EVIDENCE_ROLES and (reg := funcs.get(name)):
                what = f"{detail or role} through {name}()"
                ties.setdefault(reg.symbol, []).append(Tie(key, role, m.path, line, what))
    return ties


def _op_evidence(index: SourceIndex, ties: dict[str, list[Tie]]) -> list[Evidence]:
    regs: dict[str, Registration] = {}
    for r in index.registrations:
        if r.kind != "transform":
            regs.setdefault(r.symbol, r)
    out = []
    for sym, tl in ties.items():
        tl = list(dict.fromkeys(tl))
        if reg := regs.get(sym):
            out.append(Evidence(reg.kind, sym, reg.path, reg.line, "source", tuple(tl)))
        else:
            out.append(
                Evidence(
                    "op_reference",
                    sym,
                    tl[0].path,
                    tl[0].line,
                    "source",
                    tuple(tl),
                    "no registration of this op in the tree's Python text",
                )
            )
    return out


def lookup(
    index: SourceIndex | None,
    family: str,
    pattern: tuple[str, ...],
    graph_ops: tuple[str, ...] = (),
    graph_formula: str = "",
) -> KernelLookup:
    """Find what covers ``family``/``pattern``; ``not_searched`` when there is no index.

    ``graph_ops`` (canonical op names of one instance) and ``graph_formula`` feed the pattern checks."""
    ops, keys = KNOWN.get(family, ((), ()))
    tokens = pattern_tokens(pattern)
    searched = tuple(sorted(set(ops) | set(keys))) + tuple(f"*{t}*" for t in tokens)
    if index is None:
        return KernelLookup(LookupStatus.NOT_SEARCHED, (), searched)
    transforms = _found_transforms(index, set(ops), set(keys))
    op_ev = _op_evidence(index, _ties(index, transforms))
    tr_ev = list(transforms.values())
    have = {e.symbol for e in op_ev} | set(transforms)
    for r in index.registrations:
        if r.symbol in have:
            continue
        if r.kind != "transform" and r.name in ops:
            op_ev.append(Evidence(r.kind, r.symbol, r.path, r.line, "table"))
        elif tokens and _token_ok(tokens) and all(t in r.name for t in tokens):
            (tr_ev if r.kind == "transform" else op_ev).append(
                Evidence(r.kind, r.symbol, r.path, r.line, "op_tokens")
            )
        else:
            continue
        have.add(r.symbol)
    rank = {"source": 0, "table": 1, "op_tokens": 2}

    def order(e: Evidence) -> tuple[int, str, int, str]:
        return rank[e.matched_by], e.path, e.line, e.symbol

    # ops (the kernels) first, then the transforms that insert them
    evidence = sorted(op_ev, key=order) + sorted(tr_ev, key=order)
    checks = tuple(c for key in transforms for c in pattern_checks(index, key, graph_ops, graph_formula))
    status = LookupStatus.FOUND if evidence else LookupStatus.NOT_FOUND
    return KernelLookup(status, tuple(evidence), searched, checks)


def pattern_checks(
    index: SourceIndex, key: str, graph_ops: tuple[str, ...], graph_formula: str
) -> list[PatternCheck]:
    """The search patterns of transform ``key`` beside this graph's instance."""
    src = index.transform(key)
    if src is None:
        reg = next((r for r in index.registrations if r.kind == "transform" and r.name == key), None)
        where = (reg.path, reg.line) if reg else ("?", 0)
        note = next((m.note for m in index.modules if m.path == where[0] and m.note), "")
        why = f"its module was not read as Python ({note})" if note else "its module was not read as Python"
        return [
            PatternCheck(
                key, None, *where, "unreadable", f"{key} ({where[0]}:{where[1]}): {why}; not compared"
            )
        ]
    m, t = src
    out = [_check(key, m.path, p, graph_ops, graph_formula) for p in t.patterns]
    out += [
        PatternCheck(key, None, m.path, t.line, "unreadable", f"{key} ({m.path}): {n}; not compared")
        for n in t.pattern_notes
    ]
    if not out:
        out.append(
            PatternCheck(
                key,
                None,
                m.path,
                t.line,
                "no_pattern",
                f"{key} ({m.path}:{t.line}) registers no search pattern: its matcher is code, which a text "
                "read does not compare with the graph",
            )
        )
    return out


def _names(c: Counter[str]) -> str:
    return ", ".join(f"{k} x{n}" if n > 1 else k for k, n in sorted(c.items()))


def _check(key: str, path: str, p: PatternFn, graph_ops: tuple[str, ...], graph_formula: str) -> PatternCheck:
    where = f"{p.name}, {path}:{p.line}"
    if not p.readable:
        return PatternCheck(
            key,
            p.name,
            path,
            p.line,
            "unreadable",
            f"{key}'s search pattern ({where}) could not be read with confidence: {p.reason}; not compared",
        )
    up = Counter(o for o in p.ops if o not in NEUTRAL)
    here = Counter(o for o in graph_ops if o not in NEUTRAL)
    only_up, only_here = up - here, here - up
    if not only_up and not only_here:
        status = "same_ops"
        message = (
            f"upstream {key}'s pattern ({where}) uses the same ops as this graph ({_names(up)}): what keeps "
            "it from matching (wiring, literals, dtypes, or this dump coming before it runs) is not visible "
            "in the text"
        )
    else:
        status = "differs"
        diff = [f"{_names(only_up)} only upstream"] if only_up else []
        diff += [f"{_names(only_here)} only here"] if only_here else []
        message = (
            f"upstream {key} matches {p.formula or _names(up)} ({where}); this graph computes "
            f"{graph_formula or _names(here)}: {'; '.join(diff)}"
        )
    return PatternCheck(
        key,
        p.name,
        path,
        p.line,
        status,
        message,
        p.ops,
        graph_ops,
        tuple(sorted(only_up)),
        tuple(sorted(only_here)),
        p.formula,
        graph_formula,
    )
