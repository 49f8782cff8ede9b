"""Bytes a fusion would not write: the sizes of a pattern's intermediate tensors, read from the dump.

A node's output size is its shape's element count times its dtype's width (``16x4 : torch.float32`` is
256 bytes; a tuple output sums its parts). Symbolic sizes (``s0``, ``s44*s70``, ``Max(1, s0)``) are
evaluated with every symbol at :data:`NOMINAL` (64): with batch and sequence both symbolic that is
``64 x 64 = 4096`` tokens, the nominal size docs/candidates.md states. An expression this small evaluator
does not read (or a shape or dtype the dump does not give) makes the node's size unknown: it counts 0 and
is counted apart, so a ranking never rests on a guess.
"""

from __future__ import annotations

import re

from ad_diff.core import limits

NOMINAL = 64
"""Value of every symbolic size (``s0``, ``s1`` ...)."""
_MAX_EXPR = 120
"""Longest symbolic dim read (characters); a longer one is unknown (bounded work on hostile dumps)."""
_MAX_BYTES = 1 << 62

DTYPE_BYTES: dict[str, int] = {
    "torch.float64": 8,
    "torch.double": 8,
    "torch.int64": 8,
    "torch.long": 8,
    "torch.complex64": 8,
    "torch.complex128": 16,
    "torch.float32": 4,
    "torch.float": 4,
    "torch.int32": 4,
    "torch.int": 4,
    "torch.float16": 2,
    "torch.half": 2,
    "torch.bfloat16": 2,
    "torch.int16": 2,
    "torch.int8": 1,
    "torch.uint8": 1,
    "torch.bool": 1,
    "torch.float8_e4m3fn": 1,
    "torch.float8_e5m2": 1,
    "torch.float4_e2m1fn_x2": 1,
}
_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(//|[-+*/(),]))")


def _parse(text: str) -> int | None:
    """Value of a size expression: integers, symbols, ``+ - * // /``, parentheses, ``Max``/``Min``."""
    toks: list[str] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == "":
                break
            return None
        toks.append(m.group(0).strip())
        pos = m.end()
    value, rest = _expr(toks, 0)
    return value if rest == len(toks) else None


def _expr(t: list[str], i: int) -> tuple[int | None, int]:
    v, i = _term(t, i)
    while v is not None and i < len(t) and t[i] in "+-":
        r, j = _term(t, i + 1)
        if r is None:
            return None, j
        v, i = (v + r if t[i] == "+" else v - r), j
    return v, i


def _term(t: list[str], i: int) -> tuple[int | None, int]:
    v, i = _atom(t, i)
    while v is not None and i < len(t) and t[i] in ("*", "/", "//"):
        r, j = _atom(t, i + 1)
        if r is None or (t[i] != "*" and r == 0):
            return None, j
        v, i = (v * r if t[i] == "*" else v // r), j
        if abs(v) > _MAX_BYTES:
            return None, i
    return v, i


def _atom(t: list[str], i: int) -> tuple[int | None, int]:
    if i >= len(t):
        return None, i
    tok = t[i]
    if tok.isdigit():  # ASCII digits, bounded (limits.digits), else no size: a Unicode digit is no number
        return limits.digits(tok, _MAX_EXPR), i + 1
    if tok == "(":
        v, j = _expr(t, i + 1)
        return (v, j + 1) if j < len(t) and t[j] == ")" else (None, j)
    if tok in ("Max", "Min") and i + 1 < len(t) and t[i + 1] == "(":
        a, j = _expr(t, i + 2)
        if a is None or j >= len(t) or t[j] != ",":
            return None, j
        b, k = _expr(t, j + 1)
        if b is None or k >= len(t) or t[k] != ")":
            return None, k
        return (max(a, b) if tok == "Max" else min(a, b)), k + 1
    if tok == "-":
        v, j = _atom(t, i + 1)
        return (None if v is None else -v), j
    if tok[0].isalpha() or tok[0] == "_":
        return NOMINAL, i + 1
    return None, i


def _split(text: str, sep: str) -> list[str]:
    """``text`` split on ``sep`` outside parentheses (the ``x`` of ``Max`` is no separator)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == sep and depth == 0 and not (sep == "x" and text[max(0, k - 2) : k] == "Ma"):
            out.append(text[start:k])
            start = k + 1
    out.append(text[start:])
    return out


def numel(shape: str) -> int | None:
    """Element count of one shape (``scalar`` is 1); ``None`` when a dim cannot be read."""
    if shape == "scalar":
        return 1
    dims = _split(shape, "x")
    total = 1
    for d in dims:
        d = d.strip()
        if not d or len(d) > _MAX_EXPR:
            return None
        v = limits.digits(d, 12) if d.isdigit() and len(d) <= 12 else _parse(d)
        if v is None or v < 0:
            return None
        total *= v
        if total > _MAX_BYTES:
            return None
    return total


def tensor_bytes(shape: str | None, dtype: str | None) -> int | None:
    """Bytes of a node's output (a tuple output sums its tensors); ``None`` when unknown."""
    if not shape or not dtype or shape == "?":
        return None
    if shape.startswith("(") and dtype.startswith("("):
        shapes = [x.strip() for x in _split(shape[1:-1], ",")]
        dtypes = [x.strip() for x in _split(dtype[1:-1], ",")]
        if len(shapes) != len(dtypes):
            return None
        parts = [tensor_bytes(a, b) for a, b in zip(shapes, dtypes, strict=True) if b != "None"]
        return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)
    width = DTYPE_BYTES.get(dtype)
    n = numel(shape)
    return None if width is None or n is None else n * width
