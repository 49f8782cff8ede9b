"""Names that differ only by look-alike characters: ``mаtch_rope_pattern`` (a Cyrillic ``а``) reads as
``match_rope_pattern`` and, compared by code point, makes that transform "absent" in one run and "new" in the
other. :func:`skeleton` maps a name to the form a reader sees (Unicode compatibility forms folded, invisible
and format characters dropped, the Cyrillic and Greek letters that look like Latin ones mapped to them, in
the spirit of Unicode's confusable skeletons, UTS #39); two different names with one skeleton are
confusable (:func:`confusable_pairs`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from ad_diff.core.sinks import unsafe

_LOOK_ALIKE = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "һ": "h", "ӏ": "l", "ɡ": "g", "ʏ": "y",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W",
    # Greek
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "γ": "y", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # digits and punctuation that pass for others
    "０": "0", "ℓ": "l", "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-", "＿": "_", "․": ".",
})


def skeleton(name: str) -> str:
    """``name`` as a reader sees it (see the module docstring)."""
    folded = unicodedata.normalize("NFKC", name).translate(_LOOK_ALIKE)
    # ASCII stays as written: two ASCII names that differ (``x1``, ``xl``) are a rename, not a disguise
    return "".join(ch for ch in folded if not unsafe(ch))


def confusable_pairs(first: Iterable[str], second: Iterable[str]) -> list[tuple[str, str]]:
    """``(a, b)`` for every name ``a`` of ``first`` and ``b`` of ``second`` that differ but look alike (one
    skeleton), ``a`` not in ``second`` and ``b`` not in ``first``; sorted."""
    a_names, b_names = set(first), set(second)
    by_skeleton: dict[str, list[str]] = {}
    for b in sorted(b_names - a_names):
        by_skeleton.setdefault(skeleton(b), []).append(b)
    return sorted((a, b) for a in a_names - b_names for b in by_skeleton.get(skeleton(a), ()))


def differences(a: str, b: str) -> str:
    """Where ``a`` and ``b`` differ, character by character, as ``U+0430 CYRILLIC SMALL LETTER A for 'a'``
    (at most three, then how many more)."""
    out = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            out.append(f"U+{ord(y):04X} {unicodedata.name(y, 'unnamed')} for U+{ord(x):04X} "
                       f"{unicodedata.name(x, 'unnamed')}")
    if len(a) != len(b):
        out.append(f"{abs(len(a) - len(b))} invisible or compatibility character(s)")
    return "; ".join(out[:3]) + (f"; and {len(out) - 3} more" if len(out) > 3 else "")


__all__ = ["confusable_pairs", "differences", "skeleton"]
