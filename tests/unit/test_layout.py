"""The package layout holds: kinds are independent, there is no import cycle, and imports run down the layers.

Every import statement counts, wherever it sits (``ast.walk``: module level, inside functions, under ``if`` or
``try``): a function-level import runs late but it still ties two modules together, and hiding a cycle in a
function is exactly what this test exists to catch. Imports under ``if TYPE_CHECKING:`` never run, so they
cannot fail at import time, but two modules that name each other's types still depend on each other: the
cycle check is run twice, once on the imports that run and once with the annotations' imports added (a
cycle only through annotations fails too). The layer check leaves annotations out; the kind checks read
them.

The layers, lowest first (a module may import its own layer and the layers below, never one above):

0. ``ad_diff`` (the package: its version), ``errors`` and ``release`` (where ad-diff lives, its tags)
1. ``core``: the finding model, rules, the run's log model, safe file access, shared tables (no ad-diff
   module above it)
2. ``settings``, ``progress``: the options of one comparison and its progress callback
3. ``discover``: finding a run's artifacts (logs, the dump listing, a snapshot baseline)
4. ``kinds``: one folder per input kind; no kind imports another (what two kinds share lives in ``core``
   or ``discover``, or arrives through :class:`ad_diff.kinds.base.Context`)
5. ``explain``, ``gate``: the passes over all findings and the verdict (explain asks the gate which groups
   gate)
6. ``result``: the returned value of a comparison
7. ``pipeline``, ``report``, ``catalog``: the flow that builds a result, the renderers that read it, the
   rule catalogue of every layer
8. ``workflows``, ``candidates``, ``history``, ``recording``: the products built on comparisons; ``formats``:
   the one registry of output formats, every report of every product
9. ``cli``, ``__main__``
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "ad_diff"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("", "errors", "release"),
    ("core",),
    ("settings", "progress"),
    ("discover",),
    ("kinds",),
    ("explain", "gate"),
    ("result",),
    ("pipeline", "report", "catalog"),
    ("workflows", "candidates", "history", "recording", "formats"),
    ("cli", "__main__"),
)
"""Top-level parts of ad_diff, lowest layer first (see the module docstring); ``""``: the package itself."""

KIND_FORBIDDEN = frozenset({"candidates", "history", "report", "cli", "workflows", "pipeline"})
"""Parts a kind never imports, not even for an annotation."""


@dataclass(frozen=True)
class Import:
    """One imported module of one import statement."""

    source: str
    target: str
    line: int
    function: bool
    """Inside a function (runs when the function is called)."""
    typing: bool
    """Under ``if TYPE_CHECKING:`` (never runs)."""


def _name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _ids(nodes: list[ast.AST]) -> set[int]:
    return {id(s) for n in nodes for s in ast.walk(n)}


def read_imports(root: Path) -> tuple[set[str], list[Import]]:
    """Every module of the package at ``root`` and every import of one of them, from the code."""
    files = {_name(p, root): p for p in root.rglob("*.py")}
    modules = set(files)
    out: list[Import] = []
    for me, path in sorted(files.items()):
        tree = ast.parse(path.read_text("utf-8"))
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        typing = _ids([n for n in ast.walk(tree)
                       if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)])
        in_fn = _ids([n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))])
        for st in ast.walk(tree):
            targets: list[str] = []
            if isinstance(st, ast.Import):
                targets = [a.name for a in st.names]
            elif isinstance(st, ast.ImportFrom):
                base = st.module or ""
                if st.level:
                    up = package.split(".")[: len(package.split(".")) - (st.level - 1)]
                    base = ".".join([*up, base] if base else up)
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` the module mod
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in st.names]
            for t in sorted(set(targets)):
                if t in modules and t != me:
                    out.append(Import(me, t, st.lineno, id(st) in in_fn, id(st) in typing))
    return modules, out


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _kind(module: str, kinds_part: str = "kinds") -> str | None:
    """The kind folder a module belongs to (``kinds/<kind>/...``); ``None`` for the registry and the base."""
    parts = module.split(".")
    return parts[2] if len(parts) >= 3 and parts[1] == kinds_part and parts[2] != "base" else None


def kind_violations(imports: list[Import], kinds_part: str = "kinds") -> list[str]:
    """Imports from one kind into another, from the kinds' base into a kind, or from a kind into a product
    or the CLI; annotations count too. The registry (``kinds/__init__``) lists every kind: it may."""
    bad = []
    for i in imports:
        if _part(i.source) != kinds_part or i.source.count(".") < 2:
            continue
        mine, theirs = _kind(i.source, kinds_part), _kind(i.target, kinds_part)
        if theirs is not None and mine != theirs:
            bad.append(f"{i.source}:{i.line} -> {i.target} ({mine or 'the base'} imports kind {theirs})")
        elif _part(i.target) in KIND_FORBIDDEN:
            bad.append(f"{i.source}:{i.line} -> {i.target} (a kind imports {_part(i.target)})")
    return bad


def import_graph(modules: set[str], imports: list[Import], annotations: bool = False) -> dict[str, set[str]]:
    """Module -> the modules it imports when it runs (function-level imports included; the imports of
    annotations only with ``annotations``).

    An edge from a module into its own package (``a.b.c`` -> ``a.b``) is left out: Python initialises the
    package before the module, so re-exporting a module from its package's ``__init__`` is no cycle.
    """
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for i in imports:
        if (annotations or not i.typing) and not i.source.startswith(i.target + "."):
            graph[i.source].add(i.target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return sorted(out)


def layer_violations(imports: list[Import], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Imports that run (annotations left out) from a layer into a higher one; a part in no layer is one."""
    rank = {part: k for k, parts in enumerate(layers) for part in parts}
    bad = []
    for i in imports:
        a, b = _part(i.source), _part(i.target)
        if a not in rank or b not in rank:
            bad.append(f"{i.source}:{i.line} -> {i.target} (part {a if a not in rank else b!r} has no layer)")
        elif not i.typing and rank[b] > rank[a]:
            bad.append(f"{i.source}:{i.line} -> {i.target} ({a or 'ad_diff'} is below {b})")
    return bad


