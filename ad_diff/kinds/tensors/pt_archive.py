"""The pickle of a ``torch.save`` zip archive, read with every failure of :mod:`zipfile` made an input error.

Python's zipfile raises far more than ``BadZipFile`` on a hostile archive: ``NotImplementedError`` (flag
bits 5 and 6, "version needed to extract" above 6.3, compression methods it lacks), ``RuntimeError`` (an
encrypted member), ``zlib.error`` (corrupt deflate data), ``EOFError`` (a member cut short),
``UnicodeDecodeError`` (a name flagged UTF-8 that is not), and on other Python versions ``struct.error``.
:func:`read_pickle` checks what it can before opening ``data.pkl`` (so the message says what was expected),
turns whatever else zipfile raises into an :class:`~ad_diff.errors.InputError` naming the file, and bounds
the work: the central directory and the decompressed pickle are capped (a 1 MB deflate stream once
inflated to 2 GiB before its size was checked). :func:`check_torch_agrees` then makes sure torch's own zip
reader finds the same ``data.pkl``.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ad_diff.core import lazy
from ad_diff.errors import InputError

if TYPE_CHECKING:
    import torch
else:
    torch = lazy.module("torch")

MAX_DIRECTORY = 8 * 1024 * 1024
"""Bytes of zip central directory: torch.save writes about 100 per storage, so 80,000 storages; every entry
becomes a Python object of about 1 KiB while the directory is parsed."""
_EXPECTED = "expected a torch.save archive (stored or deflated members, zip version 6.3 or older)"
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated", zipfile.ZIP_BZIP2: "bzip2",
            zipfile.ZIP_LZMA: "lzma", 9: "deflate64", 98: "ppmd", 99: "AES-encrypted"}  # fmt: skip
_FLAGS = {0x1: "is encrypted (zip flag bit 0)", 0x20: "is compressed patched data (zip flag bit 5)",
          0x40: "uses strong encryption (zip flag bit 6)"}  # fmt: skip
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError,
               ValueError, struct.error, zlib.error, OverflowError, KeyError, IndexError)  # fmt: skip
"""What zipfile raises on bad archives (ValueError includes UnicodeDecodeError)."""


def read_pickle(path: Path, f: IO[bytes], limit: int) -> tuple[bytes, tuple[int, int]]:
    """The bytes of the archive's one ``data.pkl`` (at most ``limit``), and where its data starts in the
    file with its size (for :func:`check_torch_agrees`); ``f`` is ``path`` opened."""
    _check_directory(path, f)
    try:
        with zipfile.ZipFile(f) as z:
            pkl = [i for i in z.infolist() if i.filename.endswith("data.pkl")]
            if len(pkl) != 1:
                raise InputError(path, "not a torch.save archive: expected exactly one data.pkl")
            info = pkl[0]
            _check_member(path, info, f, limit)
            with z.open(info) as member:
                data = member.read(limit + 1)[:limit]  # never more: a deflate bomb stops here
            f.seek(info.header_offset + 26)  # the local header's name and extra lengths (open checked it)
            name_len, extra_len = struct.unpack("<HH", f.read(4))
            return data, (info.header_offset + 30 + name_len + extra_len, info.file_size)
    except InputError:
        raise
    except _ZIP_ERRORS as e:
        raise InputError(path, f"not a readable torch.save archive: {_why(e)}; {_EXPECTED}") from None


def check_torch_agrees(path: Path, where: tuple[int, int], source: Path | None = None) -> None:
    """Refuse an archive in which torch's own zip reader (the one torch.load uses) finds ``data.pkl``
    elsewhere than zipfile did (``where``: data offset and size), so that the pickle pre-scanned is the one
    torch unpickles. The readers differ on crafted archives: zipfile shifts every offset when data precedes
    the archive and miniz does not (a second archive in front is then read by torch alone), zip64 records
    are found differently, miniz matches names regardless of case."""
    try:
        reader = torch._C.PyTorchFileReader(str(source or path))  # source: the file load_pt opened
        seen = (reader.get_record_offset("data.pkl"), reader.get_record_size("data.pkl"))  # type: ignore[attr-defined]
    except AttributeError:  # a torch without these bindings: the scan of zipfile's data.pkl stands alone
        return
    except Exception:  # noqa: BLE001 - torch cannot read the archive: torch.load fails next, reported there
        return
    if seen != where:
        raise InputError(path, f"torch's zip reader finds data.pkl at byte {seen[0]:,} ({seen[1]:,} bytes), "
                               f"Python's at byte {where[0]:,} ({where[1]:,} bytes): the archive reads "
                               "differently to the two, so the pickle pre-scanned is not the one torch would "
                               f"load; {_EXPECTED}")


def _check_directory(path: Path, f: IO[bytes]) -> None:
    """Refuse a central directory over :data:`MAX_DIRECTORY` before zipfile builds an object per entry."""
    # zipfile's own end-of-directory reader (private, present from 3.8 to 3.14): the size it reports is the
    # one ZipFile then parses, zip64 included. Without it the cap is skipped, never the file.
    end_record = getattr(zipfile, "_EndRecData", None)
    if end_record is None:
        return
    try:
        rec = end_record(f)
    except _ZIP_ERRORS + (OSError,):
        return  # ZipFile raises the same error again, and it is reported there
    finally:
        f.seek(0)
    if rec and rec[5] > MAX_DIRECTORY:
        raise InputError(path, f"zip directory of {rec[5]:,} bytes exceeds the {MAX_DIRECTORY:,}-byte cap "
                               f"(about 80,000 entries); {_EXPECTED}")


def _check_member(path: Path, info: zipfile.ZipInfo, f: IO[bytes], limit: int) -> None:
    """Refuse what zipfile would raise on (or inflate without bound) with a message saying why."""
    name = info.filename[:80]
    if info.file_size > limit:
        raise InputError(path, f"pickle of {info.file_size} bytes exceeds the {limit}-byte cap")
    for bit, what in _FLAGS.items():
        if info.flag_bits & bit:
            raise InputError(path, f"member {name!r} {what}, which torch.save never writes; {_EXPECTED}")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        method = _METHODS.get(info.compress_type, "unknown")
        raise InputError(path, f"member {name!r} uses compression method {info.compress_type} ({method}); "
                               f"{_EXPECTED}")
    size = f.seek(0, 2)
    if not 0 <= info.header_offset <= size - 30:  # 30: the fixed part of a local file header
        raise InputError(path, f"member {name!r} starts at byte {info.header_offset:,}, outside the file of "
                               f"{size:,} bytes; {_EXPECTED}")


def _why(e: BaseException) -> str:
    """What went wrong, in words (zipfile's own message, cut, where it is already clear)."""
    if isinstance(e, UnicodeDecodeError):
        return "a member name is flagged UTF-8 (zip flag bit 11) but is not valid UTF-8"
    if isinstance(e, zlib.error):
        return f"corrupt deflate data in data.pkl ({str(e)[:80]})"
    if isinstance(e, EOFError):
        return "data.pkl is cut short (the file ends inside it)"
    if isinstance(e, NotImplementedError) and str(e).startswith("zip file version "):
        return f"a member says it needs zip version {str(e)[17:25]} to extract (Python reads up to 6.3)"
    if isinstance(e, NotImplementedError):
        return f"uses a zip feature Python cannot read ({str(e)[:80]})"
    text = str(e)[:120].rstrip(".")
    return text if isinstance(e, zipfile.BadZipFile) else f"{type(e).__name__}: {text}"
