"""Transform modules read as text: which ops a registered transform names, and in which role."""

from __future__ import annotations

from ad_diff.candidates import pyread
from ad_diff.candidates.pyread import read_transforms
from tests.unit.candidates.conftest import AD, SRC


def _refs(text: str) -> dict[str, set[tuple[str, str, int]]]:
    transforms, note = read_transforms(text)
    assert note == ""
    return {t.key: {(r.op, r.role, r.line) for r in t.refs} for t in transforms}


def test_fixture_rms_norm_module_roles() -> None:
    text = (SRC / AD / "transform/library/rms_norm.py").read_text()
    refs = _refs(text)
    assert refs["fuse_rmsnorm"] == {
        ("auto_deploy::flashinfer_rms_norm", "backend", 14),
        ("auto_deploy::triton_rms_norm", "backend", 15),
        ("auto_deploy::torch_rmsnorm", "backend", 16),
        ("auto_deploy::torch_rmsnorm", "matches", 72),
    }
    # the matcher reaches its replacement function, not the fusion's backend map
    assert refs["match_rmsnorm_pattern"] == {("auto_deploy::torch_rmsnorm", "inserts", 30)}
    (match,) = [t for t in read_transforms(text)[0] if t.key == "match_rmsnorm_pattern"]
    assert [p.name for p in match.patterns] == ["_rms_norm_pattern", "_gated_norm_pattern"]
    assert [p.readable for p in match.patterns] == [True, False]


def test_fixture_moe_module_follows_helpers_bases_and_returns() -> None:
    text = (SRC / AD / "transform/library/fused_moe.py").read_text()
    transforms = {t.key: t for t in read_transforms(text)[0]}
    assert {(r.op, r.role) for r in transforms["fuse_moe"].refs} == {
        ("auto_deploy::torch_moe", "matches"),  # is_op in the module-level helper it calls
        ("auto_deploy::trtllm_moe_fused", "inserts"),
    }
    (ref,) = transforms["match_moe_pattern"].refs
    assert (ref.op, ref.role) == (
        "auto_deploy::torch_moe",
        "inserts",
    )  # moe_op() -> call_function in the base
    assert ref.detail.startswith("returned by moe_op(), then bound to fused_moe, then graph.call_function")
    assert transforms["match_moe_pattern"].patterns == ()


def test_wrappers_imported_from_custom_ops_and_pattern_pieces() -> None:
    text = (SRC / AD / "transform/library/fuse_swiglu.py").read_text()
    (t,) = read_transforms(text)[0]
    assert {r.role for r in t.refs} == {"pattern"}  # torch_linear_simple is a piece of the search pattern
    assert t.wrappers == (("torch_swiglu_mlp", "inserts", 22, "called in replacement _swiglu_replacement()"),)


def test_local_bindings_and_comparisons() -> None:
    text = (
        "@TransformRegistry.register('t')\n"
        "class T:\n"
        "    def _apply(self, gm):\n"
        "        if backend == 'a':\n"
        "            target = torch.ops.auto_deploy.a_op.default\n"
        "        else:\n"
        "            target = torch.ops.auto_deploy.b_op.default\n"
        "        for n in gm.graph.nodes:\n"
        "            if n.target == torch.ops.auto_deploy.ref_op:\n"
        "                gm.graph.call_function(target, args=n.args)\n"
        "            n.target = torch.ops.auto_deploy.swapped\n"
        "            x = torch.ops.aten.mul.Tensor\n"
        "            y = torch.ops.other_ns.plain\n"
    )
    assert _refs(text)["t"] == {
        ("auto_deploy::a_op", "inserts", 5),
        ("auto_deploy::b_op", "inserts", 7),
        ("auto_deploy::ref_op", "matches", 9),
        ("auto_deploy::swapped", "inserts", 11),
        ("other_ns::plain", "references", 13),  # aten refs are never listed
    }


def test_unparsable_and_hostile_modules_are_notes_not_errors(monkeypatch) -> None:
    assert read_transforms("def broken(:\n")[1].startswith("not parsed as Python")
    assert read_transforms("x = 1\0\n")[1].startswith("not parsed as Python")
    deep = "x = " + "(" * 500 + "1" + ")" * 500 + "\n@TransformRegistry.register('t')\nclass T: pass\n"
    assert read_transforms(deep)[0] == ()
    chain = "@TransformRegistry.register('t')\nclass T:\n    def f(self):\n        return " + " + ".join(
        ["a"] * 5000
    )
    # CPython's parser gives up on a 5000-term chain (RecursionError): a note, never an exception
    assert read_transforms(chain) == (
        (),
        "not parsed as Python (RecursionError): ops are not tied to its transforms",
    )
    # the work limit stops a module that makes the reader revisit code, with a note
    monkeypatch.setattr(pyread, "STEPS_PER_NODE", 0)
    monkeypatch.setattr(pyread, "_FLOOR", 10)
    many = "\n".join(
        f"@TransformRegistry.register('t{i}')\nclass T{i}:\n    x = torch.ops.auto_deploy.o{i}\n"
        for i in range(200)
    )
    transforms, note = read_transforms(many)
    assert "work limit" in note
    assert len(transforms) < 200