def unexplained_lazy_imports(root: Path, imports: list[Import], parts: frozenset[str]) -> list[str]:
    """Function-level imports of the package's own modules, in ``parts``, with no comment saying why.

    Such an import is allowed only as a lazy load (a path most runs never take stays unimported): the
    comment on its line, or above it (heading a block of imports), says so. The cycle check makes sure it
    hides no cycle.
    """
    bad = []
    lines: dict[str, list[str]] = {}
    for i in imports:
        if not i.function or i.typing or _part(i.source) not in parts:
            continue
        if i.source not in lines:
            rel = Path(*i.source.split(".")[1:])
            path = root / rel / "__init__.py" if (root / rel).is_dir() else (root / rel).with_suffix(".py")
            lines[i.source] = path.read_text("utf-8").splitlines()
        text = lines[i.source]
        k = i.line - 2  # the comment may head a block of imports: skip the imports above this one
        while k >= 0 and text[k].strip().startswith(("from ", "import ")) and "#" not in text[k]:
            k -= 1
        if "#" not in text[i.line - 1] and not (k >= 0 and text[k].strip().startswith("#")):
            bad.append(f"{i.source}:{i.line} -> {i.target}")
    return sorted(set(bad))


LAZY_CHECKED = frozenset(part for parts in LAYERS for part in parts)
"""Parts whose function-level imports of ad-diff modules must say why: all of them."""


