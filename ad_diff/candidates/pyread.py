"""Read an AutoDeploy transform module as text: which ops each registered transform names, and how.

The module is parsed with :func:`ast.parse` (a syntax tree of the text; nothing is imported, compiled or
run). For every class decorated ``@TransformRegistry.register("KEY")`` the code it reaches inside the same
file is collected: its body, its base classes defined in the file, and the module-level functions and
assignments (a backend map) those name, followed transitively. In that code every ``torch.ops.NS.NAME``
reference (``NS`` not ``aten``/``prims``; an overload such as ``.default`` is dropped) is an :class:`OpRef`
whose ``role`` says what the text shows about it:

- ``matches``: an argument of ``is_op(...)`` or part of a comparison (the transform looks for the op);
- ``pattern``: called inside a search pattern function (a piece of the pattern, not what covers it);
- ``inserts``: the target of ``graph.call_function(...)`` / ``create_node``, or called inside a replacement
  function (``replace_fn=`` of ``register_ad_pattern``);
- ``backend``: a value of a dict literal keyed by a string (``{"flashinfer": torch.ops...}``);
- ``references``: anything else (kept for the record, never used as evidence).

A name bound to a reference (``target_op = torch.ops...``) or a method returning one (``def moe_op(self):
return torch.ops...``) takes the role of its uses, followed at most :data:`MAX_HOPS` times. Search pattern
functions (``search_fn=`` of ``register_ad_pattern``) are read by
:mod:`~ad_diff.candidates.patternfn`.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from ad_diff.candidates.patternfn import PatternFn, read_pattern

MAX_HOPS = 3
"""Name bindings and method returns followed from a reference to its use."""
MAX_TRANSFORMS = 64
"""Registered classes read per module (the rest are left out, with a note)."""
STEPS_PER_NODE = 64
"""Work limit of one module: syntax-tree nodes visited, per node of its tree (plus a floor): following
names and returns revisits code, and a hostile module must not make that quadratic."""
_FLOOR = 100_000
_MATCH_CALLS = frozenset({"is_op", "is_any_op"})
_INSERT_CALLS = frozenset({"call_function"})
_REGISTER_PATTERN = "register_ad_pattern"


@dataclass(frozen=True, slots=True)
class OpRef:
    """A ``torch.ops`` reference in the code a transform reaches."""

    op: str
    """``auto_deploy::flashinfer_rms_norm``."""
    role: str
    line: int
    detail: str
    """Where the role comes from: ``backend map key 'flashinfer'``, ``graph.call_function(...)`` ..."""


@dataclass(frozen=True, slots=True)
class TransformSource:
    """What the text of one registered transform shows."""

    key: str
    cls: str
    line: int
    """Line of the ``@TransformRegistry.register`` decorator."""
    refs: tuple[OpRef, ...]
    wrappers: tuple[tuple[str, str, int, str], ...]
    """``(name, role, line, detail)`` of names imported from a ``custom_ops`` module and used like an op
    (``torch_swiglu_mlp(...)`` in a replacement): resolved against the tree's op functions later."""
    patterns: tuple[PatternFn, ...]
    """Search pattern functions the transform registers, read as text."""
    pattern_notes: tuple[str, ...] = ()
    """Search patterns registered in a form this reader does not follow (``**config``)."""


class _Exhausted(Exception):
    """The module's work limit was reached."""


