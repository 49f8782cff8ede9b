"""Read a search pattern function (``search_fn=`` of ``register_ad_pattern``) as text: its torch ops.

AutoDeploy traces the function to build the subgraph its matcher looks for. This module reads the same text
without running it and lists the ops a trace would record, so the report can put them beside a graph's
instance. It reads only what it can read with confidence:

- statements: the docstring, ``NAME = expr`` (also ``NAME: T = expr`` and tuple unpacking of sizes),
  ``NAME op= expr``, ``return expr``;
- expressions: names, literals, ``+ - * / ** @`` and unary ``-``, ``torch.NAME(...)``,
  ``torch.nn.functional.NAME`` / ``F.NAME``, ``torch.ops.aten.NAME[.overload](...)``,
  ``torch.ops.NS.NAME(...)``, tensor methods from the op tables of :mod:`~ad_diff.candidates.ops`,
  slicing, ``.dtype`` / ``.shape`` / ``.device`` (sizes, never ops), ``torch.float32`` and friends, and calls
  of other functions of the same file (inlined, :data:`MAX_INLINE` deep).

Anything else (a branch, a loop, a call into another module) makes the function *unreadable*: the reason is
recorded and nothing is guessed.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from ad_diff.candidates.formula import Expr, leaf, render_all
from ad_diff.candidates.ops import ELEMENTWISE, GEMM, LAYOUT, REDUCTION, canonical

MAX_INLINE = 3
"""Same-file helper functions inlined into one another."""
MAX_OPS = 400
"""Ops read from one pattern function before it counts as unreadable."""

_BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.Pow: "pow",
    ast.MatMult: "matmul",
    ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder",
}
_META = frozenset({"dtype", "shape", "device", "ndim", "is_cuda"})
_METHODS = ELEMENTWISE | REDUCTION | LAYOUT | GEMM | {"topk", "index_select", "gather", "scatter", "one_hot"}
_FUNCTIONAL = ("torch.nn.functional.", "nn.functional.", "F.")
_SYM = "<size>"


@dataclass(frozen=True, slots=True)
class PatternFn:
    """One search pattern function as read from the text."""

    name: str
    line: int
    readable: bool
    ops: tuple[str, ...] = ()
    """Canonical op names in source order (``pow``, ``rsqrt``, ``auto_deploy::torch_linear_simple``)."""
    formula: str = ""
    reason: str = ""
    """Why the function is not readable (empty when it is)."""


class Unreadable(Exception):
    """The text holds a construct this reader does not follow."""


def _dotted(e: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if isinstance(e, ast.Name):
        parts.append(e.id)
        return ".".join(reversed(parts))
    return ""


class _Trace:
    """Symbolic evaluation of a pattern function's statements."""

    def __init__(self, funcs: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> None:
        self.funcs = funcs
        self.ops: list[str] = []
        self.scalars: set[str] = {_SYM}
        """Leaf texts that are no tensors: sizes, literals, names from outside the function."""

    def scalar(self, text: str) -> Expr:
        self.scalars.add(text)
        return leaf(text)

    def record(self, op: str, args: list[Expr]) -> Expr:
        if len(self.ops) >= MAX_OPS:
            raise Unreadable(f"more than {MAX_OPS} ops")
        self.ops.append(op)
        if op not in ("add", "sub", "mul", "div", "pow", "matmul"):
            # dims, dtypes and other literal arguments of named ops: the graph formula drops them too
            args = [a for a in args if a.op or a.text not in self.scalars]
        return Expr(op, "", tuple(args))

    def run(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, bound: dict[str, Expr], depth: int
    ) -> list[Expr]:
        env = dict(bound)
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # docstring
        for st in body:
            if isinstance(st, ast.Return):
                if st.value is None:
                    raise Unreadable(f"line {st.lineno}: returns nothing")
                v = st.value
                return (
                    [self.eval(x, env, depth) for x in v.elts]
                    if isinstance(v, ast.Tuple)
                    else [self.eval(v, env, depth)]
                )
            if isinstance(st, ast.Pass):
                continue
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                self.assign(st.targets[0], st.value, env, depth)
            elif isinstance(st, ast.AnnAssign) and st.value is not None:
                self.assign(st.target, st.value, env, depth)
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and type(st.op) in _BINOPS:
                cur = env.get(st.target.id, leaf(st.target.id))
                env[st.target.id] = self.binop(_BINOPS[type(st.op)], cur, self.eval(st.value, env, depth))
            else:
                raise Unreadable(f"line {st.lineno}: a {type(st).__name__} statement")
        raise Unreadable("no return statement")

    def assign(self, target: ast.expr, value: ast.expr, env: dict[str, Expr], depth: int) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = self.eval(value, env, depth)
            return
        if isinstance(target, ast.Tuple) and all(isinstance(t, ast.Name) for t in target.elts):
            if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                vals = [self.eval(v, env, depth) for v in value.elts]
                for t, v in zip(target.elts, vals, strict=True):
                    env[t.id] = v  # type: ignore[attr-defined]
                return
            if self.eval(value, env, depth).text == _SYM:  # b, h, s, d = q.shape
                for t in target.elts:
                    env[t.id] = leaf(_SYM)  # type: ignore[attr-defined]
                return
        raise Unreadable(f"line {target.lineno}: an assignment to {ast.unparse(target)[:40]}")

    def binop(self, op: str, a: Expr, b: Expr) -> Expr:
        if a.text == _SYM or b.text == _SYM:
            return leaf(_SYM)  # size arithmetic (x.shape[-1] // 2) is no op of the graph
        return self.record(op, [a, b])

    def eval(self, e: ast.expr, env: dict[str, Expr], depth: int) -> Expr:  # noqa: C901 - one case per node
        if isinstance(e, ast.Name):
            return env[e.id] if e.id in env else self.scalar(e.id)
        if isinstance(e, ast.Constant):
            return self.scalar(repr(e.value) if isinstance(e.value, str) else str(e.value))
        if isinstance(e, ast.BinOp) and type(e.op) in _BINOPS:
            return self.binop(
                _BINOPS[type(e.op)], self.eval(e.left, env, depth), self.eval(e.right, env, depth)
            )
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            v = self.eval(e.operand, env, depth)
            if isinstance(e.op, ast.UAdd) or v.text == _SYM:
                return v
            if not v.op and v.text in self.scalars:
                return self.scalar(f"-{v.text}")
            return self.record("neg", [v])
        if isinstance(e, ast.Attribute):
            if e.attr in _META:
                self.eval(e.value, env, depth)
                return leaf(_SYM)
            if _dotted(e).startswith("torch.") and e.attr.startswith(("float", "bfloat", "int", "bool")):
                return self.scalar(e.attr)  # torch.float32
            if e.attr in ("T", "mT"):
                return self.record("transpose", [self.eval(e.value, env, depth)])
        if isinstance(e, ast.Subscript):
            base = self.eval(e.value, env, depth)
            self.eval(e.slice, env, depth)
            if base.text == _SYM:
                return leaf(_SYM)
            slicing = isinstance(e.slice, ast.Slice) or (
                isinstance(e.slice, ast.Tuple) and any(isinstance(x, ast.Slice) for x in e.slice.elts)
            )
            return self.record("slice" if slicing else "index", [base])
        if isinstance(e, (ast.Tuple, ast.List)):
            vals = [self.eval(x, env, depth) for x in e.elts]
            return Expr("", "(" + ", ".join(v.text or v.op for v in vals) + ")", tuple(vals))
        if isinstance(e, ast.Slice):
            for x in (e.lower, e.upper, e.step):
                if x is not None:
                    self.eval(x, env, depth)
            return leaf(_SYM)
        if isinstance(e, ast.Starred):
            return self.eval(e.value, env, depth)
        if isinstance(e, ast.Call):
            return self.call(e, env, depth)
        raise Unreadable(f"line {getattr(e, 'lineno', '?')}: a {type(e).__name__} expression")

    def call(self, e: ast.Call, env: dict[str, Expr], depth: int) -> Expr:
        dotted = _dotted(e.func)
        kwargs = [k.value for k in e.keywords]
        if isinstance(e.func, ast.Name) and e.func.id in self.funcs:
            return self.inline(e, env, depth)
        op = self.op_name(e.func, dotted)
        if op is None:
            raise Unreadable(
                f"line {e.lineno}: calls {dotted or ast.unparse(e.func)[:40]}, which is not a torch op "
                "or a function of this file"
            )
        args = []
        if isinstance(e.func, ast.Attribute) and not dotted.startswith(("torch.", *_FUNCTIONAL)):
            args.append(self.eval(e.func.value, env, depth))  # the tensor of a method call
        args += [self.eval(a, env, depth) for a in e.args]
        for k in kwargs:
            self.eval(k, env, depth)
        operands: list[Expr] = []
        for a in args:
            operands.extend(a.args if not a.op and a.args else [a])  # cat((a, b)) reads a and b
        if operands and all(not a.op and a.text == _SYM for a in operands):
            return leaf(_SYM)  # arithmetic on sizes only
        return self.record(op, operands)

    def op_name(self, func: ast.expr, dotted: str) -> str | None:
        parts = dotted.split(".") if dotted else []
        if parts[:3] == ["torch", "ops", "aten"] and len(parts) in (4, 5):
            return canonical(parts[3])
        if parts[:2] == ["torch", "ops"] and len(parts) in (4, 5):
            return canonical(parts[3], parts[2])
        for prefix in _FUNCTIONAL:
            if dotted.startswith(prefix) and dotted.count(".") == prefix.count("."):
                return canonical(dotted[len(prefix) :])
        if len(parts) == 2 and parts[0] == "torch":
            return canonical(parts[1])
        if isinstance(func, ast.Attribute) and func.attr in _METHODS and not dotted.startswith("torch."):
            return canonical(func.attr)
        return None

    def inline(self, e: ast.Call, env: dict[str, Expr], depth: int) -> Expr:
        assert isinstance(e.func, ast.Name)
        fn = self.funcs[e.func.id]
        if depth >= MAX_INLINE:
            raise Unreadable(f"line {e.lineno}: helpers nested more than {MAX_INLINE} deep")
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        bound: dict[str, Expr] = {}
        for p, a in zip(params, e.args, strict=False):
            bound[p] = self.eval(a, env, depth)
        for k in e.keywords:
            if k.arg:
                bound[k.arg] = self.eval(k.value, env, depth)
        outs = self.run(fn, bound, depth + 1)
        return outs[0] if len(outs) == 1 else Expr("", "(…)", tuple(outs))


def read_pattern(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, funcs: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef]
) -> PatternFn:
    """Read one pattern function; ``funcs`` are the module-level functions of its file (helpers)."""
    trace = _Trace(funcs)
    args = fn.args
    params = args.posonlyargs + args.args + args.kwonlyargs
    defaults = dict(
        zip([a.arg for a in args.posonlyargs + args.args][::-1], args.defaults[::-1], strict=False)
    )
    bound = {}
    for a in params:
        ann = ast.unparse(a.annotation) if a.annotation is not None else ""
        # eps: float / unsqueeze_dim=1: scalars, kept in arithmetic and dropped as op arguments
        is_scalar = ann in ("float", "int", "bool") or isinstance(defaults.get(a.arg), ast.Constant)
        bound[a.arg] = trace.scalar(a.arg) if is_scalar else leaf(a.arg)
    try:
        roots = trace.run(fn, bound, 0)
    except Unreadable as why:
        return PatternFn(fn.name, fn.lineno, False, reason=str(why))
    except RecursionError:
        return PatternFn(fn.name, fn.lineno, False, reason="nested too deeply")
    return PatternFn(fn.name, fn.lineno, True, tuple(trace.ops), render_all(roots))