def heavy_imports_in_functions(root: Path, heavy: frozenset[str]) -> list[str]:
    """Imports of a heavy third-party module (``ad_diff.core.lazy.HEAVY``) inside a function.

    Such a module is imported at a module's top, eagerly or through ``lazy.module`` (typed for the checker,
    imported on first use), never by an ``import`` in a function: there it is lazy without saying so, and
    the next reader cannot tell a start-up decision from an accident. A version fallback (an import under a
    ``try`` that catches ``ImportError``) is no lazy load and is not counted."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        fallback = _ids([t for t in ast.walk(tree) if isinstance(t, ast.Try) and any(
            "ImportError" in ast.unparse(h.type or ast.Constant(None)) for h in t.handlers)])
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for st in ast.walk(fn):
                if id(st) in fallback:
                    continue
                names = ([a.name for a in st.names] if isinstance(st, ast.Import) else
                         [st.module or ""] if isinstance(st, ast.ImportFrom) and not st.level else [])
                if any(n.split(".")[0] in heavy for n in names):
                    bad.append(f"{path.relative_to(root.parent)}:{st.lineno}: {ast.unparse(st)}")
    return sorted(set(bad))


@pytest.fixture(scope="module")
def package() -> tuple[set[str], list[Import]]:
    return read_imports(PKG)


def test_no_import_between_kinds(package: tuple[set[str], list[Import]]) -> None:
    assert kind_violations(package[1]) == []


def test_no_import_cycles(package: tuple[set[str], list[Import]]) -> None:
    assert cycles(import_graph(*package)) == []


def test_no_import_cycles_through_annotations(package: tuple[set[str], list[Import]]) -> None:
    """A module that names another's type in an annotation depends on it: no cycle through annotations
    either (issue 41: gate -> kinds.base -> result -> gate was one)."""
    assert cycles(import_graph(*package, annotations=True)) == []


def test_imports_run_down_the_layers(package: tuple[set[str], list[Import]]) -> None:
    assert layer_violations(package[1]) == []


def test_function_level_imports_say_why(package: tuple[set[str], list[Import]]) -> None:
    assert unexplained_lazy_imports(PKG, package[1], LAZY_CHECKED) == []


def test_heavy_modules_are_imported_through_the_lazy_helper() -> None:
    from ad_diff.core.lazy import HEAVY

    assert heavy_imports_in_functions(PKG, HEAVY) == []


def test_the_heavy_import_check_finds_one_in_a_function(tmp_path: Path) -> None:
    root = _package(tmp_path, {"a.py": ("import numpy as np\n"
                                     "def f():\n    import torch\n"
                                     "def g():\n    try:\n        import yaml\n"
                                     "    except ImportError:\n        yaml = None\n"
                                     "def h():\n    from rich.text import Text\n")})
    assert heavy_imports_in_functions(root, frozenset({"numpy", "torch", "yaml", "rich"})) == [
        "pk/a.py:10: from rich.text import Text", "pk/a.py:3: import torch"]


def test_package_root_stays_small() -> None:
    """At most 12 modules at the package root; everything else lives in its folder."""
    root = [p.name for p in PKG.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(root) <= 12, sorted(root)


def test_the_import_reader_sees_every_import(package: tuple[set[str], list[Import]]) -> None:
    """The imports are read from the code: known module-level and function-level ones show up."""
    found = {(i.source, i.target, i.function) for i in package[1]}
    assert ("ad_diff.gate", "ad_diff.core.model", False) in found
    assert ("ad_diff.kinds.graph", "ad_diff.kinds.graph.analysis", True) in found


# -- self-tests: each check fails on a tiny package that breaks it ------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package ``pk`` under ``tmp_path`` with ``files`` (relative path -> source); folders get __init__."""
    root = tmp_path / "pk"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            (root / parent / "__init__.py").touch()
        path.write_text(text)
    return root


def test_the_kind_check_finds_an_import_between_kinds(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "kinds/a/model.py": "",
        "kinds/b/rules.py": "def f():\n    from pk.kinds.a import model  # hidden in a function\n",
        "kinds/b/section.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                               "    from pk.kinds.a.model import X\n"),
        "kinds/base.py": "from pk.kinds.a import model\n",
        "kinds/c/parse.py": "from pk.report import x\n",
        "kinds/c/align.py": "from pk.kinds.c import parse\nfrom pk.core import y\n",
        "report/x.py": "", "core/y.py": "",
    })
    bad = kind_violations(read_imports(root)[1])
    assert [b.split(" (")[0] for b in bad] == [
        "pk.kinds.b.rules:2 -> pk.kinds.a.model", "pk.kinds.b.section:3 -> pk.kinds.a.model",
        "pk.kinds.base:1 -> pk.kinds.a.model", "pk.kinds.c.parse:1 -> pk.report.x",
    ]


def test_the_cycle_check_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "a.py": "import pk.b\n",
        "b.py": "def f():\n    from pk import c\n",
        "c.py": "from pk.a import x\n",
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pk.e\n",
        "e.py": "import pk.d\n",  # d -> e only for annotations: no cycle
        "sub/__init__.py": "from pk.sub import m\n", "sub/m.py": "from pk.sub import n\n", "sub/n.py": "",
    })
    assert cycles(import_graph(*read_imports(root))) == [["pk.a", "pk.b", "pk.c"]]
    assert cycles(import_graph(*read_imports(root), annotations=True)) == [["pk.a", "pk.b", "pk.c"],
                                                                            ["pk.d", "pk.e"]]