class _Module:
    """Module-level tables and a parent map of one parsed file."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.steps = 0
        self.funcs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.assigns: dict[str, list[ast.stmt]] = {}
        self.imported_ops: set[str] = set()
        for st in tree.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs.setdefault(st.name, st)
            elif isinstance(st, ast.ClassDef):
                self.classes.setdefault(st.name, st)
            elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.assigns.setdefault(t.id, []).append(st)
            if isinstance(st, ast.ImportFrom) and st.module and "custom_ops" in st.module:
                self.imported_ops.update(a.asname or a.name for a in st.names)
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.steps = STEPS_PER_NODE * len(self.parent) + _FLOOR
        self.registered = {name: key for name, c in self.classes.items() if (key := registered_key(c))}

    def walk(self, node: ast.AST) -> Iterator[ast.AST]:
        """:func:`ast.walk`, counted against the work limit."""
        for n in ast.walk(node):
            self.steps -= 1
            if self.steps < 0:
                raise _Exhausted
            yield n


def registered_key(cls: ast.ClassDef) -> str | None:
    """``KEY`` of a ``@TransformRegistry.register("KEY")`` (or ``@...register("KEY")``) decorator."""
    for d in cls.decorator_list:
        if (
            isinstance(d, ast.Call)
            and _call_name(d.func) == "register"
            and d.args
            and isinstance(d.args[0], ast.Constant)
            and isinstance(d.args[0].value, str)
        ):
            return d.args[0].value
    return None


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def op_of(node: ast.AST) -> str | None:
    """``ns::name`` of a ``torch.ops.ns.name[.overload]`` attribute chain (``None`` for aten/prims)."""
    parts: list[str] = []
    cur: ast.AST = node
    while isinstance(cur, ast.Attribute) and len(parts) < 6:
        parts.append(cur.attr)
        cur = cur.value
    if not isinstance(cur, ast.Name):
        return None
    parts.append(cur.id)
    parts.reverse()
    if len(parts) not in (4, 5) or parts[:2] != ["torch", "ops"] or parts[2] in ("aten", "prims"):
        return None
    return f"{parts[2]}::{parts[3]}"


def _defs(fn: ast.AST | None) -> ast.AST:
    return fn if fn is not None else ast.Module(body=[], type_ignores=[])


class _Reader:
    """The code one transform reaches and the roles of the ops in it."""

    def __init__(self, mod: _Module, cls: ast.ClassDef) -> None:
        self.mod = mod
        self.cls = cls
        self.units = self._reach(cls)
        self._nodes = [n for u in self.units for n in mod.walk(u)]
        self.search_fns: set[str] = set()
        self.replace_fns: set[str] = set()
        self.pattern_notes: list[str] = []
        self._patterns()

    def _reach(self, cls: ast.ClassDef) -> list[ast.AST]:
        """Class, same-file bases and the module-level functions/assignments named from them."""
        units: list[ast.AST] = []
        seen: set[str] = set()
        queue: list[ast.AST] = [cls]
        others = set(self.mod.registered) - {cls.name}
        while queue:
            unit = queue.pop()
            units.append(unit)
            if isinstance(unit, ast.ClassDef):
                for b in unit.bases:
                    if isinstance(b, ast.Name) and b.id in self.mod.classes and b.id not in seen:
                        seen.add(b.id)
                        queue.append(self.mod.classes[b.id])
            for n in self.mod.walk(unit):
                if isinstance(n, ast.Name) and n.id not in seen and n.id not in others:
                    if n.id in self.mod.funcs:
                        seen.add(n.id)
                        queue.append(self.mod.funcs[n.id])
                    elif n.id in self.mod.assigns:
                        seen.add(n.id)
                        queue.extend(self.mod.assigns[n.id])
        return units

    def nodes(self) -> Iterator[ast.AST]:
        """Every syntax node of the reached code (walked once, counted once against the work limit)."""
        return iter(self._nodes)

    def _patterns(self) -> None:
        for n in self.nodes():
            if not isinstance(n, ast.Call):
                continue
            kw = {k.arg: k.value for k in n.keywords if k.arg}
            if _call_name(n.func) != _REGISTER_PATTERN and "search_fn" not in kw:
                continue
            search = kw.get("search_fn", n.args[0] if n.args else None)
            replace = kw.get("replace_fn", n.args[1] if len(n.args) > 1 else None)
            if search is None:
                self.pattern_notes.append(
                    f"line {n.lineno}: {_REGISTER_PATTERN} gets its search pattern through ** arguments; "
                    "not followed"
                )
                continue
            names = self._fn_names(search, 0)
            if not names:
                self.pattern_notes.append(
                    f"line {n.lineno}: search_fn is an expression this reader does not follow "
                    f"({ast.unparse(search)[:60]})"
                )
            self.search_fns |= names
            if replace is not None:
                self.replace_fns |= self._fn_names(replace, 0)

    def _fn_names(self, e: ast.expr, depth: int) -> set[str]:
        """Module-level functions an expression names: a function, ``partial(f, ...)``, a list of them,
        or a loop variable over such a list."""
        if depth > MAX_HOPS:
            return set()
        if isinstance(e, ast.Name):
            if e.id in self.mod.funcs:
                return {e.id}
            out: set[str] = set()
            for bound in self._bindings(e):
                out |= self._fn_names(bound, depth + 1)
            return out
        if isinstance(e, ast.Call) and _call_name(e.func) == "partial" and e.args:
            return self._fn_names(e.args[0], depth + 1)
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            return set().union(*(self._fn_names(x, depth + 1) for x in e.elts)) if e.elts else set()
        return set()

    def _scope(self, node: ast.AST) -> ast.AST:
        cur: ast.AST | None = node
        while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cur = self.mod.parent.get(cur)
        return _defs(cur)

    def _bindings(self, name: ast.Name) -> list[ast.expr]:
        """Values bound to ``name`` in its function: assignments, and the elements a ``for`` loop gives it."""
        out: list[ast.expr] = []
        for top in self.mod.assigns.get(name.id, []):
            if isinstance(top, (ast.Assign, ast.AnnAssign)) and top.value is not None:
                out.append(top.value)
        for st in self.mod.walk(self._scope(name)):
            if isinstance(st, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name.id for t in st.targets
            ):
                out.append(st.value)
            elif isinstance(st, (ast.For, ast.comprehension)):
                t, it = st.target, st.iter
                if isinstance(t, ast.Name) and t.id == name.id:
                    out.append(it)
                elif isinstance(t, ast.Tuple) and isinstance(it, (ast.List, ast.Tuple)):
                    idx = [i for i, x in enumerate(t.elts) if isinstance(x, ast.Name) and x.id == name.id]
                    for el in it.elts:
                        if idx and isinstance(el, (ast.Tuple, ast.List)) and len(el.elts) > idx[0]:
                            out.append(el.elts[idx[0]])
        return out

    def role(self, node: ast.AST, depth: int = 0) -> tuple[str, str]:
        """``(role, detail)`` of the value ``node`` from the syntax around it."""
        child, cur = node, self.mod.parent.get(node)
        while cur is not None and not isinstance(cur, ast.stmt):
            if isinstance(cur, ast.Call):
                name = _call_name(cur.func)
                if child is cur.func:
                    return self._called(cur)
                if name in _MATCH_CALLS and not (cur.args and child is cur.args[0]):
                    return "matches", f"{name}(...)"
                if name in _INSERT_CALLS and cur.args and child is cur.args[0]:
                    return "inserts", f"graph.{name}(...)"
                if name == "create_node" and len(cur.args) > 1 and child is cur.args[1]:
                    return "inserts", "graph.create_node(...)"
                if any(k.arg == "target" and k.value is child for k in cur.keywords):
                    return "inserts", f"{name}(target=...)"
            elif isinstance(cur, ast.Compare):
                return "matches", "comparison"
            elif isinstance(cur, ast.Dict):
                for k, v in zip(cur.keys, cur.values, strict=True):
                    if v is child and isinstance(k, ast.Constant) and isinstance(k.value, str):
                        return "backend", f"backend map key {k.value!r}"
            child, cur = cur, self.mod.parent.get(cur)
        if depth < MAX_HOPS and isinstance(cur, (ast.Assign, ast.AnnAssign)):
            targets = cur.targets if isinstance(cur, ast.Assign) else [cur.target]
            if isinstance(cur, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == "target" for t in targets
            ):
                return "inserts", "node.target = ..."
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            role, detail = self._uses(names, self._scope(cur), depth + 1)
            return role, f"bound to {', '.join(sorted(names))}, then {detail}" if detail else ""
        if depth < MAX_HOPS and isinstance(cur, ast.Return):
            fn = self._scope(cur)
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                role, detail = self._calls_of(fn.name, depth + 1)
                return (
                    role,
                    f"returned by {fn.name}(), then {detail}" if detail else f"returned by {fn.name}()",
                )
        return "references", ""

    def _called(self, call: ast.Call) -> tuple[str, str]:
        fn = self._scope(call)
        name = fn.name if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""
        if name in self.replace_fns:
            return "inserts", f"called in replacement {name}()"
        if name in self.search_fns:
            return "pattern", f"called in search pattern {name}()"
        return "references", "called"

    def _decisive(self, candidates: Iterator[tuple[str, str]]) -> tuple[str, str]:
        for role, detail in candidates:
            if role != "references":
                return role, detail
        return "references", ""

    def _uses(self, names: set[str], scope: ast.AST, depth: int) -> tuple[str, str]:
        """The first decisive role among the loads of ``names``: in ``scope``, or in every reached unit when
        the names are module-level (a backend map)."""
        where = [scope] if not isinstance(scope, ast.Module) else self.units
        loads = (
            n
            for u in where
            for n in self.mod.walk(u)
            if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
        )
        return self._decisive(self.role(n, depth) for n in loads)

    def _calls_of(self, fname: str, depth: int) -> tuple[str, str]:
        calls = (n for n in self.nodes() if isinstance(n, ast.Call) and _call_name(n.func) == fname)
        return self._decisive(self.role(c, depth) for c in calls)

    def read(self, key: str, line: int) -> TransformSource:
        refs: list[OpRef] = []
        wrappers: list[tuple[str, str, int, str]] = []
        seen: set[int] = set()
        for n in self.nodes():
            if id(n) in seen:
                continue
            seen.add(id(n))
            if isinstance(n, ast.Attribute) and (op := op_of(n)):
                up = self.mod.parent.get(n)
                if isinstance(up, ast.Attribute) and op_of(up) == op:
                    continue  # the outer chain (with its overload) is the reference
                role, detail = self.role(n)
                refs.append(OpRef(op, role, n.lineno, detail))
            elif isinstance(n, ast.Name) and n.id in self.mod.imported_ops and isinstance(n.ctx, ast.Load):
                role, detail = self.role(n)
                wrappers.append((n.id, role, n.lineno, detail))
        fns = sorted((self.mod.funcs[f] for f in self.search_fns), key=lambda f: (f.lineno, f.name))
        patterns = tuple(read_pattern(f, self.mod.funcs) for f in fns)
        refs.sort(key=lambda r: (r.line, r.op, r.role))
        return TransformSource(
            key,
            self.cls.name,
            line,
            tuple(dict.fromkeys(refs)),
            tuple(sorted(set(wrappers))),
            patterns,
            tuple(self.pattern_notes),
        )


def read_transforms(text: str) -> tuple[tuple[TransformSource, ...], str]:
    """The registered transforms of one module, and a note when the text could not be (fully) read."""
    try:
        with warnings.catch_warnings():
            # "invalid escape sequence" and friends: the text is read, never run, so they mean nothing here
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return (), f"not parsed as Python ({type(e).__name__}): ops are not tied to its transforms"
    out: list[TransformSource] = []
    try:
        mod = _Module(tree)
        for name, key in list(mod.registered.items())[:MAX_TRANSFORMS]:
            cls = mod.classes[name]
            line = next((d.lineno for d in cls.decorator_list), cls.lineno)
            out.append(_Reader(mod, cls).read(key, line))
    except RecursionError:
        return (), "nested too deeply to read: ops are not tied to its transforms"
    except _Exhausted:
        return tuple(out), f"work limit reached after {len(out)} transform(s): the rest are not tied to ops"
    if len(mod.registered) > MAX_TRANSFORMS:
        return tuple(out), f"only the first {MAX_TRANSFORMS} registered classes read"
    return tuple(out), ""
