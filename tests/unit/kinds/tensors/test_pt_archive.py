"""The ``.pt`` pre-scan on broken zip archives: every way Python's zipfile can fail on data.pkl is an
InputError naming the file and saying what was expected (each once escaped as exit 3), and reading it is
bounded (a deflate bomb, a huge central directory)."""

from __future__ import annotations

import sys
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from ad_diff.errors import InputError
from ad_diff.kinds.tensors import pt
from ad_diff.kinds.tensors.pt_archive import MAX_DIRECTORY
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import hostile_pt_zip as z  # noqa: E402

EXPECTED = "expected a torch.save archive (stored or deflated members, zip version 6.3 or older)"
M = "member 'outputs/data.pkl'"
U = "not a readable torch.save archive: "

CASES = {
    # once NotImplementedError / RuntimeError / zlib.error (exit 3)
    "flag_bit5_patched": f"{M} is compressed patched data (zip flag bit 5), which torch.save never writes",
    "version_12_2": f"{U}a member says it needs zip version 12.2 to extract (Python reads up to 6.3)",
    "flag_bit6_strong_encryption": f"{M} uses strong encryption (zip flag bit 6), which torch.save never "
    "writes",
    "encrypted": f"{M} is encrypted (zip flag bit 0), which torch.save never writes",
    "method_deflate64": f"{M} uses compression method 9 (deflate64)",
    "method_aes": f"{M} uses compression method 99 (AES-encrypted)",
    "deflate_corrupt": f"{U}corrupt deflate data in data.pkl (Error -3 while decompressing data: "
                       "invalid stored block lengths)",
    # once an input error with a misleading or empty reason
    "method_bzip2": f"{M} uses compression method 12 (bzip2)",  # was "cannot be read (Invalid data stream)"
    "method_lzma": f"{M} uses compression method 14 (lzma)",  # was a CRC error
    "header_offset_negative": f"{M} starts at byte -100, outside the file of 14,117 bytes",  # was EINVAL
    "header_offset_2_63": f"{M} starts at byte {1 << 63:,}, outside the file of 14,129 bytes",
    "member_past_the_end": f"{U}data.pkl is cut short (the file ends inside it)",  # was "bad zip: "
    "name_not_utf8": f"{U}a member name is flagged UTF-8 (zip flag bit 11) but is not valid UTF-8",
    "name_not_utf8_local": f"{U}a member name is flagged UTF-8 (zip flag bit 11) but is not valid UTF-8",
    # once pre-scanned as the second archive and unpickled by torch from the first (posix.system)
    "two_archives": "torch's zip reader finds data.pkl at byte 64 (269 bytes), Python's at byte 14,139 (269 "
    "bytes): the archive reads differently to the two, so the pickle pre-scanned is not the one torch would "
    "load",
    # already input errors; the wording now says what was expected
    "crc_mismatch": f"{U}Bad CRC-32 for file 'outputs/data.pkl'",
    "name_differs": f"{U}File name in directory 'outputs/data.pkl' and header b'xutputs/data.pkl' "
    "differ",
}


