"""Search a TensorRT-LLM source tree for an existing op or transform covering a pattern.

The tree is only *read*, line by line, with regular expressions: nothing from it is imported or executed.
Three registration forms are indexed in every ``.py`` file under ``tensorrt_llm/_torch/auto_deploy/``
(``custom_ops/`` and ``transform/library/`` included):

- ``@torch.library.custom_op("auto_deploy::NAME", ...)``  -> ``custom_op``
- ``torch.library.define("auto_deploy::NAME(...)")`` / ``lib.define("NAME(...)")`` -> ``library_define``
- ``@TransformRegistry.register("KEY")`` -> ``transform``

A pattern is covered when a registered name equals one of the known names of its family (:data:`KNOWN`), or
when a registered name contains every distinctive op of the pattern (``silu`` and ``mul`` in
``silu_and_mul``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ad_diff.errors import InputError
from ad_diff.workflows.candidates.model import Evidence, KernelLookup, LookupStatus
from ad_diff.workflows.candidates.ops import ELEMENTWISE, GEMM, LAYOUT, op_name

AD_DIR = Path("tensorrt_llm/_torch/auto_deploy")
SEARCH_DIRS = ("custom_ops", "transform/library")
"""The primary places; the whole ``auto_deploy`` package is indexed (registrations live elsewhere too)."""

#: family -> (op names, transform keys) known to cover it in AutoDeploy.
KNOWN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "rmsnorm": (
        ("torch_rmsnorm", "flashinfer_rmsnorm", "triton_rms_norm", "triton_rmsnorm", "rms_norm"),
        ("match_rmsnorm_pattern", "fuse_rmsnorm"),
    ),
    "layernorm": (
        ("torch_layernorm", "triton_layernorm", "layer_norm"),
        ("match_layernorm_pattern", "fuse_layernorm"),
    ),
    "l2norm": (
        ("torch_l2norm", "fla_l2norm", "triton_l2norm", "l2norm"),
        ("match_l2norm_pattern", "fuse_l2norm"),
    ),
    "softmax": (
        ("torch_attention", "torch_attention_sdpa", "torch_softmax"),
        ("match_eager_attention", "match_sdpa_to_torch_attention"),
    ),
    "swiglu": (
        ("torch_swiglu", "torch_swiglu_mlp", "fused_swiglu", "swiglu"),
        ("match_swiglu_pattern", "fuse_swiglu"),
    ),
    "silu_mul": (("silu_and_mul", "silu_mul", "fused_silu_mul", "triton_silu_mul"), ("fuse_silu_mul",)),
    "gelu_mul": (("gelu_and_mul", "gelu_mul", "geglu"), ()),
    "sigmoid_mul": ((), ()),
    "rope": (
        (
            "torch_rope",
            "torch_rope_with_explicit_cos_sin",
            "torch_rope_with_complex_freqs",
            "torch_rope_with_qk_interleaving",
            "flashinfer_rope",
            "triton_rope_with_input_pos",
        ),
        ("match_rope_pattern", "match_rope_layout", "optimize_rope"),
    ),
    "gemm_epilogue": ((), ()),
    "attention_adjacent": ((), ()),
    "elementwise_chain": ((), ()),
    "attention_layout": (
        (),
        ("eliminate_redundant_transposes", "match_attention_layout", "match_rope_layout"),
    ),
}

# Ops too common to identify a kernel by name (every fused kernel "adds" or "muls").
_TRIVIAL = (
    frozenset({"add", "sub", "mul", "div", "neg", "to", "_to_copy", "type_as", "float", "where"}) | LAYOUT
)

_CUSTOM_OP = re.compile(r"""custom_op\(\s*["']([\w.]+)::(\w+)["']""")
_NS_DEFINE = re.compile(r"""library\.define\(\s*["']([\w.]+)::(\w+)\s*\(""")
_LIB_DEFINE = re.compile(r"""\.define\(\s*["'](\w+)\s*\(""")
_LIB_NS = re.compile(r"""Library\(\s*["']([\w.]+)["']""")
_TRANSFORM = re.compile(r"""TransformRegistry\.register\(\s*["'](\w+)["']""")


@dataclass(frozen=True, slots=True)
class Registration:
    """One registration found in the source tree."""

    kind: str
    name: str
    """Bare op name or transform key (what tables and tokens are matched against)."""
    symbol: str
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class SourceIndex:
    """Every registration of a source tree, read once."""

    root: Path
    registrations: tuple[Registration, ...]
    files: int


def resolve_ad_dir(src: Path) -> Path:
    """The ``auto_deploy`` package folder of ``src`` (a repository root or the package itself)."""
    if not src.is_dir():
        raise InputError(
            src, "--trtllm-src must be a folder: a TensorRT-LLM checkout (or its auto_deploy package)"
        )
    for cand in (src / AD_DIR, src):
        if (cand / "custom_ops").is_dir() or (cand / "transform" / "library").is_dir():
            return cand
    raise InputError(
        src,
        f"not a TensorRT-LLM source tree: expected {AD_DIR}/custom_ops/ or {AD_DIR}/transform/library/ in it",
    )


def index_source(src: Path) -> SourceIndex:
    """Index the op and transform registrations under ``src`` (text scan only)."""
    ad = resolve_ad_dir(src)
    regs: list[Registration] = []
    files = 0
    for dirpath, dirnames, filenames in os.walk(ad):  # symlinks are not followed out of the tree
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                files += 1
                regs += _scan_file(Path(dirpath) / fn, src)
    regs.sort(key=lambda r: (r.path, r.line, r.symbol))
    return SourceIndex(src, tuple(regs), files)


def _scan_file(path: Path, root: Path) -> list[Registration]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []  # an unreadable file cannot hold evidence; the lookup stays honest about what it found
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
    ns = m.group(1) if (m := _LIB_NS.search(text)) else None
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        for m in _CUSTOM_OP.finditer(line):
            out.append(Registration("custom_op", m.group(2), f"{m.group(1)}::{m.group(2)}", rel, i))
        for m in _NS_DEFINE.finditer(line):
            out.append(Registration("library_define", m.group(2), f"{m.group(1)}::{m.group(2)}", rel, i))
        if not _NS_DEFINE.search(line):
            for m in _LIB_DEFINE.finditer(line):
                sym = f"{ns}::{m.group(1)}" if ns else m.group(1)
                out.append(Registration("library_define", m.group(1), sym, rel, i))
        for m in _TRANSFORM.finditer(line):
            out.append(Registration("transform", m.group(1), m.group(1), rel, i))
    return out


def pattern_tokens(pattern: tuple[str, ...]) -> tuple[str, ...]:
    """Distinctive op names of a pattern (``silu``, ``rsqrt``), used for the name search."""
    names = {op_name(t) for t in pattern}
    toks = {
        n for n in names if n not in _TRIVIAL and n not in GEMM and (n in ELEMENTWISE or n.isidentifier())
    }
    return tuple(sorted(toks))


def lookup(index: SourceIndex | None, family: str, pattern: tuple[str, ...]) -> KernelLookup:
    """Find registrations covering ``family``/``pattern``; ``not_searched`` when there is no index."""
    ops, transforms = KNOWN.get(family, ((), ()))
    tokens = pattern_tokens(pattern)
    searched = tuple(sorted(set(ops) | set(transforms))) + tuple(f"*{t}*" for t in tokens)
    if index is None:
        return KernelLookup(LookupStatus.NOT_SEARCHED, (), searched)
    found: list[Evidence] = []
    for r in index.registrations:
        if (r.kind == "transform" and r.name in transforms) or (r.kind != "transform" and r.name in ops):
            found.append(Evidence(r.kind, r.symbol, r.path, r.line, "table"))
        elif tokens and all(t in r.name for t in tokens) and len(tokens) >= 1 and _token_ok(tokens):
            found.append(Evidence(r.kind, r.symbol, r.path, r.line, "op_tokens"))
    found.sort(
        key=lambda e: (
            e.matched_by != "table",
            e.kind != "custom_op" and e.kind != "library_define",
            e.path,
            e.line,
        )
    )
    status = LookupStatus.FOUND if found else LookupStatus.NOT_FOUND
    return KernelLookup(status, tuple(found), searched)


def _token_ok(tokens: tuple[str, ...]) -> bool:
    # A single short token ("exp", "abs") matches too many unrelated names to count as evidence.
    return len(tokens) >= 2 or len(tokens[0]) >= 4
