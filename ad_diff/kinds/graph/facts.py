"""The graph kind's facts for the accounting pass (:class:`ad_diff.core.facts.Facts`): every dump, compared in
its canonical form.

A dump's canonical form names every node by its FX base and rank among the nodes of that base (``view#3``:
the noise rule ``fx-counter-renames``), so a consistent renaming is no difference while a changed op,
argument, edge or shape still is. Pairs the analysis found byte-identical are not read again; a pair whose
input dump pair differs is covered by that input whatever it holds, so it is not read either.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ad_diff.core import safepath
from ad_diff.core.facts import CANONICAL_DUMPS, Difference, Evidence, Facts, Item
from ad_diff.core.graphops import op_name
from ad_diff.core.kindfacts import GraphFacts
from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.core.text import LINE_CAP
from ad_diff.errors import InputError
from ad_diff.kinds.graph.diff import Absence, GraphAnalysis, TransformGraphDiff
from ad_diff.kinds.graph.parse import canonical_line
from ad_diff.kinds.graph.splits import only_split

if TYPE_CHECKING:
    from ad_diff.kinds.base import Context

_FX_COUNTER = re.compile(r"^(?P<base>.*?)(?:_default)?(?:_\d+)?$")


def fx_base(name: str) -> str:
    """A node name without FX's counter and overload suffixes (``view_default_2``, ``view_2`` -> ``view``)."""
    m = _FX_COUNTER.match(name)
    base = m.group("base") if m else name
    return base or name


_DEFINES = re.compile(r"^\s*%?(?P<name>[A-Za-z_]\w*)\s*(?:=|:)")
_TOKEN = re.compile(r"(?<![\w.])%?([A-Za-z_]\w*)(?![\w.])")


class _Canon:
    """The state of :func:`canonical_dump` over one dump: each defined name's FX base and rank so far."""

    __slots__ = ("names", "ranks")

    def __init__(self, names: dict[str, str] | None = None, ranks: Counter[str] | None = None) -> None:
        self.names: dict[str, str] = {} if names is None else dict(names)
        self.ranks: Counter[str] = Counter() if ranks is None else Counter(ranks)

    def define(self, line: str) -> str | None:
        """Record the name ``line`` defines (``None`` for a comment or a line that defines none)."""
        if line.startswith("#"):
            return None
        m = _DEFINES.match(line)
        if m is None or line.lstrip().startswith("output"):
            return None
        defined = m.group("name")
        base = fx_base(defined)
        self.ranks[base] += 1
        self.names[defined] = f"{base}#{self.ranks[base]}"
        return defined

    def text(self, line: str) -> str:
        """``line`` with every node named by its base and rank (call :meth:`define` on it first)."""
        if line.startswith("#"):
            return line
        names = self.names

        def sub(m: re.Match[str]) -> str:
            got = names.get(m.group(1))
            return m.group(0) if got is None else m.group(0).replace(m.group(1), got)

        return _TOKEN.sub(sub, line)


def _dump_lines(f: BinaryIO) -> Iterator[str]:
    for raw in iter(partial(f.readline, LINE_CAP), b""):  # bounded: a longer line is read in pieces
        yield canonical_line(raw.decode("utf-8", "replace").rstrip("\r\n"))


def canonical_dump(path: Path) -> Iterator[tuple[str, str | None, str]]:
    """The dump's lines with every node named by its FX base and rank (``fx-counter-renames``), each with the
    original name of the node it defines (``None`` for other lines) and the line as written. Streams the
    file."""
    canon = _Canon()
    with _open(path, "a graph dump") as f:
        for line in _dump_lines(f):
            defined = canon.define(line)
            yield canon.text(line), defined, line


def dump_difference(base: Path, cand: Path) -> DumpCompared:
    """Compare two dumps canonically: ``(equal, node of the first differing line, its line number, the two
    lines as written)``.

    The same as comparing :func:`canonical_dump` of both line by line, without canonicalising the leading
    lines that are the same as written: those define the same names in the same order in both dumps, so
    both have the same names and ranks so far and give each the same canonical text. One state stands for
    both meanwhile; from the first line that differs as written each dump has its own."""
    with _open(base, "a graph dump") as fb, _open(cand, "a graph dump") as fc:
        b, c = _dump_lines(fb), _dump_lines(fc)
        canon = _Canon()
        n = 0
        while True:  # the leading lines the same as written
            n += 1
            lb, lc = next(b, None), next(c, None)
            if lb is None or lc is None or lb != lc:
                break
            canon.define(lb)
        cb, cc = canon, _Canon(canon.names, canon.ranks)
        while True:
            if lb is None and lc is None:
                return True, None, 0, ("", "")
            db = None if lb is None else cb.define(lb)
            dc = None if lc is None else cc.define(lc)
            if lb is None or lc is None or cb.text(lb) != cc.text(lc):
                node = (dc if lc is not None else None) or (db if lb is not None else None)
                return False, node, n, (_said(lb), _said(lc))
            n += 1
            lb, lc = next(b, None), next(c, None)


DumpCompared = tuple[bool, str | None, int, tuple[str, str]]
"""What :func:`dump_difference` returns."""
HEADER_LINES = 2
"""A dump's header (``# Transform:`` / ``# Stage:``): comments, so no name is defined before the body."""


