"""Parser for AutoDeploy graph dumps, formats D1, D2 and D3 (docs/formats.md).

``parse(path)`` reads one dump file; ``parse_text(text, path)`` does the same on text already read (the
analysis hashes bytes first and parses each distinct content once). :func:`ad_diff.kinds.graph.render.render`
writes the dump back in its own format so that ``parse(render(d)) == d``.

A node depends only on its line's text and on whether the dump is D1 (dtype only); its line number is kept
in its section (:attr:`GraphSection.lines`). So ``parse_text(..., memo=LineMemo())`` parses each distinct
line once: consecutive dumps of a run, and the two runs' dumps of one transform, share almost all of their
lines, and a line met in a body the memo holds (:mod:`ad_diff.kinds.graph.linememo`) is the node object
already made for it, wherever it sits now. The result equals a fresh parse.

The loop is kept tight on purpose (str methods, no per-line regex): a 50k-node dump must parse in well under
a second. Every line that fits no grammar raises :class:`InputError` with file and line; nothing is guessed.
"""

from __future__ import annotations

import re
from dataclasses import fields
from itertools import repeat
from pathlib import Path
from sys import intern
from typing import Any

from ad_diff.core import limits, safepath
from ad_diff.core.gcpause import paused_gc
from ad_diff.core.jsonable import to_jsonable
from ad_diff.discover import dump_counter
from ad_diff.discover.dumps import header_fields
from ad_diff.errors import InputError
from ad_diff.kinds.graph.linememo import Body, LineMemo, line_keys
from ad_diff.kinds.graph.model import Arg, GraphDump, GraphNode, GraphSection, NodeMeta

SEP = "=" * 80
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NOT_REFS = frozenset({"True", "False", "None", "inf", "nan"})
_OPEN = {"(": ")", "[": "]", "{": "}"}
_TOKEN = re.compile(r"[()\[\]{}]|, ")


def parse(path: Path) -> GraphDump:
    """Parse one dump file. Raises :class:`InputError` for unreadable or malformed files.

    For a file the caller named (the parser goldens, tests), opened beneath the folder it resolves to. Run
    folders are read through :class:`~ad_diff.kinds.graph.cache.DumpLoader` (vetted listing, size cap)."""
    return parse_text(safepath.read_text(path, safepath.given_root(path), "a graph dump"), path)


def as_dict(dump: GraphDump) -> dict[str, Any]:
    """The parse result as JSON data, with the file's name instead of its path (the parser goldens'
    form: ``fixtures/parsers/dump/*.json``, written by ``scripts/update_golden.py``)."""
    data: dict[str, Any] = to_jsonable(dump)
    data["path"] = dump.path.name
    for sec, out in zip(dump.sections, data["sections"], strict=True):  # line numbers, written per node
        for i, node in enumerate(out["nodes"]):
            node["line"] = sec.line_of(i)
    return data


def counter_of(path: Path) -> int | None:
    """The ``NNN`` file-name prefix as an int (``None`` when the name has none)."""
    return dump_counter(path.name)


def parse_text(text: str, path: Path, memo: LineMemo | None = None, tag: object = None) -> GraphDump:
    """Parse dump ``text`` (read from ``path``, used in messages), reusing ``memo``'s lines if given (the
    body is stored there under ``tag``: see :meth:`LineMemo.add`)."""
    return parse_lines(split_lines(text, path), path, memo, tag)


def split_lines(text: str, path: Path) -> list[str]:
    """A dump's lines (a dump copied through Windows tools: CRLF line ends mean nothing here). A caller that
    holds the text only to parse it lets it go after this, before :func:`parse_lines`: the text and its
    lines are a large dump's size each. More lines than :data:`~ad_diff.core.limits.GRAPH_DUMP_LINES` are
    refused here, before any is split off."""
    if text.count("\n") > limits.GRAPH_DUMP_LINES:  # what it costs is nodes: counted before any is built
        raise limits.count_cap(path, "lines", limits.GRAPH_DUMP_LINES, "GRAPH_DUMP_LINES")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return text.split("\n")


def parse_lines(lines: list[str], path: Path, memo: LineMemo | None = None, tag: object = None) -> GraphDump:
    """:func:`parse_text` of the text split by :func:`split_lines`. ``lines`` is used up: the SSA lines are
    emptied as they are parsed (their texts let go: see :func:`_parse_nodes`)."""
    with paused_gc():
        return _parse_lines(lines, path, memo, tag)


