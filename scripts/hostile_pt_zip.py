"""Hostile ``.pt`` archives (issue 14, round three): a real ``torch.save`` file with one zip header field
edited, each of which once made Python's zipfile raise past the pickle pre-scan (exit 3).

Every variant starts from the committed ``fixtures/tensors/synthetic/pt_dict/baseline/tensors/outputs.pt``
(so the bytes are the same on every build) and edits the central directory entry of ``outputs/data.pkl``,
its local header, or both. :data:`VARIANTS` maps a name to a function of the source bytes; the unit tests
(tests/unit/kinds/tensors/test_pt_archive.py), the fuzz reproducers (tests/fuzz/reproducers/pt/) and the
corpus cases below all use it. Imported by make_hostile_fixtures.py, which sets :data:`h`.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

h: Any = None
"""make_hostile_fixtures itself (its run-folder helpers), set by it when it imports this module."""

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "fixtures/tensors/synthetic/pt_dict/baseline/tensors/outputs.pt"
PKL = b"outputs/data.pkl"


def central(raw: bytes, name: bytes = PKL) -> int:
    """Offset of the central directory entry of ``name``."""
    i = raw.find(b"PK\x01\x02")
    while i >= 0:
        n = struct.unpack_from("<H", raw, i + 28)[0]
        if raw[i + 46 : i + 46 + n] == name:
            return i
        i = raw.find(b"PK\x01\x02", i + 4)
    raise KeyError(name)


def local(raw: bytes, name: bytes = PKL) -> int:
    """Offset of the local file header of ``name`` (as its central entry says)."""
    return int(struct.unpack_from("<I", raw, central(raw, name) + 42)[0])


def _end(raw: bytes) -> int:
    return raw.rfind(b"PK\x05\x06")


def _grow_directory(raw: bytes, at: int, insert: bytes, entries: int = 0) -> bytes:
    """``insert`` put at ``at`` inside the central directory, whose size (and entry count) the end records
    then say: the classic one and torch's zip64 one with its locator (Python reads the zip64 one)."""
    out = bytearray(raw[:at] + insert + raw[at:])
    end = _end(bytes(out))
    z64 = out.rfind(b"PK\x06\x06", 0, end)
    struct.pack_into("<I", out, end + 12, struct.unpack_from("<I", out, end + 12)[0] + len(insert))
    count = struct.unpack_from("<H", out, end + 10)[0] + entries
    struct.pack_into("<HH", out, end + 8, min(count, 0xFFFF), min(count, 0xFFFF))
    if z64 >= 0:
        size, = struct.unpack_from("<Q", out, z64 + 40)
        total, = struct.unpack_from("<Q", out, z64 + 32)
        struct.pack_into("<QQQ", out, z64 + 24, total + entries, total + entries, size + len(insert))
        loc = out.rfind(b"PK\x06\x07", 0, end)
        struct.pack_into("<Q", out, loc + 8, struct.unpack_from("<Q", out, loc + 8)[0] + len(insert))
    return bytes(out)


def patch(raw: bytes, offset: int, fmt: str, value: int) -> bytes:
    """``raw`` with ``struct.pack(fmt, value)`` written at ``offset``."""
    out = bytearray(raw)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def flags(raw: bytes, bits: int) -> bytes:
    """data.pkl's general-purpose flag ``bits`` set, in the central entry and the local header."""
    c, lo = central(raw), local(raw)
    value = struct.unpack_from("<H", raw, c + 8)[0] | bits
    return patch(patch(raw, c + 8, "<H", value), lo + 6, "<H", value)


def method(raw: bytes, number: int) -> bytes:
    """data.pkl's compression method set to ``number`` (its bytes unchanged: still stored)."""
    c, lo = central(raw), local(raw)
    return patch(patch(raw, c + 10, "<H", number), lo + 8, "<H", number)


def version(raw: bytes, needed: int) -> bytes:
    """data.pkl's "version needed to extract" (central entry) set to ``needed`` (122 is 12.2)."""
    return patch(raw, central(raw) + 6, "<H", needed)


def name_byte(raw: bytes, value: int, where: str = "both") -> bytes:
    """The first byte of data.pkl's name replaced (the UTF-8 flag, bit 11, stays set)."""
    out = bytearray(raw)
    if where in ("both", "central"):
        out[central(raw) + 46] = value
    if where in ("both", "local"):
        out[local(raw) + 30] = value
    return bytes(out)


