"""The inventory of one run folder, item by item, streamed: nothing is held but small keys and digests.

Each function returns ``{key: value}`` for one item kind (values are short texts or digests); the pass
compares the two runs' mappings key by key. What the kinds already parsed is reused: the transform records
come from the parsed logs, the config from the config kind's effective configs, dump pairs the graph kind
found byte-identical are never read again.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import xxhash

from ad_diff.core import safepath
from ad_diff.core.text import LINE_CAP
from ad_diff.discover import DUMP_NAME, RunArtifacts
from ad_diff.discover.capture import CapturedLines
from ad_diff.errors import InputError
from ad_diff.explain.accounting.noise import LINE_NORMALISERS, TRANSFORM_LINE, fx_base, run_folder
from ad_diff.kinds.log.model import RunLog

CHUNK = 1 << 20
"""Bytes read at a time when hashing."""
RUN_JSON = "run.json"
RUN_JSON_LIMIT = 1 << 20
"""Bytes of ``run.json`` read at most (``ad-diff record`` writes about 2 KB)."""
TENSOR_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin")


def transforms(log: RunLog | None) -> dict[str, tuple[str, int | None, str, str]]:
    """``{rank/transform#occurrence: (state and count, rank, stage, transform)}`` for every rank."""
    out: dict[str, tuple[str, int | None, str, str]] = {}
    if log is None:
        return out
    for rk in log.rank_logs():
        for r in rk.transforms:
            value = r.state.value if r.matches is None else f"{r.state.value} {r.matches}"
            rank = "-" if rk.rank is None else str(rk.rank)
            key = f"{rank}/{r.transform}" + (f"#{r.occurrence}" if r.occurrence else "")
            out[key] = (value, rk.rank, r.stage, r.transform)
    return out


def _digest(text: str) -> bytes:
    # XXH3-128, as for dump bodies (kinds/graph/cache.py): memory speed, and 128 bits make an accidental
    # collision of two different lines no practical concern even over millions of log lines
    return xxhash.xxh3_128_digest(text.encode("utf-8", "surrogateescape"))


def _lines(art: RunArtifacts) -> Iterator[str]:
    """Every line of every log file of the run, decompressed, as text."""
    for lf in art.logs:
        # the log kind's own bounded, contained reader (line length, line count and decompression caps;
        # opened beneath the run folder), with the capture tools' line prefixes taken off as it takes them
        try:
            for _n, text, _complete, _launcher in CapturedLines(lf.path, "a log file", lf.root):
                yield text
        except InputError:
            continue  # the log kind reports an unreadable log; the records stand for it


class LineTally:
    """The log lines of both runs as the accounting counts them, signed (+ baseline, - candidate), by the
    digest of a line's text after each step of :data:`~ad_diff.explain.accounting.noise.LINE_NORMALISERS`.

    The timestamp step changes nearly every line and the other steps almost none, so the count of each step
    is not kept whole: ``raw`` counts the transform lines as written and ``moves[i]`` lists only the lines
    step ``i + 1`` changed (old digest, new digest, weight each); :meth:`steps` replays them. A line costs
    one count and one entry a step that changed it, where seven whole counters cost seven updates (a log
    with no line twice: 1.07 -> 0.92 s)."""

    __slots__ = ("names", "noise", "moves", "raw")

    def __init__(self) -> None:
        self.raw: dict[bytes, int] = {}
        self.moves: list[tuple[list[bytes], list[bytes], list[int]]] = [
            ([], [], []) for _ in LINE_NORMALISERS]
        self.noise: dict[bytes, int] = {}
        """The other lines, after every normaliser."""
        self.names: dict[bytes, str] = {}
        """The text of each final form of a transform line (the stage and transform are read from it only
        where a difference is reported)."""

    def steps(self) -> tuple[list[int], dict[bytes, int]]:
        """What is left over after each step, both runs together (the sum of the counts' magnitudes: raw
        first, then after each normaliser), and the counts after the last step."""
        now = dict(self.raw)
        left = sum(map(abs, now.values()))
        out = [left]
        for olds, news, weights in self.moves:
            for a, b, w in zip(olds, news, weights, strict=True):
                x = now[a]
                now[a] = x - w
                y = now.get(b, 0)
                now[b] = y + w
                left += abs(x - w) - abs(x) + abs(y + w) - abs(y)
            out.append(left)
        return out, now


def log_lines(art: RunArtifacts, sign: int, tally: LineTally) -> int:
    """Add the run's log lines to ``tally`` with ``sign`` (+1 baseline, -1 candidate); return the line
    count."""
    root = art.root
    # the loop below runs for every distinct line of a log: it looks nothing up by attribute and updates
    # the counts with dict.get (Counter's += calls __missing__)
    chain = [(rule.normalise, tally.moves[i]) for i, rule in enumerate(LINE_NORMALISERS) if rule.normalise]
    assert len(chain) == len(LINE_NORMALISERS)  # every line normaliser has one (noise.LINE_NORMALISERS)
    raw, noise, names = tally.raw, tally.noise, tally.names
    transform_line = TRANSFORM_LINE.search
    # Each distinct line is normalised once, counted as often as the run holds it: what is counted depends
    # on the run's lines as a multiset alone (the normalisers read a line and the run's folder), and a
    # verbose log repeats its lines (in first-appearance order, so each final form is named as before).
    lines = Counter(_lines(art))
    for text, many in lines.items():
        w = sign * many
        if transform_line(text) is None:  # no normaliser adds a transform prefix
            for normalise, _moves in chain:
                text = normalise(text, root)
            d = _digest(text)
            noise[d] = noise.get(d, 0) + w
            continue
        digest = _digest(text)
        raw[digest] = raw.get(digest, 0) + w
        for normalise, (olds, news, weights) in chain:
            before = text
            text = normalise(text, root)
            if text != before:  # most normalisers leave a line as it is: nothing moves
                new = _digest(text)
                if new != digest:
                    olds.append(digest)
                    news.append(new)
                    weights.append(w)
                    digest = new
        if digest not in names:  # most lines' final forms repeat: name each once
            names[digest] = text
    return lines.total()


_DEFINES = re.compile(r"^\s*%?(?P<name>[A-Za-z_]\w*)\s*(?:=|:)")
_TOKEN = re.compile(r"(?<![\w.])%?([A-Za-z_]\w*)(?![\w.])")


class _Canon:
    """The state of :func:`canonical_dump` over one dump: each defined name's FX base and rank so far."""

    __slots__ = ("names", "ranks")

    def __init__(self, names: dict[str, str] | None = None, ranks: Counter[str] | None = None) -> None:
        self.names: dict[str, str] = {} if names is None else dict(names)
        self.ranks: Counter[str] = Counter() if ranks is None else Counter(ranks)

    def define(self, line: str) -> str | None:
        """Record the name ``line`` defines (``None`` for a comment or a line that defines none)."""
        if line.startswith("#"):
            return None
        m = _DEFINES.match(line)
        if m is None or line.lstrip().startswith("output"):
            return None
        defined = m.group("name")
        base = fx_base(defined)
        self.ranks[base] += 1
        self.names[defined] = f"{base}#{self.ranks[base]}"
        return defined

    def text(self, line: str) -> str:
        """``line`` with every node named by its base and rank (call :meth:`define` on it first)."""
        if line.startswith("#"):
            return line
        names = self.names

        def sub(m: re.Match[str]) -> str:
            got = names.get(m.group(1))
            return m.group(0) if got is None else m.group(0).replace(m.group(1), got)

        return _TOKEN.sub(sub, line)


def _dump_lines(f: BinaryIO) -> Iterator[str]:
    for raw in iter(partial(f.readline, LINE_CAP), b""):  # bounded: a longer line is read in pieces
        yield raw.decode("utf-8", "replace").rstrip("\r\n")


def canonical_dump(path: Path) -> Iterator[tuple[str, str | None, str]]:
    """The dump's lines with every node named by its FX base and rank (``fx-counter-renames``), each with the
    original name of the node it defines (``None`` for other lines) and the line as written. Streams the
    file."""
    canon = _Canon()
    with _open(path, "a graph dump") as f:
        for line in _dump_lines(f):
            defined = canon.define(line)
            yield canon.text(line), defined, line


def dump_difference(base: Path, cand: Path) -> DumpCompared:
    """Compare two dumps canonically: ``(equal, node of the first differing line, its line number, the two
    lines as written)``.

    The same as comparing :func:`canonical_dump` of both line by line, without canonicalising the leading
    lines that are the same as written: those define the same names in the same order in both dumps, so
    both have the same names and ranks so far and give each the same canonical text. One state stands for
    both meanwhile; from the first line that differs as written each dump has its own."""
    with _open(base, "a graph dump") as fb, _open(cand, "a graph dump") as fc:
        b, c = _dump_lines(fb), _dump_lines(fc)
        canon = _Canon()
        n = 0
        while True:  # the leading lines the same as written
            n += 1
            lb, lc = next(b, None), next(c, None)
            if lb is None or lc is None or lb != lc:
                break
            canon.define(lb)
        cb, cc = canon, _Canon(canon.names, canon.ranks)
        while True:
            if lb is None and lc is None:
                return True, None, 0, ("", "")
            db = None if lb is None else cb.define(lb)
            dc = None if lc is None else cc.define(lc)
            if lb is None or lc is None or cb.text(lb) != cc.text(lc):
                node = (dc if lc is not None else None) or (db if lb is not None else None)
                return False, node, n, (_said(lb), _said(lc))
            n += 1
            lb, lc = next(b, None), next(c, None)


DumpCompared = tuple[bool, str | None, int, tuple[str, str]]
"""What :func:`dump_difference` returns."""
HEADER_LINES = 2
"""A dump's header (``# Transform:`` / ``# Stage:``): comments, so no name is defined before the body."""


class DumpComparisons:
    """:func:`dump_difference` with each pair of bodies compared once.

    A disabled or zero-match transform writes the graph it was given: its dump pair has the bodies an
    earlier pair had. The canonical comparison of two dumps is their headers compared as written (comment
    lines, which define no name) and then their bodies compared from an empty naming state, so a pair whose
    bodies were compared before and whose headers are equal has the earlier pair's result, line numbers
    and all. Only results that the headers did not decide are kept."""

    def __init__(self) -> None:
        self._seen: dict[tuple[bytes, bytes], DumpCompared] = {}

    def known(self, base: Path, cand: Path, bodies: tuple[bytes, bytes] | None) -> DumpCompared | None:
        """The result for ``base``/``cand`` if their bodies were compared before, else ``None``."""
        got = None if bodies is None else self._seen.get(bodies)
        return got if got is not None and _same_header(base, cand) else None

    def compare(self, base: Path, cand: Path, bodies: tuple[bytes, bytes] | None) -> DumpCompared:
        """:func:`dump_difference` of the pair, read only when its bodies were not compared before."""
        got = self.known(base, cand, bodies)
        if got is None:
            got = dump_difference(base, cand)
            if bodies is not None and (got[0] or got[2] > HEADER_LINES):
                self._seen[bodies] = got
        return got


def _same_header(base: Path, cand: Path) -> bool:
    """The two dumps' header lines are the same as written (``False`` if either cannot be read)."""
    try:
        with _open(base, "a graph dump") as fb, _open(cand, "a graph dump") as fc:
            return all(fb.readline(LINE_CAP) == fc.readline(LINE_CAP) for _ in range(HEADER_LINES))
    except (InputError, OSError):
        return False


def _said(line: str | None) -> str:
    """A dump line as written, as a short excerpt (``end of dump`` past the last line)."""
    if line is None:
        return "end of dump"
    text = line.strip()
    return text if len(text) <= 80 else text[:77] + "..."


def _hash_range(f: Any, begin: int, end: int) -> str:
    h = xxhash.xxh3_128()
    f.seek(begin)
    left = end - begin
    while left > 0:
        chunk = f.read(min(CHUNK, left))
        if not chunk:
            break
        h.update(chunk)
        left -= len(chunk)
    return h.hexdigest()


def _open(path: Path, what: str) -> BinaryIO:
    """``path`` opened beneath its own folder with no link followed (:func:`ad_diff.core.safepath.open_file`):
    the kinds vetted the listing; a file swapped for a link since is refused, not read."""
    return safepath.open_file(path, path.parent, what)


def _hash_file(path: Path) -> str:
    with _open(path, "a tensor file") as f:
        return _hash_range(f, 0, path.stat().st_size)


def _regular_files(folder: Path) -> Iterator[tuple[str, Path]]:
    """``(relative path, path)`` of the regular files under ``folder``, sorted; links (to files or folders)
    and FIFOs, sockets or devices are never opened (the tensor kind reports them: ADT008)."""
    for dirpath, dirnames, filenames in os.walk(folder):  # os.walk does not follow linked folders
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            yield p.relative_to(folder).as_posix(), p


def tensors(folder: Path | None, judged: dict[str, dict[str, str]]) -> dict[str, str]:
    """``{relative file:tensor name: dtype shape content}`` of every recorded tensor under ``tensors/``
    (references included, under ``reference/``).

    ``judged`` (file -> name -> value) holds what the tensor kind already compared: those entries take its
    value and are not read again. Other safetensors entries are hashed from their bytes (BLAKE2, 1 MiB at a
    time); other tensor files (``.pt``) are hashed whole."""
    out: dict[str, str] = {}
    if folder is None or not folder.is_dir():
        return out
    # lazy: the tensor header reader loads only when a run has tensors
    from ad_diff.kinds.tensors.header import read_header

    for rel, path in _regular_files(folder):
        if path.suffix not in TENSOR_SUFFIXES:
            continue
        if not stat.S_ISREG(path.lstat().st_mode):
            out[rel] = "not a regular file"
            continue
        seen = judged.get(rel, {})
        out.update({f"{rel}:{name}": value for name, value in seen.items()})
        try:
            if path.suffix != ".safetensors":
                if not seen:
                    out[rel] = f"file {_hash_file(path)}"
                continue
            _start, entries = read_header(path)
            with _open(path, "a safetensors file") as f:
                for name, (dtype, shape, begin, end) in sorted(entries.items()):
                    if name not in seen:
                        out[f"{rel}:{name}"] = f"{dtype} {list(shape)} {_hash_range(f, begin, end)}"
        except (InputError, OSError):
            out[rel] = "unreadable"  # the tensor kind reports it (ADT008)
    return out


def flatten(data: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(dotted.path, value as JSON)`` for every leaf of a mapping (lists are one value)."""
    if isinstance(data, dict) and data:
        for k in sorted(data, key=str):
            yield from flatten(data[k], f"{prefix}.{k}" if prefix else str(k))
    elif prefix:
        yield prefix, json.dumps(data, sort_keys=True, default=str)


def run_info(root: Path) -> dict[str, str]:
    """``run.json`` flattened (the run folder's own path in a value reads ``<run>``); empty if absent.

    Opened beneath the run folder (a link out of it, a FIFO: refused, never read) and parsed by the one
    bounded JSON reader (depth, digits, duplicate keys, :data:`RUN_JSON_LIMIT` bytes)."""
    path = root / RUN_JSON
    try:
        data = safepath.read_json(path, root, "the run.json ad-diff record writes", RUN_JSON_LIMIT)
    except InputError:
        return {RUN_JSON: "unreadable"} if safepath.present(path) else {}
    return {k: run_folder(v, root) for k, v in flatten(data)}


def files(root: Path, claimed: set[Path]) -> dict[str, str]:
    """``{relative path: size}`` of every file under ``root`` that no kind reads (``claimed`` are those read:
    logs, dumps, tensors, configs, run.json). Links are not followed."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p in claimed or p.is_symlink():
                continue
            rel = p.relative_to(root).as_posix()
            if rel.startswith("graphs/") and DUMP_NAME.match(name):
                continue
            if rel.startswith("tensors/") and p.suffix in TENSOR_SUFFIXES:
                continue
            if rel.startswith("config/") or (rel.count("/") == 0 and p.suffix in (".yaml", ".yml")):
                continue
            try:
                out[rel] = f"{p.stat().st_size} bytes"
            except OSError:
                out[rel] = "unreadable"
    return out