def _parse_lines(lines: list[str], path: Path, memo: LineMemo | None, tag: object) -> GraphDump:
    if len(lines) < 2:
        raise InputError(path, "graph dump is empty or has no '# Stage:' header line", line=1)
    transform, stage = header_fields(path, lines[0], lines[1])
    counter = counter_of(path)
    d3 = len(lines) > 2 and lines[2].startswith("# GraphModules found: ")
    fmt = "D3" if d3 else _detect_flat(lines, path)
    d1 = fmt == "D1"
    # This body's nodes by line key, then the memo's bodies to look in (newest first), then the metadata and
    # argument objects made for this body's new lines, by text.
    io: _ParseIO = ({}, memo.sources(d1) if memo is not None else [], {}, {})
    if d3:
        sections = _parse_d3(lines, path, io)
    else:
        sections = (GraphSection("(root)", *_parse_nodes(lines, 2, len(lines), path, fmt, io)),)
    if memo is not None:
        memo.add(d1, io[0], tag)
    return GraphDump(path, fmt, transform, stage, sections, counter)


_ParseIO = tuple[Body, list[Body], dict[str, NodeMeta], dict[str, Arg]]
"""What the parse of one body shares between its sections: see :func:`_parse_text`."""


def _parse_d3(lines: list[str], path: Path, io: _ParseIO) -> tuple[GraphSection, ...]:
    try:
        declared = int(lines[2][22:])
    except ValueError:
        raise InputError(path, "expected an integer after '# GraphModules found:'", line=3) from None
    sections: list[GraphSection] = []
    i, n = 3, len(lines)
    while i < n:
        ln = lines[i]
        if not ln:
            i += 1
            continue
        if ln != SEP or i + 2 >= n or not lines[i + 1].startswith("# GraphModule: ") or lines[i + 2] != SEP:
            raise InputError(path, "expected a section header ('=' x 80, '# GraphModule: <name>', '=' x 80)",
                             i + 1)
        name = lines[i + 1][15:]
        try:
            j = lines.index(SEP, i + 3)
        except ValueError:
            j = n
        sections.append(GraphSection(name, *_parse_nodes(lines, i + 3, j, path, "D3", io)))
        i = j
    if len(sections) != declared:
        raise InputError(path, f"header declares {declared} GraphModules but {len(sections)} sections follow",
                         3)
    return tuple(sections)


def _detect_flat(lines: list[str], path: Path) -> str:
    """D1 (dtype only) or D2 (shape and dtype), from the first placeholder or call line after the header."""
    for lineno, ln in enumerate(lines[2:], start=3):
        if not ln:
            continue
        if ln.startswith("%"):
            head = ln.split(" = ", 1)
            if len(head) == 1:  # placeholder: '%x : dtype' (D1) or '%x : shape : dtype' (D2)
                return "D2" if ln.count(" : ") >= 2 else "D1"
            parts = ln.rsplit(" : ", 2)
            return "D2" if len(parts) == 3 and parts[0].endswith(")") else "D1"
        if output_body(ln) is None:
            raise InputError(path, "expected an SSA line ('%name ...' or 'output ...')", lineno)
    return "D2"


def _parse_nodes(lines: list[str], start: int, stop: int, path: Path, fmt: str,
                 io: _ParseIO) -> tuple[tuple[GraphNode, ...], range | tuple[int, ...]]:
    """The nodes of ``lines[start:stop]`` (blank lines skipped) and their 1-based line numbers."""
    d1 = fmt == "D1"
    while start < stop and not lines[start]:  # the blank line after a section header
        start += 1
    while stop > start and not lines[stop - 1]:  # the blank lines before the next section header
        stop -= 1
    # Identical metadata and argument texts repeat a lot (a node read by several users renders the same
    # argument text each time): share one object per distinct text, which halves the allocations. Names,
    # targets, shapes and dtypes are interned: one string per text across every dump (a node's name is also
    # each reference to it), which halves a parsed dump's size again.
    own, sources, metas, args = io
    # A node depends on its line's text alone, so a line met before (in this body or in the memo's bodies)
    # is that same node object: most of a body is found with one dict lookup per line, in the newest body.
    keys = line_keys(lines[start:stop])
    got = list(map(sources[0].get if sources else own.get, keys))
    rest = sources[1:]
    # The lines found need no text, the others only until their node is made: every text is let go here but
    # theirs, and each of theirs once parsed. Held to the end, a dump's lines (about 200 bytes each) were
    # there with all the nodes made from them, the parse's peak memory; let go as they are used, their
    # memory takes the new nodes.
    todo = [k for k, hit in enumerate(got) if hit is None]
    texts = [lines[start + k] for k in todo]
    lines[start:stop] = repeat("", stop - start)
    blank = False
    for q, k in enumerate(todo):
        ln = texts[q]
        texts[q] = ""
        if not ln:
            blank = True
            continue
        key = keys[k]
        hit = own.get(key)
        if hit is None:
            for body in rest:
                hit = body.get(key)
                if hit is not None:
                    break
            else:
                hit = _parse_line(ln, start + k + 1, path, d1, metas, args)
        got[k] = hit
    own.update(zip(keys, got, strict=True))
    if not blank:
        return tuple(got), range(start + 1, start + 1 + len(got))  # type: ignore[arg-type]
    keep = [k for k, hit in enumerate(got) if hit is not None]  # (a blank line has no node, every other one)
    return tuple(got[k] for k in keep), tuple(start + 1 + k for k in keep)  # type: ignore[misc]


