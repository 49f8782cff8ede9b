"""The package layout holds: no import cycles between modules, and imports only run down the layers.

Only module-level imports count (an import inside a function runs late, on purpose, to keep start-up light)
and ``if TYPE_CHECKING:`` blocks are left out: neither can form a cycle at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "ad_diff"

#: Folder (or root module) -> the top-level parts of ad_diff it must not import at module level.
FORBIDDEN = {
    "core": {"kinds", "explain", "report", "workflows", "cli", "pipeline", "settings", "result", "gate"},
    "kinds": {"report", "workflows", "cli", "pipeline", "gate"},
    "explain": {"report", "workflows", "cli", "pipeline"},  # it asks the gate which groups gate
    "report": {"workflows", "cli", "pipeline"},
    "workflows": {"cli"},
}


def _name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_level_imports(path: Path, modules: set[str]) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    me = _name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        stmts = [node, *ast.walk(node)] if isinstance(node, (ast.If, ast.Try)) else [node]
        for st in stmts:
            if isinstance(st, ast.Import):
                out.update(a.name for a in st.names if a.name in modules)
            elif isinstance(st, ast.ImportFrom):
                base = st.module or ""
                if st.level:
                    up = package.split(".")[: len(package.split(".")) - (st.level - 1)]
                    base = ".".join([*up, base] if base else up)
                for a in st.names:  # `from pkg import mod` imports the module pkg.mod
                    out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
    return {m for m in out if m in modules and m != me}


def _graph() -> dict[str, set[str]]:
    files = {_name(p): p for p in PKG.rglob("*.py")}
    modules = set(files)
    return {m: _module_level_imports(p, modules) for m, p in files.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _without_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # A package's __init__ re-exporting its modules is not a cycle with them: Python imports the package
    # first and the module then finds it initialised. Edges from a module into its own package's __init__
    # are dropped for that reason.
    return {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}


def test_no_import_cycles() -> None:
    assert _cycles(_without_packages(_graph())) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_run_down_the_layers(layer: str) -> None:
    graph = _graph()
    bad = sorted(
        (m, d)
        for m, deps in graph.items()
        if m.split(".")[1:2] == [layer]
        for d in deps
        if set(d.split(".")[1:2]) & FORBIDDEN[layer]
    )
    assert bad == []


def test_package_root_stays_small() -> None:
    """At most 12 modules at the package root; everything else lives in its folder."""
    root = [p.name for p in PKG.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(root) <= 12, sorted(root)


def test_the_import_reader_sees_imports() -> None:
    """The graph above is read from the code: known module-level imports show up in it."""
    graph = _graph()
    assert "ad_diff.core.model" in graph["ad_diff.gate"]
    assert "ad_diff.gate" in graph["ad_diff.explain.groups"]
