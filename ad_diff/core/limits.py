"""Every cap on what a reader takes from its input, in one place (docs/bad-input.md, "Bounded readers").

Invariant: each reader is bounded by its input. Bytes, line length, line count, items (transforms, ranks,
tensors, ...) and nesting depth each have a cap here, derived from the input's size or a constant; the
reader that produces the lines or items enforces it (the shared line reader :func:`ad_diff.core.text.
iter_lines`, the log parser's state, the tensor indexes, the one JSON reader :mod:`ad_diff.core.jsonsafe`),
so work and memory stay linear in the input. Going over a cap is an :class:`~ad_diff.errors.InputError`
naming the file and the cap (exit 2, or an input finding such as ADT008 for one tensor file), never a
``MemoryError`` or minutes of CPU. The values are far above anything AutoDeploy writes; each says why.
"""

from __future__ import annotations

from pathlib import Path

from ad_diff.errors import InputError

# -- logs: bytes and lines (enforced by ad_diff.core.text.iter_lines) ------------------------------------
LOG_LINE_BYTES = 1 << 20
"""Longest log line kept (1 MiB): the rest of a longer line is skipped in bounded pieces, so one endless
line (a sparse 2 GiB file, a decompression bomb) cannot take the memory. No AutoDeploy line comes near it."""
DECOMPRESS_RATIO = 250
"""Decompressed bytes allowed per compressed byte (text logs compress 5-50 fold; bombs 1000 fold and more)."""
DECOMPRESS_FLOOR = 256 << 20
"""A compressed log may always decompress to this much, however small it is."""
DECOMPRESS_CEILING = 8 << 30
"""And never to more than this."""
LOG_SNIFF_CHARS = 16 << 20
"""Characters of a log's head held while its capture prefixes are sniffed (at most 20,000 lines of it):
20,000 lines of 1 MiB would be 20 GiB."""
LOG_LINES_PER_BYTE = 16
"""Lines a compressed log may hold per byte of the compressed file: an AutoDeploy log's line takes 5 to 20
compressed bytes; a stream of empty lines compresses a thousand fold (64 KB held 256 million lines)."""
LOG_LINES_FLOOR = 1_000_000
"""Lines any log may hold, however small its file."""
LOG_LINES_CEILING = 20_000_000
"""Lines no log may exceed (plain or compressed; about 20 s of parsing): AutoDeploy logs, debug output
included, hold tens of thousands."""


def decompressed_limit(size: int) -> int:
    """The most bytes a compressed file of ``size`` bytes may decompress to."""
    return min(DECOMPRESS_CEILING, max(DECOMPRESS_FLOOR, DECOMPRESS_RATIO * size))


def line_limit(size: int, compressed: bool) -> int:
    """The most lines a log file of ``size`` bytes on disk may hold (a plain file's size bounds its lines
    already; a compressed one's lines are bounded by its compressed size)."""
    if not compressed:
        return LOG_LINES_CEILING
    return min(LOG_LINES_CEILING, max(LOG_LINES_FLOOR, LOG_LINES_PER_BYTE * size))


# -- logs: items (enforced by ad_diff.kinds.log.state.LogParser) -----------------------------------------
LOG_TRANSFORMS = 10_000
"""Transform results one pipeline of one rank may hold: AutoDeploy runs about 100 transforms (the report
tests build 2,500); a pipeline restart (a transform seen twice) starts a new count."""
LOG_PIPELINES = 10_000
"""Pipeline restarts (retries) one rank may log."""
LOG_RANKS = 4_096
"""Distinct ranks (``[RANK n]`` tags, launcher tags, per-rank files) one run may hold."""
LOG_ISSUES = 10_000
"""Lines that look like AutoDeploy results but cannot be read, and results without a start, per run."""
LOG_ERRORS = 100_000
"""Tracebacks and fatal signals per run (each kept to tell how a rank ended)."""

# -- graph dumps (enforced by ad_diff.discover.dumps.scan) --------------------------------------------
GRAPH_DUMPS = 10_000
"""Files named like a graph dump in one ``graphs/``: AutoDeploy writes one per transform (about 100)."""
GRAPH_DUMP_LINES = 500_000
"""Lines of one graph dump (each holds at most one node), counted before it is parsed: what a dump costs is
its nodes, not its bytes (a parsed node takes about 600 bytes; a 244 MiB dump of 3 million nodes, under the
byte cap, ended in MemoryError). An 80-layer model's dumps hold about 5,000 lines; an MoE whose experts
are unrolled, tens of thousands."""

# -- tensors (enforced by the tensor indexes: header.read_header, pt.load_pt, parse.discover) ------------
TENSORS_PER_FILE = 20_000
"""Tensors one ``.safetensors`` or ``.pt`` file may list: a per-node capture of a large model holds a few
thousand (comparing takes about half a millisecond a tensor)."""
TENSORS_PER_RUN = 50_000
"""Tensors over all files of a run's ``tensors/`` folder; the files past it are reported unread."""
PICKLE_STREAMS = 5
"""Pickles a legacy (non-zip) ``torch.save`` file holds before its storage bytes: magic number, protocol,
system info, the object, the storage keys. Every one is walked and validated before torch reads the file."""

# -- JSON and numbers (enforced by ad_diff.core.jsonsafe and the parsers that read digits) -----------------
JSON_DEPTH = 64
"""Nesting of the JSON files ad-diff reads besides safetensors headers (``run.json``, the history cache, the
GitHub event file): they nest at most 5 levels. Python's parser raises RecursionError near 1,000; the one
JSON reader (:mod:`ad_diff.core.jsonsafe`) measures the nesting before it parses."""
INT_DIGITS = 20
"""Digits of an integer parsed from JSON (:func:`ad_diff.core.jsonsafe.parse`, safetensors headers) or taken
as a layer number by ``ad-diff candidates``: 20 digits hold any 64-bit value. Longer digit strings are
refused (in a name: no layer index), never handed to ``int()``. (The log parser's counts and ranks are its
own: ``int()`` refusing more than 4,300 digits is an input error naming the line.)"""
def digits(text: str, most: int = INT_DIGITS) -> int | None:
    """``text`` as a number when it is one to a reader of AD's output: ASCII digits only, at most ``most``
    of them; ``None`` otherwise. ``str.isdigit`` is no such test: ``²`` and other Unicode digits pass it
    and ``int()`` refuses them, as it refuses more than 4,300 digits (crashes found by the fuzz runs)."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= most else None


def count(text: str) -> int:
    """A count, rank or counter written as digits, refused (``ValueError``) beyond :data:`INT_DIGITS`: every
    number that sizes something or meets a float downstream comes through here (a 310-digit match count
    crashed the HTML report's axis; a 9-digit layer number sized a 400-million-element range)."""
    if len(text.lstrip("-")) > INT_DIGITS:
        raise ValueError(f"a number of {len(text.lstrip('-')):,} digits (the cap INT_DIGITS is {INT_DIGITS})")
    return int(text)


HISTORY_CACHE_BYTES = 1 << 30
"""Size of an ``ad-diff history --cache`` file read (larger: rebuilt): about 40 bytes per transform of each
run, so a million runs of 25 transforms."""
def count_cap(path: Path, what: str, cap: int, name: str, line: int | None = None) -> InputError:
    """The error for more than ``cap`` ``what`` in ``path`` (``name``: the cap's name in this module;
    ``line``: where the cap was passed)."""
    return InputError(path, f"holds more than {cap:,} {what} (the cap {name} of docs/bad-input.md, "
                            "\"Bounded readers\"); refused rather than read without bound", line)
