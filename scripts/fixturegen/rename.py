"""Node names as another torch version writes them: the same graph, every node renamed consistently.

A torch upgrade changes how export names nodes: ``aten_view_default_3`` for ``view_2`` (the op overload in the
name, counters numbered from another start), ``arg0_1``-style names for the graph inputs. The renaming is a
function of the node's own name and op, so a node keeps its (new) name in every dump of the run.
"""

from __future__ import annotations

import re

_DEF = re.compile(r"^%(\w+)(?: = ([^(]+)\()?", re.M)
_REF = re.compile(r"%(\w+)")
_LIST = re.compile(r"\[[^\[\]]*\]")
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_COUNTER = re.compile(r"^(.*?)(?:_(\d+))?$")


def new_name(name: str, target: str | None) -> str:
    """The name another torch gives node ``name`` (``target`` None: a graph input)."""
    if target is None:
        return f"l_{name}_"
    if not target.startswith("aten."):
        return name
    m = _COUNTER.match(name)
    assert m is not None
    n = int(m.group(2)) + 1 if m.group(2) else 0
    op = target.replace(".", "_").lower()
    return f"{op}_{n}" if n else op


def torch_upgrade(text: str) -> str:
    """A dump text with every node renamed by :func:`new_name` (definitions, ``%`` references, list
    literals)."""
    names = {m.group(1): new_name(m.group(1), m.group(2)) for m in _DEF.finditer(text)}
    text = _REF.sub(lambda m: "%" + names.get(m.group(1), m.group(1)), text)
    return _LIST.sub(lambda m: _WORD.sub(lambda w: names.get(w.group(0), w.group(0)), m.group(0)), text)