def _parse_line(ln: str, lineno: int, path: Path, d1: bool, metas: dict[str, NodeMeta], args: dict[str, Arg]
                ) -> GraphNode:
    """One SSA line (not blank) as a node; :class:`InputError` naming ``lineno`` if it fits no grammar."""
    if ln[:1] == "%":
        sp = ln.find(" ")
        name = intern(ln[1:sp]) if sp > 0 else ""
        if not name.isidentifier():
            raise InputError(path, f"expected '%<identifier>' at the start of the line, got {ln[:40]!r}",
                             lineno)
        rest = ln[sp:]
        if rest.startswith(" = "):
            return _call(name, rest[3:], lineno, path, d1, metas, args)
        if rest.startswith(" : "):
            return _node(name, "placeholder", name, (), _meta(rest[3:], lineno, path, d1))
        raise InputError(path, "expected ' = <target>(...)' or ' : <meta>' after the node name", lineno)
    body = output_body(ln)
    if body is not None:
        outs = tuple(_out_arg(a) for a in _split_args(body, lineno, path)) if body else ()
        return _node("output", "output", "output", outs, None)
    raise InputError(path, "expected an SSA line ('%name ...' or 'output ...')", lineno)


def output_body(ln: str) -> str | None:
    """The outputs of a dump's output line, however it was printed, ``None`` for another line.

    The writer prints ``output %a, %b``; an upstream skill documents ``output(%a, %b)``; both, and
    ``output (%a, %b)``, name the same outputs (FORMATS.md 7.1): how the line was printed is no fact.
    """
    if not ln.startswith("output") or (len(ln) > 6 and ln[6] not in " ("):
        return None
    body = ln[6:].strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1].strip()
    return body


def canonical_line(ln: str) -> str:
    """A dump line in the one form every print form of it has (the output line as ``output a, b``)."""
    body = output_body(ln) if ln[:1] == "o" else None
    return ln if body is None else (f"output {body}" if body else "output")


_SET = tuple(GraphNode.__dict__[f.name].__set__ for f in fields(GraphNode))
"""The slot writers of :class:`GraphNode`, in field order (name, op, target, args, meta)."""
_SET_ARG = tuple(Arg.__dict__[f.name].__set__ for f in fields(Arg))
_SET_META = tuple(NodeMeta.__dict__[f.name].__set__ for f in fields(NodeMeta))


def _arg_obj(text: str, node: bool, meta: NodeMeta | None, refs: tuple[str, ...]) -> Arg:
    """``Arg(text, node, meta, refs)`` written slot by slot (see :func:`_node`)."""
    out: Arg = object.__new__(Arg)
    s_text, s_node, s_meta, s_refs = _SET_ARG
    s_text(out, text)
    s_node(out, node)
    s_meta(out, meta)
    s_refs(out, refs)
    return out


def _meta_obj(shape: str | None, dtype: str) -> NodeMeta:
    """``NodeMeta(shape, dtype)`` written slot by slot (see :func:`_node`)."""
    out: NodeMeta = object.__new__(NodeMeta)
    _SET_META[0](out, shape)
    _SET_META[1](out, dtype)
    return out


def _node(name: str, op: str, target: str, args: tuple[Arg, ...], meta: NodeMeta | None) -> GraphNode:
    """``GraphNode(name, op, target, args, meta)``, written slot by slot: a frozen dataclass's ``__init__``
    goes through ``object.__setattr__`` for every field, at twice the cost, and the parser makes one node per
    distinct line."""
    out: GraphNode = object.__new__(GraphNode)
    s_name, s_op, s_target, s_args, s_meta = _SET
    s_name(out, name)
    s_op(out, op)
    s_target(out, target)
    s_args(out, args)
    s_meta(out, meta)
    return out


