"""Index a TensorRT-LLM source tree as text: op registrations, transform registrations, and what each
transform's module shows about the ops it matches and inserts.

Nothing from the tree is imported, compiled or executed. Every ``.py`` file under
``tensorrt_llm/_torch/auto_deploy/`` is read as bytes (bounded), decoded as UTF-8 with replacement, and
scanned line by line with regular expressions for three registration forms:

- ``@torch.library.custom_op("auto_deploy::NAME", ...)`` -> ``custom_op`` (and the ``def`` it decorates);
- ``torch.library.define("ns::NAME(...)")`` / ``lib.define("NAME(...)")`` -> ``library_define``;
- ``@TransformRegistry.register("KEY")`` -> ``transform``.

Files holding a transform registration are also parsed with :func:`ast.parse` (a syntax tree, never run)
by :mod:`~ad_diff.candidates.pyread`, which ties ops to transforms.

Bounds (a huge or hostile tree stays cheap): at most :data:`MAX_FILES` files and :data:`MAX_DIRS` folders
visited, :data:`MAX_FILE_BYTES` read per file and :data:`MAX_TOTAL_BYTES` in all, of which at most
:data:`MAX_PARSED_BYTES` of transform modules parsed. Containment: the ``auto_deploy`` package must lie
inside the tree the user named (a ``tensorrt_llm`` linked elsewhere is refused by name); links to files are
followed only when they resolve inside the package (each file read once), links to folders are never walked,
only regular files are opened, without blocking (a FIFO named ``x.py`` cannot block the read). Whatever a
limit, a link or a special file left out is said in :attr:`SourceIndex.notes`.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ad_diff.candidates.pyread import TransformSource, read_transforms
from ad_diff.core import safepath
from ad_diff.errors import InputError

AD_DIR = Path("tensorrt_llm/_torch/auto_deploy")
MAX_FILES = 5_000
"""``.py`` files read (upstream ``auto_deploy`` holds a few hundred)."""
MAX_DIRS = 20_000
"""Folders visited."""
MAX_FILE_BYTES = 2 << 20
"""Bytes read per file (the largest upstream module is well under this); the rest is not read."""
MAX_TOTAL_BYTES = 64 << 20
"""Bytes read in all."""
MAX_PARSED_BYTES = 8 << 20
"""Bytes of transform modules parsed in all (parsing and following names costs far more than the line scan;
upstream's transform library is a few MiB)."""

_CUSTOM_OP = re.compile(r"""custom_op\(\s*["']([\w.]+)::(\w+)["']""")
_NS_DEFINE = re.compile(r"""library\.define\(\s*["']([\w.]+)::(\w+)\s*\(""")
_LIB_DEFINE = re.compile(r"""\.define\(\s*["'](\w+)\s*\(""")
_LIB_NS = re.compile(r"""Library\(\s*["']([\w.]+)["']""")
_TRANSFORM = re.compile(r"""TransformRegistry\.register\(\s*["'](\w+)["']""")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(")
_LINK_OUT = "link(s) leaving the tree (or dangling) not followed"
_SPECIAL = "special file(s) named *.py (FIFO, socket, device) not opened"
_LINKED_DIR = "link(s) to folders not walked (copy the folder into the tree instead)"
_DECORATOR_WINDOW = 8
"""Lines between a ``custom_op`` decorator and the ``def`` it decorates."""


@dataclass(frozen=True, slots=True)
class Registration:
    """One registration found in the source tree."""

    kind: str
    name: str
    """Bare op name or transform key (what tables and tokens are matched against)."""
    symbol: str
    path: str
    line: int
    func: str = ""
    """For ``custom_op``: the Python function it decorates (``flashinfer_rmsnorm`` for the op
    ``auto_deploy::flashinfer_rms_norm``: the two names differ upstream)."""


@dataclass(frozen=True, slots=True)
class SourceModule:
    """The transforms of one module, read by :mod:`~ad_diff.candidates.pyread`."""

    path: str
    transforms: tuple[TransformSource, ...]
    note: str = ""


@dataclass(frozen=True, slots=True)
class SourceIndex:
    """Every registration of a source tree, read once."""

    root: Path
    registrations: tuple[Registration, ...]
    files: int
    modules: tuple[SourceModule, ...] = ()
    notes: tuple[str, ...] = ()
    """What the limits or unreadable files left out (empty when the whole tree was read)."""

    @property
    def complete(self) -> bool:
        """True when no limit cut the read short (a ``not_found`` is then a claim about the whole tree)."""
        return not self.notes

    def transform(self, key: str) -> tuple[SourceModule, TransformSource] | None:
        """The module text of the transform registered as ``key`` (the first, when registered twice)."""
        for m in self.modules:
            for t in m.transforms:
                if t.key == key:
                    return m, t
        return None


def resolve_ad_dir(src: Path) -> Path:
    """The ``auto_deploy`` package folder of ``src`` (a repository root or the package itself)."""
    if not src.is_dir():
        raise InputError(
            src, "--trtllm-src must be a folder: a TensorRT-LLM checkout (or its auto_deploy package)"
        )
    for cand in (src / AD_DIR, src):
        if (cand / "custom_ops").is_dir() or (cand / "transform" / "library").is_dir():
            if not safepath.is_inside(cand, src):  # a linked tensorrt_llm/ would widen the read to anywhere
                raise InputError(cand, f"resolves to a folder outside --trtllm-src {src}; refusing to read "
                                       "it (pass the folder it points to as --trtllm-src instead)")
            return cand
    raise InputError(
        src,
        f"not a TensorRT-LLM source tree: expected {AD_DIR}/custom_ops/ or {AD_DIR}/transform/library/ in it",
    )


class _Walk:
    """The bounded read of one tree."""

    def __init__(self, src: Path, ad: Path) -> None:
        self.src = src
        self.top = ad.resolve()
        self.files = 0
        self.dirs = 0
        self.bytes = 0
        self.parsed = 0
        self.read_real: set[Path] = set()
        self.notes: list[str] = []
        self.regs: list[Registration] = []
        self.modules: list[SourceModule] = []

    def rel(self, path: Path) -> str:
        return path.relative_to(self.src).as_posix() if path.is_relative_to(self.src) else path.as_posix()

    def run(self, ad: Path) -> None:
        skipped: dict[str, int] = {}
        for dirpath, dirnames, filenames in os.walk(ad, followlinks=False):
            self.dirs += 1
            if self.dirs > MAX_DIRS:
                self.notes.append(f"stopped after {MAX_DIRS} folders: the rest of the tree was not read")
                break
            # os.walk lists a link to a folder among the folders and never enters it: count it, so the
            # lookup is marked incomplete instead of missing that folder's registrations without a word
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
            links = sum(1 for d in dirnames if Path(dirpath, d).is_symlink())
            if links:
                skipped[_LINKED_DIR] = skipped.get(_LINKED_DIR, 0) + links
            for fn in sorted(filenames):
                if not fn.endswith(".py"):
                    continue
                if self.files >= MAX_FILES or self.bytes >= MAX_TOTAL_BYTES:
                    self.notes.append(
                        f"stopped after {self.files} file(s) and {self.bytes} bytes (limits: {MAX_FILES} "
                        f"files, {MAX_TOTAL_BYTES} bytes): the rest of the tree was not read"
                    )
                    return
                path = Path(dirpath) / fn
                real, why = self.inside(path)
                if real is None:
                    if why:
                        skipped[why] = skipped.get(why, 0) + 1
                    continue
                self.read(path, real)
        self.notes += [f"{n} {why}" for why, n in skipped.items()]

    def inside(self, path: Path) -> tuple[Path | None, str]:
        """``(resolved path, "")`` for a regular file inside the tree not read yet; else ``(None, why)``
        (``why`` empty for a second link to a file already read)."""
        try:
            real = path.resolve(strict=True)
            mode = real.stat().st_mode
        except (OSError, RuntimeError):
            return None, _LINK_OUT
        if not real.is_relative_to(self.top):
            return None, _LINK_OUT
        if not stat.S_ISREG(mode):
            return None, _SPECIAL
        if real in self.read_real:
            return None, ""
        self.read_real.add(real)
        return real, ""

    def read(self, path: Path, real: Path) -> None:
        want = min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - self.bytes)
        try:  # the one opener: no link swapped in since the check, no blocking open of a FIFO swapped in
            with safepath.open_file(real, self.top, "a Python source file", "--trtllm-src") as fh:
                data = fh.read(want + 1)
        except (OSError, InputError):
            self.notes.append(f"{self.rel(path)}: cannot be read")
            return
        self.files += 1
        cut = len(data) > want
        data = data[:want]
        self.bytes += len(data)
        if cut:
            self.notes.append(f"{self.rel(path)}: longer than {want} bytes, only its start was read")
        text = data.decode("utf-8", errors="replace")
        rel = self.rel(path)
        regs = _scan_text(text, rel)
        self.regs += regs
        if any(r.kind == "transform" for r in regs):
            transforms: tuple[TransformSource, ...]
            if cut:
                transforms, note = (), "cut short by the size limit: not parsed"
            elif self.parsed + len(data) > MAX_PARSED_BYTES:
                transforms, note = (
                    (),
                    f"not parsed: {MAX_PARSED_BYTES} bytes of transform modules parsed already",
                )
            else:
                self.parsed += len(data)
                transforms, note = read_transforms(text)
            if note:
                self.notes.append(f"{rel}: {note}")
            self.modules.append(SourceModule(rel, transforms, note))


def _scan_text(text: str, rel: str) -> list[Registration]:
    ns = m.group(1) if (m := _LIB_NS.search(text)) else None
    out: list[Registration] = []
    pending: tuple[int, Registration] | None = None
    for i, line in enumerate(text.splitlines(), 1):
        if pending is not None and (d := _DEF.match(line)):
            idx, reg = pending
            out[idx] = Registration(reg.kind, reg.name, reg.symbol, reg.path, reg.line, d.group(1))
            pending = None
        elif pending is not None and i - pending[1].line > _DECORATOR_WINDOW:
            pending = None
        for m in _CUSTOM_OP.finditer(line):
            out.append(Registration("custom_op", m.group(2), f"{m.group(1)}::{m.group(2)}", rel, i))
            pending = (len(out) - 1, out[-1])
        for m in _NS_DEFINE.finditer(line):
            out.append(Registration("library_define", m.group(2), f"{m.group(1)}::{m.group(2)}", rel, i))
        if not _NS_DEFINE.search(line):
            for m in _LIB_DEFINE.finditer(line):
                sym = f"{ns}::{m.group(1)}" if ns else m.group(1)
                out.append(Registration("library_define", m.group(1), sym, rel, i))
        for m in _TRANSFORM.finditer(line):
            out.append(Registration("transform", m.group(1), m.group(1), rel, i))
    return out


def index_source(src: Path) -> SourceIndex:
    """Index the op and transform registrations under ``src`` (text only, bounded)."""
    ad = resolve_ad_dir(src)
    walk = _Walk(src, ad)
    walk.run(ad)
    regs = sorted(walk.regs, key=lambda r: (r.path, r.line, r.symbol))
    return SourceIndex(src, tuple(regs), walk.files, tuple(walk.modules), tuple(dict.fromkeys(walk.notes)))