class DumpComparisons:
    """:func:`dump_difference` with each pair of bodies compared once.

    A disabled or zero-match transform writes the graph it was given: its dump pair has the bodies an
    earlier pair had. The canonical comparison of two dumps is their headers compared as written (comment
    lines, which define no name) and then their bodies compared from an empty naming state, so a pair whose
    bodies were compared before and whose headers are equal has the earlier pair's result, line numbers
    and all. Only results that the headers did not decide are kept."""

    def __init__(self) -> None:
        self._seen: dict[tuple[bytes, bytes], DumpCompared] = {}

    def known(self, base: Path, cand: Path, bodies: tuple[bytes, bytes] | None) -> DumpCompared | None:
        """The result for ``base``/``cand`` if their bodies were compared before, else ``None``."""
        got = None if bodies is None else self._seen.get(bodies)
        return got if got is not None and _same_header(base, cand) else None

    def compare(self, base: Path, cand: Path, bodies: tuple[bytes, bytes] | None) -> DumpCompared:
        """:func:`dump_difference` of the pair, read only when its bodies were not compared before."""
        got = self.known(base, cand, bodies)
        if got is None:
            got = dump_difference(base, cand)
            if bodies is not None and (got[0] or got[2] > HEADER_LINES):
                self._seen[bodies] = got
        return got


def _same_header(base: Path, cand: Path) -> bool:
    """The two dumps' header lines are the same as written (``False`` if either cannot be read)."""
    try:
        with _open(base, "a graph dump") as fb, _open(cand, "a graph dump") as fc:
            return all(fb.readline(LINE_CAP) == fc.readline(LINE_CAP) for _ in range(HEADER_LINES))
    except (InputError, OSError):
        return False


def _said(line: str | None) -> str:
    """A dump line as written, as a short excerpt (``end of dump`` past the last line)."""
    if line is None:
        return "end of dump"
    text = line.strip()
    return text if len(text) <= 80 else text[:77] + "..."


def _open(path: Path, what: str) -> BinaryIO:
    """``path`` opened beneath its own folder with no link followed (:func:`ad_diff.core.safepath.open_file`):
    the kinds vetted the listing; a file swapped for a link since is refused, not read."""
    return safepath.open_file(path, path.parent, what)


def facts(a: GraphAnalysis, ctx: Context, ev: Evidence, ignored: frozenset[str]) -> Facts:
    """Every dump pair of the analysis, compared canonically; fills the graph part of ``ev``. ``ignored``:
    transforms left out with ``--ignore-transform``."""
    out = Facts()
    prev: str | None = None
    differ: set[str] = set()  # two-sided dumps known to differ (read, or the same bodies as a pair read)
    compared = DumpComparisons()
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
        elif d.missing is Absence.UNREADABLE:
            ev.unreadable_dumps.add(d.key)
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
            out.differences.append(Difference(Item.DUMP, f"graph dump after {d.transform}", *values,
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
                out.absorbed[CANONICAL_DUMPS] += 1
                continue
            differ.add(d.key)
        where = f" at line {line}{f', node {node}' if node else ''}" if line else ""
        out.differences.append(Difference(
            Item.DUMP, f"graph dump after {d.transform}{where}", *values,
            transform=d.transform, stage=d.stage, node=node, key=d.key,
        ))
        ev.dump_diffs.add(d.key)
        ev.dump_transforms.add(d.transform)
    out.sizes.append((Item.DUMP, nb, nc))
    # an ignored transform's dumps are no facts, but a difference there is still evidence for the next dump
    out.differences = [d for d in out.differences if d.transform not in ignored]
    return out


def _region_ops(d: TransformGraphDiff) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """Ops (distinct, in order) of the regions first seen at ``d``, per run, and whether every region is a
    one-for-one swap of op targets."""
    new = {r.id for r in d.regions if r.new}
    removed: list[str] = []
    added: list[str] = []
    per: dict[int, tuple[list[str], list[str]]] = {}
    for u in d.unmatched:
        if u.region not in new:
            continue
        name = op_name(u.target)
        per.setdefault(u.region, ([], []))[0 if u.run == BASELINE else 1].append(name)
        target = removed if u.run == BASELINE else added
        if name not in target:
            target.append(name)
    swap = bool(per) and all(len(b) == len(c) == 1 and b != c for b, c in per.values())
    return tuple(removed), tuple(added), swap


def for_other_kinds(a: GraphAnalysis) -> GraphFacts:
    """What the other kinds use of this comparison (:class:`ad_diff.core.facts.GraphFacts`)."""
    node_transform: dict[str, str] = {}
    for t in a.transforms:
        for u in t.unmatched:
            if u.run == CANDIDATE:
                node_transform.setdefault(u.name, t.transform)
    final = a.final
    return GraphFacts(
        final_order=tuple(final.order) if final is not None else None,
        final_source=f"baseline's final graph dump {final.baseline_file}" if final is not None else None,
        renamed=tuple(final.renamed) if final is not None else (),
        moe=tuple(final.moe) if final is not None else (),
        node_transform=tuple(node_transform.items()),
        region_ops=tuple((d.transform, *_region_ops(d)) for d in a.transforms if d.regions),
    )


__all__ = ["DumpComparisons", "canonical_dump", "dump_difference", "facts", "for_other_kinds", "fx_base"]
