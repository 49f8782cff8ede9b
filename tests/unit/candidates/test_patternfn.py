"""Search pattern functions read as text: the ops a trace would record, or why the text is not readable."""

from __future__ import annotations

import ast

from ad_diff.candidates.patternfn import read_pattern


def _read(src: str, name: str = "pattern"):
    tree = ast.parse(src)
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    return read_pattern(funcs[name], funcs)


def test_rmsnorm_pattern_ops_and_formula() -> None:
    p = _read(
        "def pattern(data, weight, eps: float):\n"
        "    '''doc'''\n"
        "    input_dtype = data.dtype\n"
        "    data = data.to(torch.float32)\n"
        "    variance = data.pow(2).mean(-1, keepdim=True)\n"
        "    data = data * torch.rsqrt(variance + eps)\n"
        "    return weight * data.to(input_dtype)\n"
    )
    assert p.readable
    assert p.ops == ("to", "pow", "mean", "add", "rsqrt", "mul", "to", "mul")
    assert p.formula == "weight * (data * rsqrt(mean(data^2) + eps))"


def test_aten_and_custom_op_spellings_and_operators() -> None:
    p = _read(
        "def pattern(x, w):\n"
        "    g = torch.ops.auto_deploy.torch_linear_simple.default(x, w, None)\n"
        "    h = torch.ops.aten.mul.Tensor(torch.ops.aten.silu.default(g), -g)\n"
        "    return F.gelu(h @ w) ** 2\n"
    )
    assert p.ops == ("auto_deploy::torch_linear_simple", "silu", "neg", "mul", "matmul", "gelu", "pow")


def test_same_file_helpers_are_inlined_and_size_arithmetic_is_no_op() -> None:
    p = _read(
        "def _rotate(x):\n"
        "    x1 = x[..., : x.shape[-1] // 2]\n"
        "    x2 = x[..., x.shape[-1] // 2 :]\n"
        "    return torch.cat((-x2, x1), dim=-1)\n"
        "def pattern(q, cos, sin, unsqueeze_dim=1):\n"
        "    b, h, s, d = q.shape\n"
        "    cos = cos.unsqueeze(unsqueeze_dim)\n"
        "    return q * cos + _rotate(q) * sin\n"
    )
    assert p.readable
    assert p.ops == ("unsqueeze", "mul", "slice", "slice", "neg", "cat", "mul", "add")
    assert p.formula == "q * unsqueeze(cos) + cat(-slice(q), slice(q)) * sin"


def test_unreadable_text_says_why() -> None:
    outside = _read("def pattern(x):\n    return helper_from_elsewhere(x)\n")
    assert not outside.readable
    assert "calls helper_from_elsewhere" in outside.reason
    branch = _read("def pattern(x):\n    if x:\n        return x\n    return -x\n")
    assert not branch.readable
    assert "If statement" in branch.reason
    method = _read("def pattern(x):\n    return x.frobnicate()\n")
    assert not method.readable
    assert not _read("def pattern(x):\n    y = x\n").readable  # no return
    deep = _read(
        "def a(x):\n    return b(x)\ndef b(x):\n    return c(x)\ndef c(x):\n    return d(x)\n"
        "def d(x):\n    return -x\ndef pattern(x):\n    return a(x)\n"
    )
    assert not deep.readable
    assert "nested more than" in deep.reason
    recursive = _read("def pattern(x):\n    return pattern(x)\n")
    assert not recursive.readable
