"""Reading a log as captured: every CI/launcher prefix stripped (line numbers kept, launcher ranks read),
compressed files read transparently and bounded, unknown prefixes reported."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest

from ad_diff.core import limits
from ad_diff.discover import capture
from ad_diff.discover.capture import CapturedLines, peel
from ad_diff.errors import InputError

AD = "[AUTO-DEPLOY] [INFO] [stage=export, transform=export_to_gm] [SUMMARY] matches=1"
L1 = ("[02/10/2026-11:02:15] [TRT-LLM AUTO-DEPLOY] [RANK 0] [I] [stage=export, transform=export_to_gm] "
      "enabled=True")


@pytest.mark.parametrize(
    ("prefix", "layers", "rank"),
    [
        ("2026-04-24T10:00:03.1234567Z ", ["iso-timestamp"], None),  # GitHub Actions
        ("2026-04-24T10:00:03.123456789Z ", ["iso-timestamp"], None),  # kubectl --timestamps, docker -t
        ("2026-04-24T10:00:03+02:00 ", ["iso-timestamp"], None),
        ("2024-05-22T12:43:46.962646Z 00O ", ["iso-timestamp"], None),  # GitLab job log timestamps
        ("[2026-04-24T10:00:03.123Z] ", ["jenkins-timestamp"], None),  # Jenkins pipeline timestamps()
        ("10:00:03  ", ["jenkins-timestamp"], None),  # Timestamper's clock format
        ("[1,1]<stdout>:", ["mpirun"], 1),
        ("[1,0]<stderr>: ", ["mpirun"], 0),
        ("[prterun-host-1234@1,3]:", ["mpirun"], 3),  # PRRTE namespace form
        ("1: ", ["srun"], 1),
        (" 7: ", ["srun"], 7),
        ("[default1]:", ["torchrun"], 1),
        ("[trainer0]:", ["torchrun"], 0),
        ("2026-04-24T10:00:03.1234567Z [1,1]<stdout>:", ["iso-timestamp", "mpirun"], 1),
        ("2026-04-24T10:00:03.123456789Z 1: ", ["iso-timestamp", "srun"], 1),
        ("[2026-04-24T10:00:03.123Z] [default1]:", ["jenkins-timestamp", "torchrun"], 1),
    ],
)
def test_every_capture_prefix_is_peeled_and_stripped(tmp_path: Path, prefix: str, layers: list[str],
                                                     rank: int | None) -> None:
    got, rest = peel(prefix)
    assert [x.name for x in got] == layers
    assert rest == ""
    p = tmp_path / "job.txt"
    p.write_text(f"{prefix}noise line\n{prefix}{AD}\n{prefix}{L1}\n")
    lines = CapturedLines(p, "a log")
    out = list(lines)
    assert [x.name for x in lines.layers] == layers
    assert [(n, text, r) for n, text, _, r in out] == [(1, "noise line", rank), (2, AD, rank), (3, L1, rank)]


def test_plain_log_is_untouched_including_the_trtllm_timestamp(tmp_path: Path) -> None:
    p = tmp_path / "ad.log"
    p.write_text(f"{L1}\n12: not a label\n")
    lines = CapturedLines(p, "a log")
    assert [t for _, t, _, _ in lines] == [L1, "12: not a label"]
    assert lines.layers == ()
    assert lines.unknown is None


def test_gitlab_section_markers_and_github_groups(tmp_path: Path) -> None:
    p = tmp_path / "job.log"
    p.write_bytes(b"\x1b[0Ksection_start:1713952803:step_script\r\x1b[0KExecuting step\n"
                  + AD.encode() + b"\n\x1b[0Ksection_end:1713952911:step_script\r\x1b[0K\n")
    lines = CapturedLines(p, "a log")
    assert [t for _, t, _, _ in lines] == ["Executing step", AD, ""]
    assert [x.name for x in lines.layers] == ["gitlab-section"]
    g = tmp_path / "gh.txt"
    g.write_text(f"2026-04-24T10:00:03.1Z ##[group]Run x\n2026-04-24T10:00:03.2Z {AD}\n")
    gl = CapturedLines(g, "a log")
    list(gl)
    assert gl.groups


def test_mixed_file_strips_each_layer_where_present(tmp_path: Path) -> None:
    p = tmp_path / "job.txt"
    p.write_text(f"2026-04-24T10:00:03.1Z [1,1]<stdout>:{AD}\n2026-04-24T10:00:03.2Z WARNING: OpenFabrics\n"
                 f"2026-04-24T10:00:03.3Z [1,0]<stdout>:{AD}\n")
    out = [(t, r) for _, t, _, r in CapturedLines(p, "a log")]
    assert out == [(AD, 1), ("WARNING: OpenFabrics", None), (AD, 0)]


def test_unknown_prefix_is_recorded_with_its_line(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text(f"hello\nINFO worker-0 | {AD}\n")
    lines = CapturedLines(p, "a log")
    assert [t for _, t, _, _ in lines][1] == f"INFO worker-0 | {AD}"  # not stripped: unknown
    assert lines.unknown == (2, "INFO worker-0 | ")


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_compressed_logs_read_transparently_by_magic_not_name(tmp_path: Path, suffix: str) -> None:
    data = f"noise\n{AD}\n".encode()
    pack = {".gz": lambda b: gzip.compress(b, mtime=0), ".bz2": bz2.compress, ".xz": lzma.compress}[suffix]
    packed = pack(data)
    for name in (f"ad.log{suffix}", "ad.log"):  # found by its name, or a compressed file without the suffix
        p = tmp_path / name
        p.write_bytes(packed)
        assert [t for _, t, _, _ in CapturedLines(p, "a log")] == ["noise", AD]


def test_zstd_without_stdlib_support_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "ad.log.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    try:
        from compression import zstd  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        with pytest.raises(InputError, match="zstd-compressed"):
            list(CapturedLines(p, "a log"))
    else:  # Python >= 3.14 reads it (and these bytes are no valid frame)
        with pytest.raises(InputError):
            list(CapturedLines(p, "a log"))


def test_decompression_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "DECOMPRESS_FLOOR", 1 << 16)
    monkeypatch.setattr(limits, "DECOMPRESS_RATIO", 10)
    p = tmp_path / "ad.log.gz"
    p.write_bytes(gzip.compress(b"x" * 100 + b"\n" + b"y\n" * 200_000))  # ~1 KB expanding to 400 KB
    assert capture.decompressed_limit(p.stat().st_size) == 1 << 16
    with pytest.raises(InputError, match="decompression bomb"):
        list(CapturedLines(p, "a log"))


def test_decompressed_limit_bounds() -> None:
    assert capture.decompressed_limit(1) == limits.DECOMPRESS_FLOOR
    assert capture.decompressed_limit(10 << 20) == 250 * (10 << 20)
    assert capture.decompressed_limit(1 << 40) == limits.DECOMPRESS_CEILING


def test_corrupt_or_binary_compressed_files(tmp_path: Path) -> None:
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(gzip.compress(f"{AD}\n".encode() * 1000)[:60])
    with pytest.raises(InputError, match="cannot be decompressed as gzip"):
        list(CapturedLines(cut, "a log"))
    binary = tmp_path / "bin.log.gz"
    binary.write_bytes(gzip.compress(bytes(range(256)) * 64))
    with pytest.raises(InputError, match="looks binary"):
        list(CapturedLines(binary, "a log"))


def test_overlong_line_of_a_compressed_log_is_cut_not_held(tmp_path: Path) -> None:
    p = tmp_path / "ad.log.gz"
    p.write_bytes(gzip.compress(b"z" * (3 << 20) + b"\n" + AD.encode() + b"\n"))
    out = list(CapturedLines(p, "a log"))
    assert len(out) == 2
    assert len(out[0][1]) == 1 << 20
    assert out[1][:2] == (2, AD)
