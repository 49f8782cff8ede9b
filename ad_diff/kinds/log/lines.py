"""The grammar of one AutoDeploy log line (FORMATS.md §1): logger prefixes L1-L3 and messages V0-V3.

:func:`split` cuts a line into (prefix kind, rank, level, message); the patterns below read the message.
Nothing here keeps state: the per-rank state machine is :mod:`ad_diff.kinds.log.parse`.
"""

from __future__ import annotations

import re

from ad_diff.core import limits

WHAT = "an AutoDeploy log (lines like '[stage=..., transform=...] [SUMMARY] matches=N')"
"""What a log file is expected to be, for error messages."""

# L1: TRT-LLM Logger subclass. Optional timestamp; optional rank before the level tag, or (newer base
# logger) a caller-package tag padded to 8 characters ('[_torch  ]') and the rank after it; a shorter tag is
# the message's own ('[cache] Loaded graph ...').
_L1 = re.compile(
    r"^(?:\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] )?\[TRT-LLM AUTO-DEPLOY\](?: \[RANK (\d+)\])? \[([FEWIVD])\]"
    r"(?: \[[A-Za-z_][\w .]{7,}\])?(?: \[RANK (\d+)\])?(?: (.*))?$"
)
# L2/L3: standalone python logger on stderr; L2's *_once methods nest a second '[AUTO-DEPLOY] [RANK n]'.
_L23 = re.compile(r"^\[AUTO-DEPLOY\] \[(CRITICAL|ERROR|WARNING|INFO|DEBUG)\](?: \[RANK (\d+)\])?(?: (.*))?$")
_NESTED = re.compile(r"^\[AUTO-DEPLOY\](?: \[RANK (\d+)\])? ?(.*)$")

TRANSFORM = re.compile(r"^\[stage=([a-z_][a-z0-9_]*), transform=(\w+)\] ?(.*)$")
"""V1-V3 context prefix ``[stage=<s>, transform=<t>]`` and the rest of the message."""
V0 = re.compile(r"^stage=([a-z_][a-z0-9_]*), transform=(\w+), (.*)$")
"""V0's bracket-less result line ``stage=<s>, transform=<t>, num_matches=N, ...``."""
SUMMARY = re.compile(
    r"^\[SUMMARY\] (?:(?:matches=(\d+)|(skipped))(?: \| time: ([\d.]+)s \(pre=([\d.]+)s, apply=([\d.]+)s, "
    r"post=([\d.]+)s\))?|(disabled))$"
)
"""V3 result: groups 1 matches, 2 ``skipped``, 3-6 total/pre/apply/post seconds, 7 ``disabled``."""
ELAPSED = re.compile(
    r"^elapsed time: total=([\d.]+)s, pre_cleanup=([\d.]+)s, apply=([\d.]+)s, post_cleanup=([\d.]+)s$"
)
"""V2 timing line, printed after the result line."""
FAILED = re.compile(r"^(?:\[APPLY\] )?Transform (\w+) failed: ?(.*)$")
"""A failure swallowed by ``skip_on_error``: group 1 the transform, group 2 the exception text."""
_KV = re.compile(r"^(\w+)=(\S+)$")
START_MARKERS = ("[PRE-CLEANUP]", "[APPLY]", "[POST-CLEANUP]", "running ", "applying transform")
"""Messages a transform logs before its result line (so a result is now pending)."""
CLAIMED = re.compile(
    r"^(?:\[(?:PRE|POST)-CLEANUP\] |applying transform\.\.\.$"
    r"|running (?:pre-cleanup|post-cleanup|graph cleanup)\b"
    r"|\[CUDA MEM(?: DIFF \((?:EXPECTED|UNEXPECTED)\))?\] |\w+ config: |(?:Model|Graph) after \w+:"
    r"|Graph dumping enabled to: |\[\d+\] Visualized gm_"
    r"|(?:Saved|Restored) AutoDeploy pipeline snapshot |Skipping pipeline snapshot |Skipping boundary "
    r"|Pipeline snapshot manifest mismatch |\[cache\] |\[AD_VA_PROBE\]|\[dtype_metadata\] )"
)
"""Messages of a transform's context that ad-diff reads or knows to be how a run printed (FORMATS.md 1.2 and
7): cleanup and apply markers, memory lines, debug reprs, the dump folder, visualisation, cache book-keeping,
and the output of diagnostics a user switches on (``AD_VA_PROBE``, dtype-metadata dumps).
Every other message a transform logs is a fact the reader does not claim (:attr:`TransformRecord.said`)."""
LEVEL_WORDS = {"F": "critical", "E": "error", "W": "warning", "I": "info", "V": "debug", "D": "debug",
               "CRITICAL": "critical", "ERROR": "error", "WARNING": "warning", "INFO": "info",
               "DEBUG": "debug", "": "info"}
"""Each logger's level tag as one word (L1 ``[I]`` and L2/L3 ``[INFO]`` are the same level); a line with
no logger prefix counts as info."""

LEVELS_FATAL = frozenset({"F", "E", "CRITICAL", "ERROR"})
EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)|Segmentation fault|Killed)\b")
"""The closing line of a traceback (``torch.OutOfMemoryError: ...``) or a fatal signal."""

Split = tuple[str, "int | None", str, str]
"""``(prefix kind, rank, level, message)``: prefix ``L1``/``L2``/``L3``/``bare``."""


def kv_pairs(text: str) -> dict[str, str] | None:
    """Parse ``a=1, b=True, ...``; None if any part is not ``key=value``."""
    out: dict[str, str] = {}
    for part in text.split(", "):
        m = _KV.match(part.strip())
        if not m:
            return None
        out[m.group(1)] = m.group(2)
    return out


_RANKS: dict[str, int] = {}
"""Rank tags read so far (a log has a handful, on every line): :func:`limits.count` once each."""


def _rank(tag: str) -> int:
    got = _RANKS.get(tag)
    if got is None:
        got = limits.count(tag)
        if len(_RANKS) < 4096:  # bounded whatever the logs hold
            _RANKS[tag] = got
    return got


def split(text: str) -> Split | None:
    """Return (prefix kind, rank, level, message) for AD lines, None for other lines."""
    m = _L1.match(text)
    if m:
        rank = m.group(1) or m.group(3)
        return "L1", _rank(rank) if rank else None, m.group(2), m.group(4) or ""
    m = _L23.match(text)
    if m:
        rank, msg = m.group(2), m.group(3) or ""
        n = _NESTED.match(msg)
        if n:  # L2 *_once lines: '[AUTO-DEPLOY] [WARNING] [AUTO-DEPLOY] [RANK 0] msg'
            rank, msg = rank or n.group(1), n.group(2)
        return ("L3" if rank is not None else "L2"), _rank(rank) if rank else None, m.group(1), msg
    if text.startswith("[stage=") or V0.match(text):
        return "bare", None, "", text
    return None
