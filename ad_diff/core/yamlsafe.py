"""Bounded loaders for untrusted YAML and JSON: AD configs, ad-diff's own config, expected changes, snapshots.

``yaml.safe_load`` runs no code, but it is not bounded: 600 bytes of nested aliases expand to billions of
nodes in whatever walks the result, deep nesting overflows the recursion of the composer and of every
consumer, duplicate keys silently keep the last value, and integers beyond Python's 4,300-digit limit
raise ``ValueError`` where they are first printed. These loaders refuse all of that with an
:class:`~ad_diff.errors.InputError` naming the file and line:

* nesting deeper than :data:`MAX_DEPTH` levels (aliases count at the depth they are used);
* aliases that add more than :data:`MAX_ALIAS_NODES` nodes to the document, or more text than
  :func:`alias_bytes` allows (what a reader of the loaded data pays is the expanded text: 1,350 aliases of
  one 200 KB string are few nodes and 270 MB to walk);
* recursive aliases, duplicate keys, keys that are not strings (``1:``, ``null:``, ``!!binary``);
* integers longer than :data:`MAX_INT_DIGITS` digits;
* tags that are not plain JSON-like data (``!!binary``, ``!!set``, ``!!omap``, ``!!pairs``, custom tags).

The result holds only ``dict`` (string keys), ``list``, ``str``, ``int``, ``float``, ``bool`` and ``None``;
YAML timestamps stay the strings they were written as. Scanning and parsing run in libyaml when it is
installed; composition runs here so the limits apply as the document is built.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent, CollectionStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from ad_diff.core import jsonsafe
from ad_diff.errors import InputError

MAX_DEPTH = 64
"""Deepest nesting accepted (an AD config nests about 5 levels)."""
MAX_ALIAS_NODES = 100_000
"""Nodes that aliases may add beyond the ones written out in the document."""
MAX_INT_DIGITS = 4300
"""Longest integer accepted (Python's own int/str conversion limit)."""
ALIAS_BYTES_FLOOR = 1 << 20
"""Characters of scalar text that aliases may add to any document, however small."""
ALIAS_BYTES_RATIO = 4
"""And per character of the document: an anchor reused a few times is how configs share a block."""


def alias_bytes(size: int) -> int:
    """Most characters of scalar text that aliases may add to a document of ``size`` characters."""
    return max(ALIAS_BYTES_FLOOR, ALIAS_BYTES_RATIO * size)

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_REFUSED_TAGS = {
    "tag:yaml.org,2002:binary": "!!binary",
    "tag:yaml.org,2002:set": "!!set",
    "tag:yaml.org,2002:omap": "!!omap",
    "tag:yaml.org,2002:pairs": "!!pairs",
}

try:  # libyaml scans and parses ~10x faster; composition (where the limits are) stays in Python
    from yaml.cyaml import CParser as _Parser  # type: ignore[attr-defined]  # C extension, not in stubs

    _PARSER_BASES: tuple[Any, ...] = (_Parser,)
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    _PARSER_BASES = (Reader, Scanner, Parser)


class _Refused(yaml.MarkedYAMLError):
    """A limit of this module was hit at ``problem_mark``."""


def _refuse(mark: Any, problem: str) -> _Refused:
    return _Refused(problem=problem, problem_mark=mark)


class _BoundedConstructor(SafeConstructor):
    """``SafeConstructor`` producing JSON-like data only."""

    def construct_yaml_int(self, node: ScalarNode) -> int:
        digits = sum(ch.isdigit() for ch in node.value)
        if digits > MAX_INT_DIGITS:
            raise _refuse(node.start_mark, f"integer of {digits:,} digits is too long "
                                           f"(limit {MAX_INT_DIGITS:,})")
        value: int = super().construct_yaml_int(node)
        # sexagesimal ints (1:2:3, YAML 1.1) grow by a factor 60 per group: bound the result, not the text
        if value.bit_length() > MAX_INT_DIGITS * 3.33:
            raise _refuse(node.start_mark, f"integer is too large (more than {MAX_INT_DIGITS:,} digits)")
        return value

    def construct_timestamp_as_text(self, node: ScalarNode) -> str:
        return str(self.construct_scalar(node))

    def construct_refused(self, node: Node) -> None:
        name = _REFUSED_TAGS.get(node.tag) or node.tag.replace("tag:yaml.org,2002:", "!!")
        raise _refuse(node.start_mark, f"unsupported YAML tag {name}; expected plain values (strings, "
                                       "numbers, booleans, null, lists and mappings)")


_add: Any = _BoundedConstructor.add_constructor  # the stubs type the callback against SafeConstructor
_add("tag:yaml.org,2002:int", _BoundedConstructor.construct_yaml_int)
_add("tag:yaml.org,2002:timestamp", _BoundedConstructor.construct_timestamp_as_text)
for _tag in _REFUSED_TAGS:
    _add(_tag, _BoundedConstructor.construct_refused)
_add(None, _BoundedConstructor.construct_refused)


class _BoundedLoader(Composer, *_PARSER_BASES, _BoundedConstructor, Resolver):  # type: ignore[misc]
    """A safe loader whose composer enforces depth, recursion, key and duplicate rules."""

    def __init__(self, text: str) -> None:
        first, *rest = _PARSER_BASES
        first.__init__(self, text)  # CParser, or Reader: both take the stream
        for base in rest:  # pragma: no cover - Scanner and Parser of the pure-Python build
            base.__init__(self)
        Composer.__init__(self)
        _BoundedConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0
        self._open: set[str] = set()

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            if event.anchor in self._open:
                raise _refuse(event.start_mark, f"alias *{event.anchor} refers to a node that contains it "
                                                "(a recursive document)")
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _refuse(event.start_mark, f"nested more than {MAX_DEPTH} levels deep")
        anchor = event.anchor if isinstance(event, CollectionStartEvent) else None
        if anchor is not None:
            self._open.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
            if anchor is not None:
                self._open.discard(anchor)
        return node

    def compose_mapping_node(self, anchor: Any) -> MappingNode:  # the stubs misdeclare ``anchor``
        node: MappingNode = super().compose_mapping_node(anchor)
        seen: dict[str, int] = {}
        for key, _ in node.value:
            if key.tag == _MERGE:
                continue
            if not isinstance(key, ScalarNode) or key.tag != _STR:
                raise _refuse(key.start_mark, f"expected a string as mapping key, got {_describe(key)} "
                                              "(quote it if it is a name)")
            if key.value in seen:
                raise _refuse(key.start_mark, f"duplicate key {_short(key.value)!r} (first at line "
                                              f"{seen[key.value]})")
            seen[key.value] = key.start_mark.line + 1
        return node


def _describe(key: Node) -> str:
    if isinstance(key, ScalarNode):
        kind = key.tag.rsplit(":", 1)[-1] if key.tag.startswith("tag:yaml.org,2002:") else key.tag
        return f"{kind} {_short(key.value)!r}" if key.value else kind
    return "a list" if isinstance(key, SequenceNode) else "a mapping"


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, SequenceNode):
        yield from node.value
    elif isinstance(node, MappingNode):
        for k, v in node.value:
            yield k
            yield v


