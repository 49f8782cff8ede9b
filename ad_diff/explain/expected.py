"""Expected changes: a reviewed file of intentional differences, each with a reason.

A finding that matches an entry stays in the report, marked acknowledged with the entry's reason, and no
longer gates. An entry that matches no finding is reported as stale (``ADX001``) so the file does not rot.
Format (docs/expected-changes.md)::

    expected:
      - transform: fuse_gemms
        after: disabled
        reason: fuse_gemms disabled on purpose for model X (see PR 1234)
      - transform: match_rope_pattern
        before: 16
        after: 0
        reason: rope is matched by the new fused attention instead
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from ad_diff.core import safepath
from ad_diff.core.model import Finding, Side, State, TransformComparison
from ad_diff.core.yamlsafe import load_yaml_node
from ad_diff.errors import InputError
from ad_diff.explain.rules import STALE

GLOB_FIELDS = ("code", "category", "transform", "stage", "node", "tensor", "message", "model")
"""Entry fields matched as fnmatch globs against the finding (``model``: the batch model name)."""
COUNT_FIELDS = ("before", "after")
"""Entry fields matched against the transform's baseline / candidate: a match count or a state name."""
_STATES = tuple(s.value for s in State)


@dataclass(frozen=True)
class Expectation:
    """One acknowledged change."""

    reason: str
    line: int
    """1-based line of the entry in its file (stale findings point there)."""
    globs: tuple[tuple[str, str], ...]
    """``(field, glob)`` pairs; every one must match."""
    before: int | str | None = None
    after: int | str | None = None

    def describe(self) -> str:
        """Short human description, e.g. ``transform=match_rope_pattern 16 -> 0``."""
        parts = [f"{k}={v}" for k, v in self.globs]
        if self.before is not None or self.after is not None:
            before = "*" if self.before is None else self.before
            parts.append(f"{before} -> {'*' if self.after is None else self.after}")
        return " ".join(parts)


@dataclass(frozen=True)
class Expectations:
    """All entries of one expected-changes file."""

    path: Path
    entries: tuple[Expectation, ...]


def _entry(path: Path, line: int, raw: Any) -> Expectation:
    if not isinstance(raw, dict):
        raise InputError(path, f"expected an entry mapping (reason, transform, code ...), got {raw!r}", line)
    unknown = sorted(set(map(str, raw)) - {"reason", *GLOB_FIELDS, *COUNT_FIELDS})
    if unknown:
        known = ", ".join(("reason", *GLOB_FIELDS, *COUNT_FIELDS))
        raise InputError(path, f"unknown field {unknown[0]!r} in expected change (known: {known})", line)
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise InputError(path, "every expected change needs a non-empty `reason`", line)
    globs = []
    for f in GLOB_FIELDS:
        if f in raw:
            if not isinstance(raw[f], (str, int)) or isinstance(raw[f], bool):
                raise InputError(path, f"`{f}` must be a string (glob), got {raw[f]!r}", line)
            globs.append((f, str(raw[f])))
    if not any(f != "model" for f, _ in globs):
        raise InputError(path, "an expected change must name at least one of code, category, transform, "
                               "stage, node, tensor or message (it would acknowledge everything)", line)
    counts: dict[str, int | str | None] = {}
    for f in COUNT_FIELDS:
        v = raw.get(f)
        count = isinstance(v, int) and not isinstance(v, bool) and v >= 0
        if v is not None and not count and v not in _STATES:
            raise InputError(path, f"`{f}` must be a match count (>= 0) or a state ({', '.join(_STATES)}), "
                                   f"got {v!r}", line)
        counts[f] = v
    return Expectation(reason.strip(), line, tuple(globs), counts["before"], counts["after"])


def load(path: Path) -> Expectations:
    """Read an expected-changes YAML file; raise :class:`InputError` (with the line) when it is malformed."""
    what = "an expected-changes file (UTF-8 YAML)"
    raw = safepath.read_bytes(path, path.resolve().parent, what, 4 << 20)
    try:
        data, node = load_yaml_node(safepath.decode_utf8(raw, path, what), path)
    except InputError as e:  # the bounded loader: also aliases, depth, duplicate and non-string keys
        detail = e.detail.removeprefix("invalid YAML: ")
        raise InputError(path, f"not valid YAML ({detail})", e.line) from None
    if data is None:
        return Expectations(path, ())
    items_node = node
    if isinstance(data, dict):
        if set(data) - {"expected"}:
            key = sorted(set(map(str, data)) - {"expected"})[0]
            raise InputError(path, f"unknown top-level key {key!r}; expected `expected:` holding a list of "
                                   "entries", 1)
        data = data.get("expected") or []
        items_node = next(v for k, v in node.value if k.value == "expected")  # type: ignore[union-attr]
    if not isinstance(data, list):
        raise InputError(path, "expected a list of entries (or `expected:` holding one)", 1)
    lines = [n.start_mark.line + 1 for n in getattr(items_node, "value", [])] if data else []
    return Expectations(path, tuple(_entry(path, ln, raw) for ln, raw in zip(lines, data, strict=True)))


def _side_values(s: Side) -> set[int | str]:
    """What ``before``/``after`` may say about one side: its state, its count, and 0 when it did not apply."""
    vals: set[int | str] = {s.state.value}
    if s.matches is not None:
        vals.add(s.matches)
    if s.state is not State.APPLIED:
        vals.add(0)
    return vals


def _counts_match(e: Expectation, f: Finding, rows: Iterable[TransformComparison]) -> bool:
    if e.before is None and e.after is None:
        return True
    if f.transform is None:
        return False
    for r in rows:
        if r.transform != f.transform:
            continue
        if (e.before is None or e.before in _side_values(r.baseline)) and (
            e.after is None or e.after in _side_values(r.candidate)
        ):
            return True
    return False


def matches(e: Expectation, f: Finding, rows: Iterable[TransformComparison], model: str | None) -> bool:
    """Whether entry ``e`` acknowledges finding ``f``."""
    for field, glob in e.globs:
        value = model if field == "model" else getattr(f, field)
        if value is None or not fnmatchcase(str(value), glob):
            return False
    return _counts_match(e, f, rows)


def apply(exp: Expectations, findings: list[Finding], rows: tuple[TransformComparison, ...],
          model: str | None = None) -> list[Finding]:
    """Acknowledge matching findings (not gating, reason kept) and add an ``ADX001`` per stale entry.

    Entries restricted to another ``model`` are not applicable here and never stale.
    """
    used: set[int] = set()
    out: list[Finding] = []
    for f in findings:
        hit = next((i for i, e in enumerate(exp.entries) if matches(e, f, rows, model)), None)
        if hit is None:
            out.append(f)
            continue
        used.add(hit)
        out.append(dataclasses.replace(f, acknowledged=exp.entries[hit].reason, gating=False))
    for i, e in enumerate(exp.entries):
        model_glob = dict(e.globs).get("model")
        applicable = model_glob is None or (model is not None and fnmatchcase(model, model_glob))
        if i not in used and applicable:
            out.append(STALE.make(file=str(exp.path), line=e.line, what=e.describe(),
                                  evidence={"file": str(exp.path), "line": e.line, "reason": e.reason}))
    return out