def test_the_layer_check_finds_an_import_that_climbs(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "core/m.py": "def f():\n    from pk.kinds import k\n",
        "kinds/k.py": ("from typing import TYPE_CHECKING\nfrom pk.core import m\n"
                       "if TYPE_CHECKING:\n    from pk import result\n"),
        "result.py": "from pk.kinds import k\n",
        "stray.py": "from pk.core import m\n",
    })
    bad = layer_violations(read_imports(root)[1], (("", "core"), ("kinds",), ("result",)))
    assert [b.split(" (")[0] for b in bad] == ["pk.core.m:2 -> pk.kinds.k", "pk.stray:1 -> pk.core.m"]


def test_the_lazy_check_finds_a_function_level_import_without_a_reason(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "kinds/a.py": ("def f():\n    from pk.core import m\n\n"
                       "def g():\n    # lazy: most runs never take this path\n"
                       "    import pk\n    from pk.core import m\n\n"
                       "def h():\n    import pk.core.m  # lazy: the same, on its line\n"),
        "core/m.py": "",
        "cli.py": "def f():\n    from pk.core import m\n",
    })
    imports = read_imports(root)[1]
    assert unexplained_lazy_imports(root, imports, frozenset({"kinds"})) == ["pk.kinds.a:2 -> pk.core.m"]


def test_a_file_name_means_one_stage_in_every_kind() -> None:
    """The kinds share one vocabulary (README, Development): every kind has model.py, classify.py and
    rules.py; a section.py says what the reports show (its ``view``, no data classes), a page.py is the data
    of its HTML page (beside its ``page.html.j2``); find.py and parse.py render nothing."""
    kinds = sorted(p for p in (PKG / "kinds").iterdir() if (p / "__init__.py").is_file())
    assert {k.name for k in kinds} >= {"log", "graph", "tensors", "config"}
    for kind in kinds:
        for name in ("model.py", "classify.py", "rules.py"):
            assert (kind / name).is_file(), f"kinds/{kind.name} has no {name}"
        defs = {}
        for f in ("section.py", "find.py", "parse.py"):
            if (kind / f).is_file():
                tree = ast.parse((kind / f).read_text("utf-8"))
                defs[f] = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        if "section.py" in defs:
            assert "view" in defs["section.py"], kind.name
            assert not [n for n in defs["section.py"].values() if isinstance(n, ast.ClassDef)], kind.name
        if (kind / "page.py").is_file():
            assert (kind / "page.html.j2").is_file(), kind.name
        for f in ("find.py", "parse.py"):
            drawn = [n for n in defs.get(f, {}) if n.startswith(("render", "view"))]
            assert not drawn, f"kinds/{kind.name}/{f}"


CODE = re.compile(r"AD[A-Z][0-9]{3}")
"""A rule code (``ADL001``)."""
REPORT_FORMATS = frozenset({"terminal", "markdown", "json", "junit", "html", "step_summary", "text"})
"""The words of :class:`ad_diff.formats.Format`."""


def _documentation(tree: ast.AST) -> set[int]:
    """Ids of the string statements (docstrings, attribute docstrings): prose, not code."""
    return {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
            and isinstance(n.value.value, str)}


def rule_code_literals(root: Path) -> list[str]:
    """String constants that are a rule code, outside a ``rules.py``: a rule's part (what a finding is to a
    pass) is data on the rule (``Rule.role``, ``heads``, ``yields_to``), so no pass names a code. Prose that
    mentions a code (a docstring, a message) is no literal of one."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "rules.py":
            continue
        tree = ast.parse(path.read_text("utf-8"))
        prose = _documentation(tree)
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in prose \
                    and CODE.fullmatch(n.value):
                bad.append(f"{path.relative_to(root)}:{n.lineno}: {n.value!r}")
    return bad


def _names_a_format(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id == "Format"
    return isinstance(node, ast.Constant) and node.value in REPORT_FORMATS


def format_dispatch(root: Path, registry: str = "formats.py") -> list[str]:
    """Choices between report formats outside the registry: a comparison with a format (``fmt is
    Format.json``, ``fmt == "markdown"``), a table keyed by formats or a ``match`` over them."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).as_posix() == registry:
            continue
        for n in ast.walk(ast.parse(path.read_text("utf-8"))):
            found = (isinstance(n, ast.Compare) and any(map(_names_a_format, [n.left, *n.comparators]))) or (
                isinstance(n, ast.Dict) and any(k is not None and isinstance(k, ast.Attribute)
                                                and _names_a_format(k) for k in n.keys)) or (
                isinstance(n, ast.match_case) and _names_a_format(getattr(n.pattern, "value", n.pattern)))
            if found:
                line = n.pattern.lineno if isinstance(n, ast.match_case) else getattr(n, "lineno", 0)
                bad.append(f"{path.relative_to(root)}:{line}: {ast.unparse(n)[:80]}")
    return bad


