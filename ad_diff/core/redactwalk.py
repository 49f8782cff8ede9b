"""Redaction of whole objects: loaded data (:func:`redact_tree`: a config, by key and by value) and a
result about to be rendered (:func:`redact_deep`: every string in it). The patterns are
:mod:`ad_diff.core.redact`'s."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from ad_diff.core.redact import (
    _B64_RUN,
    _B64_TABLE,
    _BODY,
    _FAMILIES,
    _LOWER_MARKS,
    _STRONG,
    _TOKEN,
    REDACTED,
    _key_level,
    _spots,
    is_secret_value,
    redact_text,
)
from ad_diff.core.strwalk import map_strings, strings


def redact_tree(data: Any) -> tuple[Any, int]:
    """A copy of JSON-like ``data`` with credentials replaced by :data:`REDACTED`, and how many were."""
    count = 0

    def walk(value: Any, level: int) -> Any:
        nonlocal count
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for k, v in value.items():
                key = str(k)
                if is_secret_value(key):
                    count += 1
                    key = f"{REDACTED} {count}"
                out[key] = walk(v, max(level, _key_level(key)))
            return out
        if isinstance(value, list):
            return [walk(v, level) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        strong = level == _STRONG and isinstance(value, (str, int, float)) and value != ""
        token = level == _TOKEN and isinstance(value, str) and len(value) >= 8
        if strong or token:
            count += 1
            return REDACTED
        if isinstance(value, str) and is_secret_value(value):
            count += 1
            return redact_text(value)
        return value

    return walk(data, 0), count


def redact_argv(args: Sequence[str]) -> list[str]:
    """A command line with its credentials redacted: the credential shapes and ``key=value`` forms in each
    argument (:func:`redact_text`), and the argument after an option that names a credential
    (``--hf-token VALUE``, ``--password VALUE``; a token-ish option's value needs 8 characters, as a
    config value's does: ``--token-limit 4096`` stays)."""
    out: list[str] = []
    level = 0
    for arg in args:
        if level and not arg.startswith("-"):
            hide = level == _STRONG or len(arg) >= 8
            out.append(REDACTED if hide and arg else redact_text(arg))
            level = 0
            continue
        name = arg.lstrip("-")
        level = _key_level(name) if arg.startswith("-") and name and "=" not in name else 0
        out.append(redact_text(arg))
    return out


def _suspects(texts: dict[int, str]) -> set[int] | None:
    """The ids of the strings :func:`redact_text` may change: those holding a literal one of its patterns
    needs or a run of 64 base64 characters. Found in one scan of all the strings joined by line ends (no
    literal holds one, and one ends every base64 run), so a report's thousands of node names cost one
    memchr-speed search per literal instead of a dozen checks each. ``None``: the joined text's lower case
    has another length (a rare character), so offsets cannot be shared: every string is a suspect."""
    ids = list(texts)
    starts: list[int] = []
    at = 0
    for i in ids:
        starts.append(at)
        at += len(texts[i]) + 1
    joined = "\n".join(texts[i] for i in ids)
    # the marks any case, found as redact_text finds them in a long text (a block lower-cased at a time)
    spots = _spots(joined, list(_LOWER_MARKS))
    if spots is None:
        return None
    hits: set[int] = {ids[bisect_right(starts, k) - 1] for k in spots}

    def mark(text: str, literal: str) -> None:
        k = text.find(literal)
        while k >= 0:
            n = bisect_right(starts, k) - 1
            hits.add(ids[n])
            k = text.find(literal, starts[n + 1] if n + 1 < len(starts) else len(text))

    for marks, _family in _FAMILIES:
        for literal in marks:
            mark(joined, literal)
    if _B64_RUN in joined.encode("utf-8", "surrogatepass").translate(_B64_TABLE):  # any run at all: find it
        for m in _BODY.finditer(joined):
            hits.add(ids[bisect_right(starts, m.start()) - 1])
    return hits


def redact_deep(obj: Any) -> Any:
    """A copy of ``obj`` (dataclasses, tuples, lists, dicts of them) with :func:`redact_text` applied to
    every string in it, sharing every part that held none; one object seen twice stays one object (reports
    index findings by identity). For a result about to be laid out: a terminal table wraps a long cell, so
    ``password = …`` may reach the output with the key and the value on two lines, where no pattern over
    the rendered text can pair them.

    The strings that may hold a credential are found first, in one scan (:func:`_suspects`); a result with
    none is returned as it is, and only the suspects go through :func:`redact_text`."""
    texts = strings(obj)
    suspects = _suspects(texts)
    if suspects is None:
        return map_strings(obj, redact_text)
    # a literal is no credential: most suspects come back as they were (ad-diff's own prose "accounts for"
    # holds "account"), and then the copy walk over the whole result is not needed
    changed = {i: new for i in suspects if (new := redact_text(texts[i])) != texts[i]}
    if not changed:
        return obj
    return map_strings(obj, lambda s: changed.get(id(s), s), changed.keys())


__all__ = ["redact_argv", "redact_deep", "redact_tree"]