def header_offset_zip64(raw: bytes, offset: int) -> bytes:
    """data.pkl's local header offset moved to ``offset`` through a zip64 extra field (8 bytes: any value
    up to 2**64 - 1; Python's seek refuses those past 2**63)."""
    c = central(raw)
    name_len, extra_len = struct.unpack_from("<HH", raw, c + 28)
    extra = struct.pack("<HHQ", 1, 8, offset)
    out = bytearray(_grow_directory(raw, c + 46 + name_len + extra_len, extra))
    struct.pack_into("<H", out, c + 30, extra_len + len(extra))
    struct.pack_into("<I", out, c + 42, 0xFFFFFFFF)
    return bytes(out)


def directory_shifted(raw: bytes, by: int) -> bytes:
    """The end record's central directory offset raised by ``by``: every member's local header then lies
    ``by`` bytes earlier than written (data.pkl, at 0, before the file's start)."""
    end = _end(raw)
    out = patch(raw, end + 16, "<I", struct.unpack_from("<I", raw, end + 16)[0] + by)
    z64 = out.rfind(b"PK\x06\x06", 0, end)
    return patch(out, z64 + 48, "<Q", struct.unpack_from("<Q", out, z64 + 48)[0] + by) if z64 >= 0 else out


def rezip(raw: bytes, pkl: bytes, compress: int, file_size: int | None = None,
          crc: int | None = None) -> bytes:
    """The same archive with data.pkl replaced by ``pkl``, written with method ``compress``; its central
    entry may then claim another ``file_size`` or ``crc``."""
    src, out = zipfile.ZipFile(io.BytesIO(raw)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            data = pkl if info.filename.encode() == PKL else src.read(info)
            kind = compress if info.filename.encode() == PKL else zipfile.ZIP_STORED
            z.writestr(zipfile.ZipInfo(info.filename, info.date_time), data, compress_type=kind)
    new = out.getvalue()
    c = central(new)
    if file_size is not None:
        new = patch(new, c + 24, "<I", file_size)
    if crc is not None:
        new = patch(new, c + 16, "<I", crc)
    return new


def pickle_of(raw: bytes) -> bytes:
    """The data.pkl bytes of ``raw``."""
    return zipfile.ZipFile(io.BytesIO(raw)).read(PKL.decode())


def deflate_bomb(raw: bytes, inflated: int = 1 << 30) -> bytes:
    """data.pkl deflated with ``inflated`` zero bytes after the real pickle; the central entry claims the
    real pickle's size and CRC (about 1 MB on disk for 1 GiB; zipfile's read() once inflated all of it)."""
    pkl = pickle_of(raw)
    return rezip(raw, pkl + bytes(inflated), zipfile.ZIP_DEFLATED, len(pkl), zlib.crc32(pkl))


def directory_bomb(raw: bytes, entries: int) -> bytes:
    """``entries`` extra central directory entries (copies of ``outputs/version``'s, renamed), all pointing
    at its one local header: a directory of ``entries * 64`` more bytes over no data."""
    c = central(raw, b"outputs/version")
    n, e, m = struct.unpack_from("<HHH", raw, c + 28)
    entry = raw[c : c + 46 + n + e + m]
    head = bytearray(entry[:46])
    struct.pack_into("<H", head, 28, len(b"outputs/v000000000"))
    body = b"".join(bytes(head) + b"outputs/v%09d" % i + entry[46 + n :] for i in range(entries))
    return _grow_directory(raw, c, body, entries)


EVIL = b"\x80\x02cposix\nsystem\nX\x04\x00\x00\x00trueq\x00\x85R."
"""A pickle that would call ``os.system('true')``."""


def two_archives(raw: bytes, pickle: bytes = EVIL) -> bytes:
    """Two archives in one file: a copy of ``raw`` whose data.pkl is ``pickle`` (padded to the same
    length), without its end records, then ``raw`` itself. zipfile takes the first part for data before
    the archive and reads the second one's data.pkl; torch's reader (miniz) does not shift offsets, so the
    second archive's directory offset leads it to the first archive's directory and its data.pkl."""
    pkl = pickle_of(raw)
    pad = len(pkl) - len(pickle) - 6  # BINUNICODE and its length (5 bytes) and POP, before its own opcodes
    assert pad >= 0, "the pickle must be shorter than the source's data.pkl"
    padded = pickle[:2] + b"X" + struct.pack("<I", pad) + b"A" * pad + b"0" + pickle[2:]
    assert len(padded) == len(pkl)
    lo, c = local(raw), central(raw)
    name_len, extra_len = struct.unpack_from("<HH", raw, lo + 26)
    start = lo + 30 + name_len + extra_len
    first = bytearray(raw)
    first[start : start + len(pkl)] = padded
    crc = zlib.crc32(padded)
    struct.pack_into("<I", first, c + 16, crc)
    if first[start + len(pkl) : start + len(pkl) + 4] == b"PK\x07\x08":  # torch writes a data descriptor
        struct.pack_into("<I", first, start + len(pkl) + 4, crc)
    return bytes(first[: bytes(first).rfind(b"PK\x06\x07")]) + raw


VARIANTS: dict[str, Callable[[bytes], bytes]] = {
    "flag_bit5_patched": lambda r: flags(r, 1 << 5),
    "version_12_2": lambda r: version(r, 122),
    "flag_bit6_strong_encryption": lambda r: flags(r, 1 << 6),
    "encrypted": lambda r: flags(r, 1),
    "method_deflate64": lambda r: method(r, 9),
    "method_aes": lambda r: method(r, 99),
    "method_bzip2": lambda r: method(r, 12),
    "method_lzma": lambda r: method(r, 14),
    "deflate_corrupt": lambda r: method(r, 8),
    "crc_mismatch": lambda r: patch(r, central(r) + 16, "<I", 0xDEADBEEF),
    "name_not_utf8": lambda r: name_byte(r, 0xFF),
    "name_not_utf8_local": lambda r: name_byte(r, 0xFF, "local"),
    "name_differs": lambda r: name_byte(r, ord("x"), "local"),
    "header_offset_negative": lambda r: directory_shifted(r, 100),
    "header_offset_2_63": lambda r: header_offset_zip64(r, 1 << 63),
    "two_archives": two_archives,
    "member_past_the_end": lambda r: patch(patch(r, central(r) + 20, "<I", 1 << 20), central(r) + 24, "<I",
                                           1 << 20),
}
"""Each way to break data.pkl's headers, by name (function of the source archive's bytes)."""


def variant(name: str) -> bytes:
    """The bytes of variant ``name``, made from :data:`SOURCE`."""
    return VARIANTS[name](SOURCE.read_bytes())


# ----------------------------------------------------------------------------------- corpus cases


def _case(d: Path, cand: bytes) -> None:
    """Baseline: the source archive; candidate: ``cand`` as ``tensors/outputs.pt``."""
    b, c = h._pair(d)
    for run, data in ((b, SOURCE.read_bytes()), (c, cand)):
        (run / "tensors").mkdir()
        (run / "tensors" / "outputs.pt").write_bytes(data)


def _corpus(name: str) -> Callable[[Path], None]:
    def build(d: Path) -> None:
        _case(d, variant(name))

    build.__name__ = f"pt_zip_{name}"
    build.__doc__ = f"The candidate's outputs.pt with data.pkl's zip headers edited: {name}."
    return build


def pt_zip_deflate_bomb(d: Path) -> None:
    """A 1 MB outputs.pt whose data.pkl inflates to 1 GiB (the central entry claims 269 bytes)."""
    _case(d, deflate_bomb(SOURCE.read_bytes()))


CASES: dict[str, Callable[[Path], None]] = {f.__name__: f for f in (
    *(_corpus(n) for n in ("flag_bit5_patched", "version_12_2", "flag_bit6_strong_encryption", "encrypted",
                           "method_lzma", "deflate_corrupt", "name_not_utf8", "header_offset_2_63",
                           "two_archives")),
    pt_zip_deflate_bomb,
)}
#: 1 MB on disk: built at test time.
RUNTIME_ONLY = frozenset({"pt_zip_deflate_bomb"})


LONG_GLOBAL = b"\x80\x02c" + b"a" * 40_000 + b"\nb\n)R."
"""A pickle naming a 40 KB global (torch spends 16 s on it inside its error message)."""


def pt_pickle_then_zip(d: Path) -> None:
    """A pickle naming a 40 KB global with a whole torch.save archive appended: zipfile.is_zipfile finds the
    archive's end record, so the pre-scan read the archive, while torch.load (a file that does not start
    with a local header is legacy) unpickled the prefix: 29 CPU-seconds in torch."""
    _case(d, LONG_GLOBAL + SOURCE.read_bytes())


CASES[pt_pickle_then_zip.__name__] = pt_pickle_then_zip
