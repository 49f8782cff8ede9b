"""Graph dump writer implementing FORMATS.md section 2 (D1, D2, D3), written from the spec.

D3 (``utils/graph_writer.py`` style): header with ``# GraphModules found``, one section per GraphModule
of ``named_modules()``. D2: shape+dtype SSA lines of the root GraphModule only. D1: dtype only.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

from torch import fx, nn

_RULE = "=" * 80
_DUMPED_OPS = ("placeholder", "call_function", "call_method", "call_module", "output")


def graph_modules(mod: nn.Module) -> tuple[tuple[str, fx.GraphModule], ...]:
    """``(name, gm)`` for every GraphModule in ``mod`` (root named ``(root)``), in ``named_modules`` order."""
    return tuple((name or "(root)", m) for name, m in mod.named_modules() if isinstance(m, fx.GraphModule))


def _shape(v: Any) -> str:
    if not hasattr(v, "shape"):
        return "?"
    dims = list(v.shape)
    return "x".join(str(d) for d in dims) if dims else "scalar"


def _dtype(v: Any) -> str:
    return str(v.dtype) if hasattr(v, "dtype") else type(v).__name__


def _out(node: fx.Node) -> str:
    if "val" not in node.meta:
        return "? : N/A"
    v = node.meta["val"]
    if isinstance(v, (tuple, list)):
        shapes = ", ".join("?" if e is None else _shape(e) for e in v)
        dtypes = ", ".join("None" if e is None else _dtype(e) for e in v)
        return f"({shapes}) : ({dtypes})"
    return f"{_shape(v)} : {_dtype(v)}"


def _arg(a: Any, *, with_meta: bool) -> str:
    if hasattr(a, "name"):
        if not with_meta:
            return f"%{a.name}"
        meta = getattr(a, "meta", {})
        if "val" in meta:
            return f"%{a.name} : {_shape(meta['val'])} : {_dtype(meta['val'])}"
        return f"%{a.name} : ? : unknown"
    return str(a)


def _target(node: fx.Node) -> str:
    text = str(node.target)
    if " at 0x" in text:  # a Python function: its address differs per process; fixtures must not
        name = getattr(node.target, "__qualname__", text)
        text = f"<function {name} at 0x7f{zlib.crc32(name.encode()):010x}>"
    return text


def ssa_lines(gm: fx.GraphModule, *, with_shapes: bool = True) -> list[str]:
    """SSA lines (D2/D3 grammar; D1 grammar when ``with_shapes`` is false) in ``graph.nodes`` order."""
    lines = []
    for node in gm.graph.nodes:
        if node.op not in _DUMPED_OPS:
            continue  # get_attr nodes are not written
        if node.op == "placeholder":
            v = node.meta.get("val")
            if with_shapes:
                lines.append(f"%{node.name} : {_shape(v)} : {_dtype(v)}" if "val" in node.meta
                             else f"%{node.name} : ? : unknown")
            else:
                lines.append(f"%{node.name} : {_dtype(v) if 'val' in node.meta else 'unknown'}")
        elif node.op == "output":
            outs = node.args[0] if isinstance(node.args[0], (tuple, list)) else (node.args[0],)
            lines.append("output " + ", ".join(f"%{o.name}" if hasattr(o, "name") else str(o) for o in outs))
        else:
            args = ", ".join(_arg(a, with_meta=with_shapes) for a in node.args)
            if with_shapes:
                out = _out(node)
            else:
                v = node.meta.get("val")
                out = "N/A" if "val" not in node.meta else (
                    "(" + ", ".join(_dtype(e) for e in v) + ")" if isinstance(v, (tuple, list)) else _dtype(v))
            lines.append(f"%{node.name} = {_target(node)}({args}) : {out}")
    return lines


def render_d3(stage: str, key: str, sections: tuple[tuple[str, fx.GraphModule], ...]) -> str:
    """A D3 file: header, then one ``# GraphModule:`` section per GraphModule."""
    out = [f"# Transform: {key}", f"# Stage: {stage}", f"# GraphModules found: {len(sections)}", "", ""]
    for i, (name, gm) in enumerate(sections):
        if i:
            out.append("")
        out += [_RULE, f"# GraphModule: {name}", _RULE, ""]
        out += ssa_lines(gm)
    return "\n".join(out) + "\n"


def render_root_only(stage: str, key: str, mod: nn.Module, *, with_shapes: bool) -> str | None:
    """A D2 (``with_shapes``) or D1 file, or ``None`` when the root is not a GraphModule (no file)."""
    if not isinstance(mod, fx.GraphModule):
        return None
    return "\n".join([f"# Transform: {key}", f"# Stage: {stage}", "", *ssa_lines(mod, with_shapes=with_shapes)]) + "\n"


def render_all(stage: str, key: str, mod: nn.Module) -> dict[str, str | None]:
    """Render the graph after a transform in every dump format: ``{"D1": ..., "D2": ..., "D3": ...}``."""
    sections = graph_modules(mod)
    return {
        "D3": render_d3(stage, key, sections) if sections else None,
        "D2": render_root_only(stage, key, mod, with_shapes=True),
        "D1": render_root_only(stage, key, mod, with_shapes=False),
    }


#: How a dump's output line is printed: AD's graph writer (``output %a, %b``), the form one upstream skill
#: documents (``output(%a, %b)``) and that form with a space (FORMATS.md 7.1).
OUTPUT_FORMS = {"bare": "output {}", "parens": "output({})", "spaced": "output ({})"}


def print_output(text: str, form: str) -> str:
    """``text`` (a dump in any D format) with its output lines printed in ``form`` of :data:`OUTPUT_FORMS`."""
    fmt = OUTPUT_FORMS[form]
    return re.sub(r"^output (.*)$", lambda m: fmt.format(m.group(1)), text, flags=re.M)


def file_names(stages_keys: list[tuple[str, str]]) -> list[str]:
    """``NNN_<stage>_<key>.txt`` names for files written in this order (counter starts at 1)."""
    return [f"{i:03d}_{s}_{k}.txt" for i, (s, k) in enumerate(stages_keys, start=1)]
