"""One opener, one reader, one writer (issue 45): every file of a run folder is opened through
``core/openat.py`` (``core/safepath.py`` is its API), every JSON input is parsed by ``core/jsonsafe.py``
(YAML: ``core/yamlsafe.py``), and every file ad-diff writes goes through ``core/outfile.py``. Read from the
code: any other ``open``, ``read_text``, ``read_bytes``, ``write_text``, ``write_bytes``, ``json.load(s)``,
``yaml.*load``, ``os.open``/``os.fdopen``, link-following ``is_file()``, ``shutil.rmtree`` or a third-party
writer given a path fails this test.

A call that touches no run path (a file the GitHub runner wrote, the report ad-diff itself just wrote, the
descriptor the opener pinned) says so on its line: ``# not a run path: <why>``. The few calls the modules
below need for their own format are listed in :data:`ALLOWED` with the reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tests.unit.test_layout import PKG, _package

OPENER_MODULES = frozenset({"core/openat.py", "core/safepath.py", "core/outfile.py", "core/jsonsafe.py",
                            "core/yamlsafe.py"})
"""The opener, its API, the writer, and the bounded JSON and YAML readers: the only modules that open, read,
write or parse files by themselves."""
ALLOWED: dict[tuple[str, str], str] = {
    ("settings.py", "tomllib.loads"): "TOML config text read through safepath; _prescan_toml bounds it first",
    ("kinds/tensors/pt_archive.py", ".open"): "a member of the archive in the file the opener opened",
}
"""``(module, call)`` pairs allowed outside :data:`OPENER_MODULES`, each with why."""
MARKER = "# not a run path:"
READS = frozenset({"open", "read_text", "read_bytes", "write_text", "write_bytes"})
MODULE_CALLS = frozenset({
    ("json", "load"), ("json", "loads"), ("os", "open"), ("os", "fdopen"), ("io", "open"), ("yaml", "load"),
    ("yaml", "safe_load"), ("yaml", "full_load"), ("yaml", "unsafe_load"), ("tomllib", "load"),
    ("tomllib", "loads"), ("shutil", "rmtree"), ("shutil", "move"), ("shutil", "copy"),
    ("shutil", "copyfile"), ("shutil", "copytree"), ("gzip", "open"), ("bz2", "open"), ("lzma", "open"),
})
WRITERS = frozenset({"savefig", "to_csv", "to_parquet"})
"""Third-party writers: they must write into the buffer ``outfile.write_via`` hands them (``buf``)."""
API = frozenset({"safepath", "openat", "outfile", "jsonsafe", "yamlsafe"})


@dataclass(frozen=True)
class Call:
    module: str
    line: int
    call: str
    text: str


def _follows_links(node: ast.Call) -> bool:
    return not any(k.arg == "follow_symlinks" and isinstance(k.value, ast.Constant) and k.value.value is False
                   for k in node.keywords)


def _name(node: ast.Call) -> str | None:
    """The forbidden call ``node`` makes, if any (``.read_text``, ``json.loads``, ``open`` ...)."""
    f = node.func
    if isinstance(f, ast.Name):
        return "open" if f.id == "open" else None
    if not isinstance(f, ast.Attribute):
        return None
    owner = f.value.id if isinstance(f.value, ast.Name) else None
    if owner in API:
        return None
    if owner is not None and (owner, f.attr) in MODULE_CALLS:
        return f"{owner}.{f.attr}"
    if f.attr in READS or (f.attr == "is_file" and _follows_links(node)):
        return f".{f.attr}"
    if f.attr in WRITERS:
        first = node.args[0] if node.args else None
        return None if isinstance(first, ast.Name) and first.id == "buf" else f".{f.attr}"
    return None


def stray_io(root: Path) -> list[Call]:
    """Every forbidden call in the package at ``root`` outside the opener modules, unmarked, unlisted."""
    out: list[Call] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in OPENER_MODULES:
            continue
        text = path.read_text("utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Call) or (call := _name(node)) is None:
                continue
            line = lines[node.lineno - 1]
            marked = MARKER in line and line.split(MARKER, 1)[1].strip()
            if not marked and (rel, call) not in ALLOWED:
                out.append(Call(rel, node.lineno, call, line.strip()))
    return out


def test_every_file_is_opened_read_and_written_through_the_one_opener_and_writer() -> None:
    assert [f"{c.module}:{c.line}: {c.call}: {c.text}" for c in stray_io(PKG)] == []


def test_every_listed_exception_still_exists() -> None:
    """An allowance whose call is gone is removed, so the list never grows stale."""
    for module, call in ALLOWED:
        text = (PKG / module).read_text("utf-8")
        assert call.lstrip(".").split(".")[-1] + "(" in text, (module, call)


def test_the_check_finds_each_kind_of_stray_call(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "a.py": ("import json, os, shutil, yaml\nfrom pathlib import Path\n"
                 "def f(p: Path, fig, df):\n"
                 "    p.read_text()\n"  # 4
                 "    json.loads(p.read_bytes())\n"  # 5: two calls
                 "    open(p)\n"  # 6
                 "    p.is_file()\n"  # 7
                 "    os.scandir(p).__next__().is_file(follow_symlinks=False)\n"  # 8: fine, no link followed
                 "    p.write_text('x')\n"  # 9
                 "    yaml.safe_load('a: 1')\n"  # 10
                 "    os.open(p, 0)\n"  # 11
                 "    shutil.rmtree(p)\n"  # 12
                 "    fig.savefig(p)\n"  # 13
                 "    fig.savefig(buf)\n"  # 14: fine, the writer's buffer
                 "    p.read_bytes()  # not a run path: the runner's event file\n"  # 15: marked
                 "    p.read_bytes()  # not a run path:\n"),  # 16: a marker with no reason is none
        "core/safepath.py": "def read_text(p):\n    return p.read_text()\n",  # the opener itself
    })
    found = [(c.line, c.call) for c in stray_io(root)]
    assert sorted(found) == sorted([(4, ".read_text"), (5, "json.loads"), (5, ".read_bytes"), (6, "open"),
                                    (7, ".is_file"), (9, ".write_text"), (10, "yaml.safe_load"),
                                    (11, "os.open"), (12, "shutil.rmtree"), (13, ".savefig"),
                                    (16, ".read_bytes")])
