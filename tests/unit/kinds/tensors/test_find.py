"""Discovery and safe loading of recorded tensor files."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from ad_diff.errors import InputError
from ad_diff.kinds.tensors.find import discover, read_index
from ad_diff.kinds.tensors.pt import load_pt
from ad_diff.kinds.tensors.reader import ChunkReader

SYN = Path(__file__).resolve().parents[4] / "fixtures" / "tensors" / "synthetic"


def test_discover_kinds(tmp_path: Path) -> None:
    save_file({"logits": torch.ones(2, 3)}, str(tmp_path / "outputs.safetensors"))
    save_file({"add_1": torch.ones(2)}, str(tmp_path / "nodes.safetensors"))
    save_file({"input_ids": torch.ones(2, dtype=torch.int64)}, str(tmp_path / "inputs.safetensors"))
    (tmp_path / "reference").mkdir()
    save_file({"logits": torch.ones(2, 3, dtype=torch.float64)},
              str(tmp_path / "reference" / "outputs.safetensors"))
    (tmp_path / "record.json").write_text("{}")
    run = discover(tmp_path, "baseline")
    assert {n: r.kind for n, r in run.outputs.items()} == {"logits": "output", "add_1": "node"}
    assert run.references["logits"].dtype == "F64"
    assert list(run.inputs) == ["input_ids"]
    assert run.unreadable == ()


def test_empty_folder_has_no_data(tmp_path: Path) -> None:
    run = discover(tmp_path, "baseline")
    assert (run.outputs, run.references, run.inputs, run.unreadable) == ({}, {}, {}, ())


def _st(header: bytes) -> bytes:
    return struct.pack("<Q", len(header)) + header


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"abc", "shorter than its 8-byte header"),
        (struct.pack("<Q", 10**9) + b"{}", "exceeds the file"),
        (struct.pack("<Q", 4) + b"\xff\xfe{}", "header is not UTF-8 JSON"),
        (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
        (_st(b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}}'), "do not fit"),
        (_st(b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'), "truncated"),
        (_st(b'{"a":{"dtype":"Q9","shape":[4],"data_offsets":[0,16]}}'), "unsupported dtype"),
        (_st(b'{"a":{"dtype":"F32"}}'), "header entry expected {dtype"),
    ],
)
def test_invalid_safetensors(tmp_path: Path, content: bytes, message: str) -> None:
    p = tmp_path / "x.safetensors"
    p.write_bytes(content)
    with pytest.raises(InputError, match=message) as e:
        read_index(p)
    assert str(e.value).startswith(str(p))


def test_malicious_pickle_is_refused_and_not_executed(tmp_path: Path) -> None:
    marker = Path("/tmp/ad_diff_pwned")
    marker.unlink(missing_ok=True)
    with pytest.raises(InputError,
                       match="refused to load: this pickle calls posix.system.*Nothing in it was executed"):
        load_pt(SYN / "malicious" / "candidate" / "tensors" / "outputs.pt")
    assert not marker.exists()


def test_pt_dict_is_flattened_and_chunk_readable() -> None:
    recs = {r.name: r for r in read_index(SYN / "pt_dict" / "baseline" / "tensors" / "outputs.pt")}
    assert sorted(recs) == ["extra.hidden", "logits"]
    assert recs["logits"].dtype == "BF16"
    assert recs["logits"].shape == (4, 16, 64)
    import numpy as np

    r = ChunkReader(recs["logits"])
    got = r.read(10, 5, np.empty(8, np.float32))
    r.close()
    saved = torch.load(SYN / "pt_dict" / "baseline" / "tensors" / "outputs.pt")
    want = saved["logits"].reshape(-1)[10:15].float()
    assert np.array_equal(got, want.numpy())


def test_garbage_pt_is_input_error(tmp_path: Path) -> None:
    p = tmp_path / "junk.pt"
    p.write_bytes(b"not a torch file")
    with pytest.raises(InputError, match="not a readable torch.save file"):
        load_pt(p)


def test_files_leaving_the_run_folder_and_fifos_are_refused_unread(tmp_path: Path) -> None:
    run, outside = tmp_path / "run", tmp_path / "outside"
    (run / "tensors").mkdir(parents=True)
    outside.mkdir()
    save_file({"secret_name": torch.ones(2)}, str(outside / "o.safetensors"))
    save_file({"logits": torch.ones(2)}, str(run / "tensors" / "inputs_real.safetensors"))
    (run / "tensors" / "outputs.safetensors").symlink_to(outside / "o.safetensors")
    (run / "tensors" / "inside.safetensors").symlink_to(run / "tensors" / "inputs_real.safetensors")
    os.mkfifo(run / "tensors" / "nodes.pt")
    (run / "tensors" / "reference").symlink_to(outside)  # a whole folder linked out
    got = discover(run / "tensors", "candidate")
    why = {u.path.name: u.message for u in got.unreadable}
    assert why["outputs.safetensors"].startswith("is a symbolic link to a file outside the run folder")
    # a folder linked out is refused whole, not listed (its names are not the run's either)
    assert why["reference"].startswith("is a symbolic link to a folder outside the run folder")
    assert "o.safetensors" not in why
    assert why["nodes.pt"].startswith("is not a regular file (a FIFO")
    assert "secret_name" not in got.outputs
    assert set(got.outputs) == {"logits"}  # a link that stays inside the run folder is fine