def _check_expansion(root: Node, size: int) -> None:
    """Refuse documents whose aliases nest too deep or expand too far, in nodes or in text (counted once per
    distinct node; ``size``: the document's length, which bounds the text written out)."""
    memo: dict[int, tuple[int, int, int]] = {}  # id(node) -> (expanded nodes, depth below it, text)
    text_cap = size + alias_bytes(size)

    def visit(node: Node, level: int) -> tuple[int, int, int]:
        got = memo.get(id(node))
        if got is None:
            nodes, depth = 1, 0
            text = len(node.value) if isinstance(node, ScalarNode) else 0
            for child in _children(node):
                if level + 1 > MAX_DEPTH:
                    raise _refuse(child.start_mark, f"nested more than {MAX_DEPTH} levels deep "
                                                    "(through aliases)")
                n, d, t = visit(child, level + 1)
                nodes, depth, text = nodes + n, max(depth, d + 1), text + t
                if nodes > len(memo) + MAX_ALIAS_NODES:
                    raise _refuse(node.start_mark, f"aliases expand the document beyond {MAX_ALIAS_NODES:,} "
                                                   "extra nodes (an alias bomb?)")
                if text > text_cap:
                    raise _refuse(node.start_mark, f"aliases expand the document to more than {text_cap:,} "
                                                   f"characters of text (it has {size:,}; an alias bomb?)")
            got = memo[id(node)] = (nodes, depth, text)
        elif level + got[1] > MAX_DEPTH:
            raise _refuse(node.start_mark, f"nested more than {MAX_DEPTH} levels deep (through aliases)")
        return got

    visit(root, 0)


def load_yaml_node(text: str, path: Path | str) -> tuple[Any, Node | None]:
    """Load one YAML document within the limits; return the data and its composed node (for line numbers).

    An empty document is ``(None, None)``. Raises :class:`InputError` naming ``path`` and the line.
    """
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        _check_expansion(node, len(text))
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = "" if isinstance(e, _Refused) else "invalid YAML: "
        line = mark.line + 1 if mark else None
        raise InputError(path, f"{what}{e.problem or e.context}", line=line) from None
    except yaml.YAMLError as e:
        raise InputError(path, f"invalid YAML: {e}") from None
    finally:
        loader.dispose()
    return data, node


def load_yaml(text: str, path: Path | str) -> Any:
    """Load one YAML document within the limits (see the module docstring); ``None`` when it is empty."""
    return load_yaml_node(text, path)[0]


def key_lines(node: Node | None) -> dict[tuple[str, ...], int]:
    """The 1-based line of every mapping key under ``node``, by key path (call after loading: merge keys
    ``<<`` are then already folded into their mappings)."""
    out: dict[tuple[str, ...], int] = {}
    stack: list[tuple[Node, tuple[str, ...]]] = [(node, ())] if node is not None else []
    while stack:
        n, prefix = stack.pop()
        if isinstance(n, MappingNode):
            for k, v in n.value:
                if isinstance(k, ScalarNode) and k.tag != _MERGE:
                    path = (*prefix, str(k.value))
                    out[path] = k.start_mark.line + 1  # a later key overrides a merged one, as in the data
                    stack.append((v, path))
    return out


def load_json(text: str, path: Path | str) -> Any:
    """Load a JSON layer with the YAML loader's limits (depth, integer digits, duplicate keys refused),
    through the one JSON reader (:mod:`ad_diff.core.jsonsafe`)."""
    return jsonsafe.load_json(text, path, depth=MAX_DEPTH, digits=MAX_INT_DIGITS)


__all__ = ["ALIAS_BYTES_FLOOR", "ALIAS_BYTES_RATIO", "MAX_ALIAS_NODES", "MAX_DEPTH", "MAX_INT_DIGITS",
           "alias_bytes", "key_lines", "load_json", "load_yaml", "load_yaml_node"]
