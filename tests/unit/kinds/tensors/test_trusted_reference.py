"""References are trusted by construction (ad_diff.kinds.tensors.analysis.trusted_references)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from ad_diff.core.model import BASELINE, CANDIDATE
from ad_diff.errors import UsageError
from ad_diff.kinds.tensors.analysis import read_reference_dir, trusted_references
from ad_diff.kinds.tensors.find import discover


def _run(root: Path, name: str, ref: torch.Tensor | None, meta: dict[str, str] | None = None) -> Path:
    folder = root / name / "tensors"
    folder.mkdir(parents=True)
    save_file({"logits": torch.ones(2, 3)}, str(folder / "outputs.safetensors"))
    if ref is not None:
        (folder / "reference").mkdir()
        save_file({"logits": ref}, str(folder / "reference/outputs.safetensors"), metadata=meta)
    return folder


REF = torch.arange(6, dtype=torch.float32).reshape(2, 3)


@pytest.mark.parametrize(
    ("base_ref", "cand_ref", "trusted", "untrusted"),
    [
        (REF, None, True, None),
        (REF, REF.clone(), True, None),
        (None, REF, False, "candidate_only"),
        (REF, REF + 1e-6, False, "differs"),
        (REF, REF.double(), False, "differs"),
        (None, None, False, None),
    ],
)
def test_which_reference_judges(
    tmp_path: Path, base_ref, cand_ref, trusted: bool, untrusted: str | None
) -> None:
    b = discover(_run(tmp_path, "b", base_ref, {"who": "baseline"}), BASELINE)
    c = discover(_run(tmp_path, "c", cand_ref, {"who": "candidate"}), CANDIDATE)  # metadata differs: fine
    refs, bad, _ = trusted_references(b, c)
    assert ("logits" in refs) is trusted
    assert [u.why for u in bad] == ([untrusted] if untrusted else [])


def test_a_user_reference_judges_instead_of_the_runs(tmp_path: Path) -> None:
    b = discover(_run(tmp_path, "b", None), BASELINE)
    c = discover(_run(tmp_path, "c", REF), CANDIDATE)
    user = tmp_path / "user"
    user.mkdir()
    save_file({"logits": REF * 2}, str(user / "ref.safetensors"))
    refs, bad, source = trusted_references(b, c, user)
    assert refs["logits"].path.parent == user
    assert bad == []
    assert source == str(user)


def test_an_unusable_user_reference_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a folder"):
        read_reference_dir(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no tensor files"):
        read_reference_dir(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad/x.safetensors").write_bytes(b"garbage")
    with pytest.raises(UsageError, match=r"x\.safetensors could not be read"):
        read_reference_dir(tmp_path / "bad")