def _write(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "outputs.pt"
    p.write_bytes(data)
    pt._CACHE.clear()
    return p


def test_every_variant_has_an_expected_message() -> None:
    assert set(CASES) == set(z.VARIANTS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_broken_archive_is_an_input_error_saying_what_was_expected(name: str, tmp_path: Path) -> None:
    p = _write(tmp_path, z.variant(name))
    with pytest.raises(InputError) as e:
        pt.load_pt(p)
    assert e.value.path == p
    assert e.value.detail == f"{CASES[name]}; {EXPECTED}"


def test_the_source_archive_itself_loads(tmp_path: Path) -> None:
    """The variants differ from a file that loads only by the field they edit."""
    assert sorted(pt.load_pt(_write(tmp_path, z.SOURCE.read_bytes()))) == ["extra.hidden", "logits"]


def test_a_deflated_pickle_is_read(tmp_path: Path) -> None:
    """torch.load reads a deflated data.pkl (miniz inflates it), so the pre-scan must too."""
    raw = z.SOURCE.read_bytes()
    p = _write(tmp_path, z.rezip(raw, z.pickle_of(raw), zipfile.ZIP_DEFLATED))
    assert sorted(pt.load_pt(p)) == ["extra.hidden", "logits"]


def test_a_scanned_deflated_pickle_is_still_refused(tmp_path: Path) -> None:
    """Deflate is no way around the opcode scan: a forbidden global inside it is found."""
    raw = z.SOURCE.read_bytes()
    evil = b"\x80\x02cposix\nsystem\nX\x04\x00\x00\x00trueq\x00\x85R."
    p = _write(tmp_path, z.rezip(raw, evil, zipfile.ZIP_DEFLATED))
    with pytest.raises(InputError, match="refused to load: this pickle calls posix.system"):
        pt.prescan(p)


def test_deflate_bomb_is_inflated_no_further_than_the_pickle_cap(tmp_path: Path) -> None:
    """1 MB whose data.pkl inflates to 1 GiB (the directory claims 269 bytes): zipfile's read() once
    inflated all of it (2 GiB peak, 8 s); now at most the pickle cap is inflated."""
    p = _write(tmp_path, z.deflate_bomb(z.SOURCE.read_bytes()))
    tracemalloc.start()
    try:
        pt.prescan(p)  # the claimed 269 bytes are the real pickle, with the right CRC: it passes
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * pt.MAX_PICKLE, f"{peak:,} bytes allocated"
    assert sorted(pt.load_pt(p)) == ["extra.hidden", "logits"]  # torch's reader stops at the claimed size


def test_huge_central_directory_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    entries = MAX_DIRECTORY // 64 + 1000  # 64 bytes each: past the cap
    p = _write(tmp_path, z.directory_bomb(z.SOURCE.read_bytes(), entries))
    with pytest.raises(InputError) as e:
        pt.prescan(p)
    size = 523 + entries * 64
    want = f"zip directory of {size:,} bytes exceeds the {MAX_DIRECTORY:,}-byte cap (about 80,000 entries)"
    assert e.value.detail == f"{want}; {EXPECTED}"


def test_a_directory_under_the_cap_is_parsed(tmp_path: Path) -> None:
    p = _write(tmp_path, z.directory_bomb(z.SOURCE.read_bytes(), 1000))
    pt.prescan(p)  # 1,000 extra entries (64 KB): no refusal, data.pkl is scanned as usual


# ------------------------------------------------------------------ zip or legacy: decided as torch does


def test_a_pickle_with_an_archive_appended_is_scanned_as_the_pickle_torch_loads(tmp_path: Path) -> None:
    """zipfile.is_zipfile finds the appended archive's end record; torch.load reads a file that does not
    start with a local header as a legacy pickle. The scan must read what torch reads."""
    p = _write(tmp_path, z.LONG_GLOBAL + z.SOURCE.read_bytes())
    assert zipfile.is_zipfile(p)
    with pytest.raises(InputError) as e:
        pt.prescan(p)
    assert e.value.detail.startswith("refused to load: the pickle names a global of 40002 characters")


def test_a_legacy_file_holding_an_end_record_signature_loads(tmp_path: Path) -> None:
    """Tensor bytes that spell a zip end record made zipfile.is_zipfile true, and the legacy file was
    refused as a broken archive."""
    import torch

    p = tmp_path / "outputs.pt"
    data = torch.tensor(list(b"PK\x05\x06" + bytes(18)), dtype=torch.uint8)
    torch.save({"logits": data}, p, _use_new_zipfile_serialization=False)
    pt._CACHE.clear()
    assert zipfile.is_zipfile(p)
    assert torch.equal(pt.load_pt(p)["logits"], data)


def test_two_archives_really_read_differently(tmp_path: Path) -> None:
    """The case above is a real bypass: zipfile sees the benign pickle, torch's reader the other one."""
    import torch

    p = _write(tmp_path, z.variant("two_archives"))
    assert zipfile.ZipFile(p).read("outputs/data.pkl") == z.pickle_of(z.SOURCE.read_bytes())
    assert z.EVIL[2:] in torch._C.PyTorchFileReader(str(p)).get_record("data.pkl")
    assert pt.prescan(p) is not None  # the pickle zipfile reads is clean: only the cross-check refuses


def test_a_deflated_pickle_is_found_where_torch_finds_it(tmp_path: Path) -> None:
    raw = z.SOURCE.read_bytes()
    p = _write(tmp_path, z.rezip(raw, z.pickle_of(raw), zipfile.ZIP_DEFLATED))
    assert pt.prescan(p) == (46, 269)  # local header 30 + name 16; torch reports the same