def test_no_rule_code_literal_outside_the_rule_files() -> None:
    assert rule_code_literals(PKG) == []


def test_no_format_dispatch_outside_the_registry() -> None:
    assert format_dispatch(PKG) == []


def test_the_rule_code_check_finds_a_code_in_code_and_not_in_prose(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "a.py": '"""ADL009 stops a run."""\nX = 1\n"""Attribute doc naming ADG004."""\n'
                'def f(c):\n    return c == "ADL009"\n',
        "b.py": 'GAINS = ("ADL006", "ADL008")\nMSG = "see ADL006 for more"\n',
        "k/rules.py": 'R = ("ADL001",)\n',
    })
    assert rule_code_literals(root) == ["a.py:5: 'ADL009'", "b.py:1: 'ADL006'", "b.py:1: 'ADL008'"]


def test_the_format_check_finds_a_choice_by_format(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "formats.py": 'T = {Format.json: 1}\nif fmt is Format.json: pass\n',
        "a.py": 'if fmt is Format.json:\n    pass\n',
        "b.py": 'R = {Format.markdown: render}\nok = {"json": 1}\n',
        "c.py": 'if chosen == "markdown":\n    pass\nif kind == "csv":\n    pass\n',
        "d.py": 'match fmt:\n    case Format.html:\n        pass\n',
    })
    assert [b.split(":")[0] + ":" + b.split(":")[1] for b in format_dispatch(root)] == [
        "a.py:1", "b.py:1", "c.py:1", "d.py:2"]


#: Modules that show a result (every layer above ``result``, and each kind's view of its section): none may
#: read a field marked ``UNRENDERED``, which redaction and the sinks' value pass leave out.
SHOWING = ("report/", "formats.py", "history/", "candidates/", "workflows/", "cli/")
SHOWING_IN_KINDS = ("section.py", "page.py", "render.py")


def _unrendered_fields(root: Path) -> set[str]:
    """The names of the dataclass fields declared ``field(..., metadata=UNRENDERED)``."""
    names = set()
    for path in root.rglob("*.py"):
        for n in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                    and isinstance(n.value, ast.Call)):
                continue
            if any(k.arg == "metadata" and isinstance(k.value, ast.Name) and k.value.id == "UNRENDERED"
                   for k in n.value.keywords):
                names.add(n.target.id)
    return names


def unrendered_reads(root: Path) -> list[str]:
    """Reads of an ``UNRENDERED`` field (``x.said``, or ``.said`` in a template) in a module that shows a
    result."""
    fields = _unrendered_fields(root)
    bad = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not (rel.startswith(SHOWING) or (rel.startswith("kinds/") and path.name in SHOWING_IN_KINDS)
                or path.name.endswith(".j2")):
            continue
        if path.suffix == ".py":
            bad += [f"{rel}:{n.lineno}: .{n.attr}" for n in ast.walk(ast.parse(path.read_text("utf-8")))
                    if isinstance(n, ast.Attribute) and n.attr in fields]
        elif path.name.endswith(".j2"):
            text = path.read_text("utf-8")
            bad += [f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: .{m.group(1)}"
                    for m in re.finditer(r"\.(\w+)\b", text) if m.group(1) in fields]
    return bad


def test_no_renderer_reads_an_unrendered_field() -> None:
    assert "said" in _unrendered_fields(PKG)  # the check has something to check
    assert unrendered_reads(PKG) == []


def test_the_unrendered_check_finds_a_read_in_a_renderer(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "core/model.py": "@dataclass\nclass R:\n    said: tuple = field(default=(), metadata=UNRENDERED)\n",
        "kinds/log/facts.py": "x = r.said\n",
        "kinds/log/section.py": "x = r.said\n",
        "report/json.py": "y = [r.said for r in rows]\n",
        "report/templates/a.html.j2": "<p>\n{{ r.said }}</p>\n",
    })
    assert unrendered_reads(root) == [
        "kinds/log/section.py:1: .said", "report/json.py:1: .said", "report/templates/a.html.j2:2: .said"]