def _meta(text: str, lineno: int, path: Path, d1: bool) -> NodeMeta:
    if d1:
        if " : " in text:
            raise InputError(path, "dtype-only (D1) dump: expected '<dtype>' but found 'shape : dtype'",
                             lineno)
        return NodeMeta(None, text)
    parts = text.split(" : ")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        raise InputError(path, f"expected '<shape> : <dtype>' metadata, got {text[:60]!r}", lineno)
    return NodeMeta(parts[0], parts[1])


def _call(
    name: str, rest: str, lineno: int, path: Path, d1: bool, metas: dict[str, NodeMeta], cache: dict[str, Arg]
) -> GraphNode:
    # Tail metadata: 'shape : dtype' (D2/D3) or 'dtype' (D1). Tuple forms hold no ' : ', so rsplit is safe.
    parts = rest.rsplit(" : ", 1 if d1 else 2)
    if len(parts) != (2 if d1 else 3) or not parts[0].endswith(")"):
        want = "'<target>(<args>) : <dtype>'" if d1 else "'<target>(<args>) : <shape> : <dtype>'"
        raise InputError(path, f"expected {want} after '%{name} = '", lineno)
    head = parts[0]
    tail = rest[len(head) + 3 :]
    meta = metas.get(tail)
    if meta is None:
        meta = metas[tail] = _meta_obj(None, intern(parts[1])) if d1 else _meta_obj(intern(parts[1]),
                                                                                    intern(parts[2]))
    # The target may be '<built-in function getitem>' or '<function f at 0x..>': skip '<...>' first.
    start = head.find(">") + 1 if head.startswith("<") else 0
    op = head.find("(", start)
    if op <= 0:
        raise InputError(path, f"expected '<target>(' after '%{name} = '", lineno)
    inner = head[op + 1 : -1]
    args: list[Arg] = []
    if inner:
        for text in _split_args(inner, lineno, path):
            a = cache.get(text)
            if a is None:
                a = cache[text] = _arg(text, lineno, path, d1, metas)
            args.append(a)
    return _node(name, "call", intern(head[:op]), tuple(args), meta)


def _split_args(text: str, lineno: int, path: Path) -> list[str]:
    """Split at top-level ', ' only (shapes like ``Max(1, s0)`` and list literals hold commas)."""
    if "(" not in text and "[" not in text and "{" not in text:
        return text.split(", ")
    out: list[str] = []
    start = 0
    stack: list[str] = []
    for m in _TOKEN.finditer(text):  # brackets and separators only: the text between them is not looked at
        tok, i = m.group(), m.start()
        if tok == ", ":
            if not stack:
                out.append(text[start:i])
                start = i + 2
        elif tok in _OPEN:
            stack.append(_OPEN[tok])
        elif not stack or stack.pop() != tok:
            raise InputError(path, f"unbalanced '{tok}' in the argument list", lineno)
    if stack:
        raise InputError(path, "unbalanced brackets in the argument list", lineno)
    out.append(text[start:])
    return out


def _arg(text: str, lineno: int, path: Path, d1: bool, metas: dict[str, NodeMeta]) -> Arg:
    if text[:1] == "%":
        if d1:
            name, meta = intern(text[1:]), None
        else:
            parts = text.split(" : ")
            if len(parts) != 3:
                raise InputError(path, f"expected '%<name> : <shape> : <dtype>' argument, got {text[:60]!r}",
                                 lineno)
            name = intern(parts[0][1:])
            tail = text[len(parts[0]) + 3 :]  # 'shape : dtype', the key the call lines' metadata uses
            meta = metas.get(tail)
            if meta is None:
                meta = metas[tail] = _meta_obj(intern(parts[1]), intern(parts[2]))
        if not name.isidentifier():
            raise InputError(path, f"expected a node name after '%' in argument {text[:60]!r}", lineno)
        return _arg_obj(name, True, meta, ())
    if not text:
        raise InputError(path, "empty argument in the argument list", lineno)
    return _arg_obj(text, False, None, _refs(text) if text[0] in "([" else ())


def _out_arg(text: str) -> Arg:
    if text[:1] == "%":
        return Arg(text[1:], True, None)
    return Arg(text, False, None, _refs(text) if text[:1] in "([" else ())


def _refs(text: str) -> tuple[str, ...]:
    """Bare node names inside a list/tuple literal: ``str(list)`` prints nodes by name, strings quoted."""
    out: list[str] = []
    for tok in text.replace("(", " ").replace(")", " ").replace("[", " ").replace("]", " ").split(","):
        tok = tok.strip()
        if tok and tok not in _NOT_REFS and _IDENT.match(tok):
            out.append(tok)
    return tuple(out)
