"""The safetensors header parser refuses every malformed header with an InputError naming file and tensor."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from ad_diff.errors import InputError
from ad_diff.kinds.tensors.header import read_header, safe_name


def _file(tmp_path: Path, header: bytes, data: bytes = b"\0" * 64) -> Path:
    p = tmp_path / "x.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + data)
    return p


def test_valid_header_gives_absolute_offsets(tmp_path: Path) -> None:
    h = json.dumps({"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                    "__metadata__": {"k": "v"}}).encode()
    base, entries = read_header(_file(tmp_path, h))
    assert base == 8 + len(h)
    assert entries == {"a": ("F32", (2, 2), base, base + 16)}


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (b'{"a":{"dtype":["F32"],"shape":[4],"data_offsets":[0,16]}}', "dtype must be a string, found list"),
        (b'{"a":{"dtype":"F32","shape":[4],"data_offsets":"0,16"}}', "data_offsets must be [begin, end]"),
        (b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0.0,16.0]}}', "number 0.0 is not an integer"),
        (b'{"a":{"dtype":"F32","shape":[1e400],"data_offsets":[0,16]}}', "number 1e400 is not an integer"),
        (b'{"a":{"dtype":"F32","shape":[NaN],"data_offsets":[0,16]}}', "number NaN is not an integer"),
        (b'{"a":{"dtype":"F32","shape":[' + b"9" * 30 + b'],"data_offsets":[0,16]}}', "integer of 30 digits"),
        (b'{"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}}', "integers >= 0, found [-4]"),
        (b'{"a":{"dtype":"F32","shape":[true],"data_offsets":[0,4]}}', "integers >= 0, found [true]"),
        (b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[16,0]}}', "0 <= begin <= end"),
        (b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16],"x":1}}', "header entry expected"),
        (b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested 100,001 levels deep"),
        (b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"a":{}}', "duplicate key 'a'"),
        (b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],'
         b'"data_offsets":[8,24]}}', "tensors 'a' and 'b' overlap"),
        (b'{"__metadata__":{"k":1}}', "__metadata__ must map strings to strings"),
        (b'{"a":{"dtype":"F32","shape":[64],"data_offsets":[0,256]}}', "truncated: tensor 'a'"),
    ],
)
def test_hostile_headers(tmp_path: Path, header: bytes, message: str) -> None:
    p = _file(tmp_path, header)
    with pytest.raises(InputError, match=None) as e:
        read_header(p)
    assert message in e.value.detail
    assert str(e.value).startswith(str(p))


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    name = "[" * 50 + '"{' * 10
    h = json.dumps({name: {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}}).encode()
    _, entries = read_header(_file(tmp_path, h))
    assert list(entries) == [name]


def test_lone_surrogate_names_are_escaped(tmp_path: Path) -> None:
    _, entries = read_header(_file(tmp_path, b'{"\\ud800":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}'))
    assert list(entries) == ["\\ud800"]
    assert safe_name("ok") == "ok"
    assert list(entries)[0].encode("utf-8") == b"\\ud800"  # encodable by every writer
