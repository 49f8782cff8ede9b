"""Build the hostile-input corpus: small broken run pairs and the manifest of what ad-diff must do on each.

    python scripts/make_hostile_fixtures.py            # rewrite fixtures/hostile/ (committed cases only)

Every case is a function ``build(dest)`` writing ``dest/baseline`` and ``dest/candidate``. Small cases are
committed under ``fixtures/hostile/<case>/``; cases that are large (a 10 MB line) or cannot live in git
(permissions, symlink loops) are built by the tests into a temporary folder with :func:`build_case`.
Output is deterministic: the same bytes on every run (a test regenerates and compares).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "hostile"

SEP = "=" * 80
TRANSFORMS = (
    ("export", "export_to_gm", "matches=1"),
    ("post_export", "cleanup_noop_slice", "matches=0"),
    ("pattern_matcher", "match_rope_pattern", "matches=4"),
    ("compile", "compile_model", "matches=1"),
)


def v3(stage: str, transform: str, result: str, rank: int = 0) -> str:
    """One L3 `[SUMMARY]` result line."""
    tail = "" if result == "disabled" else " | time: 0.100s (pre=0.000s, apply=0.100s, post=0.000s)"
    head = f"[AUTO-DEPLOY] [INFO] [RANK {rank}] [stage={stage}, transform={transform}]"
    return f"{head} [SUMMARY] {result}{tail}\n"


def log_text(transforms: tuple[tuple[str, str, str], ...] = TRANSFORMS, rank: int = 0) -> str:
    """A small complete AD log: one noise line, the result lines, the end-of-build line."""
    return "[TensorRT-LLM] TensorRT-LLM version: 1.2.0rc6\n" + "".join(v3(*t, rank=rank) for t in transforms)


def dump_text(stage: str, transform: str, rope: bool = True, step: int = 4) -> str:
    """A tiny D3 dump (one GraphModule) as it looks after transform number ``step`` of :data:`TRANSFORMS`.

    The graph changes where the log says a transform matched (rope after match_rope_pattern, a clone after
    compile_model), so each run is consistent with its own log.
    """
    nodes = [
        "%x : 2x8 : torch.float32",
        "%w : 8x8 : torch.float32",
        "%mm = aten.mm.default(%x : 2x8 : torch.float32, %w : 8x8 : torch.float32) : 2x8 : torch.float32",
    ]
    last = "mm"
    if rope and step >= 3:
        nodes.append("%rope = auto_deploy.rope.default(%mm : 2x8 : torch.float32, 1) : 2x8 : torch.float32")
        last = "rope"
    if step >= 4:
        nodes.append(f"%out = aten.clone.default(%{last} : 2x8 : torch.float32) : 2x8 : torch.float32")
        last = "out"
    nodes.append(f"output %{last}")
    head = [f"# Transform: {transform}", f"# Stage: {stage}", "# GraphModules found: 1", "", "", SEP,
            "# GraphModule: (root)", SEP, ""]
    return "\n".join(head + nodes) + "\n"


def write_run(run: Path, log: str | bytes | None = None, graphs: bool = True) -> Path:
    """A run folder: ``ad.log`` plus ``graphs/NNN_<stage>_<transform>.txt`` for every transform."""
    run.mkdir(parents=True, exist_ok=True)
    data = log_text() if log is None else log
    (run / "ad.log").write_bytes(data.encode() if isinstance(data, str) else data)
    if graphs:
        g = run / "graphs"
        g.mkdir(exist_ok=True)
        for i, (stage, transform, _) in enumerate(TRANSFORMS, start=1):
            (g / f"{i:03d}_{stage}_{transform}.txt").write_text(dump_text(stage, transform, step=i))
    return run


def safetensors_bytes(tensors: dict[str, tuple[str, tuple[int, ...], bytes]]) -> bytes:
    """A safetensors file from ``{name: (dtype, shape, raw bytes)}`` (written by hand: no torch needed)."""
    header: dict[str, Any] = {}
    off = 0
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
    h = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(tensors[n][2] for n in sorted(tensors))


def f32(values: list[float]) -> bytes:
    """Little-endian float32 bytes."""
    return struct.pack(f"<{len(values)}f", *values)


def write_tensors(
    run: Path, tensors: dict[str, tuple[str, tuple[int, ...], bytes]], name: str = "outputs"
) -> None:
    """``run/tensors/<name>.safetensors``."""
    (run / "tensors").mkdir(parents=True, exist_ok=True)
    (run / "tensors" / f"{name}.safetensors").write_bytes(safetensors_bytes(tensors))


LOGITS = [float(i % 7) - 3.0 for i in range(16)]


def _pair(dest: Path, cand_log: str | bytes | None = None, cand_graphs: bool = True) -> tuple[Path, Path]:
    return write_run(dest / "baseline"), write_run(dest / "candidate", cand_log, cand_graphs)


# ----------------------------------------------------------------------------------------------- logs


def empty_log(d: Path) -> None:
    _pair(d, "")


def binary_log(d: Path) -> None:
    _pair(d, bytes(range(256)) * 4)


def log_cut_mid_line(d: Path) -> None:
    text = log_text()
    _pair(d, text[: text.rindex("[SUMMARY]") + 14])  # cut inside the compile_model result line


def log_noise_only(d: Path) -> None:
    _pair(d, "[TensorRT-LLM] TensorRT-LLM version: 1.2.0rc6\nLoading checkpoint shards: 100%|#####| 2/2\n")


def log_retry(d: Path) -> None:
    first = log_text(TRANSFORMS[:2]) + "[AUTO-DEPLOY] [ERROR] [RANK 0] CUDA error, retrying\n"
    _pair(d, first + log_text())


def log_ranks_disagree(d: Path) -> None:
    other = tuple((s, t, "matches=3" if t == "match_rope_pattern" else r) for s, t, r in TRANSFORMS)
    lines = [
        ln
        for pair in zip(log_text().splitlines(True), log_text(other, rank=1).splitlines(True), strict=True)
        for ln in pair
    ]
    _pair(d, "".join(lines))


def log_non_utf8(d: Path) -> None:
    _pair(d, b"caf\xe9 \xff\xfe noise\n" + log_text().encode() + b"\xc3\x28 trailing bad byte\n")


def log_crlf_ansi(d: Path) -> None:
    text = log_text().replace("[SUMMARY]", "\x1b[32m[SUMMARY]\x1b[0m").replace("\n", "\r\n")
    _pair(d, text)


# ---------------------------------------------------------------------------------------------- dumps


def _last_dump(run: Path) -> Path:
    return sorted((run / "graphs").iterdir())[-1]


def dump_cut_mid_line(d: Path) -> None:
    _, c = _pair(d)
    p = _last_dump(c)
    text = p.read_text()
    p.write_text(text[: text.index("%out =") + 30])


def dump_non_utf8(d: Path) -> None:
    _, c = _pair(d)
    p = _last_dump(c)
    p.write_bytes(p.read_bytes().replace(b"auto_deploy.rope", b"auto_deploy.r\xf6pe"))


def dump_crlf(d: Path) -> None:
    _, c = _pair(d)
    for p in sorted((c / "graphs").iterdir()):
        p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n"))


def dump_huge_line(d: Path) -> None:
    """A 10 MB single SSA line (built at test time, not committed)."""
    _, c = _pair(d)
    p = _last_dump(c)
    args = ", ".join(["1"] * 5_000_000)  # 10 MB of arguments
    p.write_text(
        p.read_text().replace("(%mm : 2x8 : torch.float32, 1)", f"(%mm : 2x8 : torch.float32, {args})")
    )


def graphs_gap(d: Path) -> None:
    _, c = _pair(d)
    g = c / "graphs"
    (g / "002_post_export_cleanup_noop_slice.txt").unlink()


def graphs_duplicate_counter(d: Path) -> None:
    _, c = _pair(d)
    g = c / "graphs"
    (g / "002_post_export_cleanup_noop_slice_copy.txt").write_text(
        dump_text("post_export", "cleanup_noop_slice", step=2)
    )


def graphs_empty(d: Path) -> None:
    _, c = _pair(d)
    for p in (c / "graphs").iterdir():
        p.unlink()


def graphs_is_file(d: Path) -> None:
    _, c = _pair(d, cand_graphs=False)
    (c / "graphs").write_text("not a folder\n")


def symlink_loop(d: Path) -> None:
    """Links that loop (built at test time: git would not keep them meaningfully)."""
    _, c = _pair(d)
    g = c / "graphs"
    (g / "006_c_d.txt").symlink_to("005_a_b.txt")
    (g / "005_a_b.txt").symlink_to("006_c_d.txt")
    (g / "loop").symlink_to(".")


def unreadable(d: Path) -> None:
    """A dump with mode 000 (built at test time; as root the test simulates the denial instead)."""
    _, c = _pair(d)
    _last_dump(c).chmod(0)


# -------------------------------------------------------------------------------------------- tensors


def _tensor_pair(d: Path, cand: bytes) -> None:
    b, c = _pair(d)
    write_tensors(b, {"logits": ("F32", (4, 4), f32(LOGITS))})
    (c / "tensors").mkdir()
    (c / "tensors" / "outputs.safetensors").write_bytes(cand)


def tensor_garbage(d: Path) -> None:
    _tensor_pair(d, b"GARBAGE!" * 64)


def safetensors_truncated(d: Path) -> None:
    full = safetensors_bytes({"logits": ("F32", (4, 4), f32(LOGITS))})
    _tensor_pair(d, full[:-20])


def safetensors_huge_header(d: Path) -> None:
    _tensor_pair(d, struct.pack("<Q", 1 << 60) + b'{"logits":{}}')


def safetensors_huge_tensor(d: Path) -> None:
    """The header claims a 2**40-element tensor the file does not hold."""
    h = json.dumps(
        {"logits": {"dtype": "F32", "shape": [1 << 20, 1 << 20], "data_offsets": [0, 1 << 42]}}
    ).encode()
    h += b" " * (-len(h) % 8)
    _tensor_pair(d, struct.pack("<Q", len(h)) + h + f32(LOGITS))


def pt_malicious(d: Path) -> None:
    """A pickle whose loading would run ``os.system``; protocol-2 bytes written by hand (no torch needed)."""
    import pickle

    class Evil:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, ("touch ad_diff_pwned",))

    b, c = _pair(d)
    write_tensors(b, {"logits": ("F32", (4, 4), f32(LOGITS))})
    (c / "tensors").mkdir()
    (c / "tensors" / "outputs.pt").write_bytes(pickle.dumps({"logits": Evil()}, protocol=2))


def _header_case(d: Path, header: bytes, data: bytes = b"") -> None:
    """The candidate's outputs.safetensors carries ``header`` (raw JSON bytes) over ``data``."""
    header += b" " * (-len(header) % 8)
    _tensor_pair(d, struct.pack("<Q", len(header)) + header + data)


def st_dtype_list(d: Path) -> None:
    _header_case(d, b'{"logits":{"dtype":["F32"],"shape":[4,4],"data_offsets":[0,64]}}', f32(LOGITS))


def st_offsets_string(d: Path) -> None:
    _header_case(d, b'{"logits":{"dtype":"F32","shape":[4,4],"data_offsets":"0,64"}}', f32(LOGITS))


def st_offsets_float(d: Path) -> None:
    _header_case(d, b'{"logits":{"dtype":"F32","shape":[4,4],"data_offsets":[0.0,64.0]}}', f32(LOGITS))


def st_shape_1e400(d: Path) -> None:
    _header_case(d, b'{"logits":{"dtype":"F32","shape":[1e400],"data_offsets":[0,64]}}', f32(LOGITS))


def st_deep_nesting(d: Path) -> None:
    """100,000 nested arrays (a parser that recurses dies here)."""
    _header_case(d, b'{"logits":' + b"[" * 100_000 + b"]" * 100_000 + b"}")


def st_huge_int(d: Path) -> None:
    _header_case(
        d, b'{"logits":{"dtype":"F32","shape":[' + b"9" * 5000 + b'],"data_offsets":[0,64]}}', f32(LOGITS)
    )


def st_negative_shape(d: Path) -> None:
    _header_case(d, b'{"logits":{"dtype":"F32","shape":[-4,-4],"data_offsets":[0,64]}}', f32(LOGITS))


def st_overlap(d: Path) -> None:
    """Two tensors whose data_offsets overlap (each alone is consistent)."""
    _header_case(d, b'{"a":{"dtype":"F32","shape":[16],"data_offsets":[0,64]},'
                    b'"logits":{"dtype":"F32","shape":[4,4],"data_offsets":[32,96]}}', f32(LOGITS) * 2)


def tensor_name_surrogate(d: Path) -> None:
    """A tensor named "\\ud800" (a lone surrogate, legal as a JSON escape) in both runs, drifting."""
    b, c = _pair(d)
    header = b'{"\\ud800":{"dtype":"F32","shape":[4,4],"data_offsets":[0,64]}}'
    header += b" " * (-len(header) % 8)
    for run, values in ((b, LOGITS), (c, [x + 5 for x in LOGITS])):
        (run / "tensors").mkdir(parents=True, exist_ok=True)
        raw = struct.pack("<Q", len(header)) + header + f32(values)
        (run / "tensors" / "outputs.safetensors").write_bytes(raw)


def pt_long_global(d: Path) -> None:
    """A pickle naming a 40 KB global (torch took 16 s to refuse it inside its error message)."""
    b, c = _pair(d)
    write_tensors(b, {"logits": ("F32", (4, 4), f32(LOGITS))})
    (c / "tensors").mkdir()
    (c / "tensors" / "outputs.pt").write_bytes(b"\x80\x02c" + b"a" * 40_000 + b"\nb\n)R.")


def _pt_case(d: Path, make: Callable[[], Any], *, replace_pickle: bytes | None = None) -> None:
    """The candidate's outputs.pt is ``torch.save(make())`` (built at test time: needs torch)."""
    import io
    import zipfile

    import torch

    b, c = _pair(d)
    write_tensors(b, {"logits": ("F32", (4, 4), f32(LOGITS))})
    (c / "tensors").mkdir()
    buf = io.BytesIO()
    torch.save(make(), buf)
    data = buf.getvalue()
    if replace_pickle is not None:  # same archive, another data.pkl
        src, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            for info in src.infolist():
                z.writestr(info, replace_pickle if info.filename.endswith("data.pkl") else src.read(info))
        data = out.getvalue()
    (c / "tensors" / "outputs.pt").write_bytes(data)


def pt_expanded(d: Path) -> None:
    """torch.ones(1).expand(2**31): 1.6 KB on disk, 8 GiB if materialised."""
    import torch

    _pt_case(d, lambda: {"logits": torch.ones(1).expand(2**31)})


def pt_meta(d: Path) -> None:
    import torch

    _pt_case(d, lambda: {"logits": torch.empty(4, 4, device="meta")})


def pt_sparse(d: Path) -> None:
    import torch

    _pt_case(d, lambda: {"logits": torch.eye(4).to_sparse()})


def pt_quantized(d: Path) -> None:
    import warnings

    import torch

    with (
        warnings.catch_warnings()
    ):  # torch deprecates creating quantized tensors; reading old files still matters
        warnings.simplefilter("ignore")
        _pt_case(d, lambda: {"logits": torch.quantize_per_tensor(torch.ones(4, 4), 0.1, 0, torch.qint8)})


def pt_self_reference(d: Path) -> None:
    import torch

    def make() -> Any:
        loop: list[Any] = [torch.ones(2)]
        loop.append(loop)
        return loop

    _pt_case(d, make)


def pt_deep_list(d: Path) -> None:
    """100,000 nested lists in data.pkl (pickle itself cannot write them: it recurses)."""
    depth = 100_000
    _pt_case(d, lambda: [], replace_pickle=b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b".")


def tensor_mismatch(d: Path) -> None:
    b, c = _pair(d)
    write_tensors(b, {"logits": ("F32", (4, 4), f32(LOGITS)), "hidden": ("F32", (2, 2), f32([1, 2, 3, 4]))})
    half = struct.pack("<4e", 1, 2, 3, 4)
    write_tensors(c, {"logits": ("F32", (2, 8), f32(LOGITS)), "hidden": ("F16", (2, 2), half)})


def nan_everywhere(d: Path) -> None:
    """NaN/Inf at the same places in both runs (not new), plus one new NaN in ``logits_new``."""
    b, c = _pair(d)
    bad = [float("nan"), float("inf"), float("-inf")] * 5 + [1.0]
    new = [1.0] * 15 + [float("nan")]
    write_tensors(b, {"logits": ("F32", (4, 4), f32(bad)), "logits_new": ("F32", (4, 4), f32([1.0] * 16))})
    write_tensors(c, {"logits": ("F32", (4, 4), f32(bad)), "logits_new": ("F32", (4, 4), f32(new))})


def nan_same_places(d: Path) -> None:
    """Every element NaN or Inf, identically in both runs: nothing is new."""
    b, c = _pair(d)
    bad = [float("nan"), float("inf"), float("-inf"), float("nan")] * 4
    write_tensors(b, {"logits": ("F32", (4, 4), f32(bad))})
    write_tensors(c, {"logits": ("F32", (4, 4), f32(bad))})


def config_garbage(d: Path) -> None:
    """``config/`` holding YAML that does not parse (a top-level *.yaml may be anything and is only noted)."""
    _, c = _pair(d)
    (c / "config").mkdir()
    (c / "config" / "default.yaml").write_text("transforms:\n  a: [1, 2\n  b: 3\n")


# ------------------------------------------------------------------------------------- hostile names

EVIL = "fuse_<script>alert(1)</script>|`x`|[bold]red[/bold]"


def markup_names(d: Path) -> None:
    """Names holding markdown, HTML and rich markup, in a dump header, a target and a tensor name."""
    b, c = _pair(d)
    for run in (b, c):
        p = run / "graphs" / "005_compile_evil.txt"
        p.write_text(dump_text("compile", EVIL).replace("auto_deploy.rope", "evil.<b>|```op```|[red]x[/red]"))
    (c / "graphs" / "005_compile_evil.txt").write_text(dump_text("compile", EVIL, rope=False))
    write_tensors(b, {EVIL: ("F32", (4, 4), f32(LOGITS))})
    write_tensors(c, {EVIL: ("F32", (4, 4), f32([x + 5 for x in LOGITS]))})


CASES: dict[str, Callable[[Path], None]] = {f.__name__: f for f in (
    empty_log, binary_log, log_cut_mid_line, log_noise_only, log_retry, log_ranks_disagree, log_non_utf8,
    log_crlf_ansi, dump_cut_mid_line, dump_non_utf8, dump_crlf, dump_huge_line, graphs_gap,
    graphs_duplicate_counter, graphs_empty, graphs_is_file, symlink_loop, unreadable, tensor_garbage,
    safetensors_truncated, safetensors_huge_header, safetensors_huge_tensor, pt_malicious, tensor_mismatch,
    nan_everywhere, nan_same_places, config_garbage, markup_names, st_dtype_list, st_offsets_string,
    st_offsets_float, st_shape_1e400, st_deep_nesting, st_huge_int, st_negative_shape, st_overlap,
    tensor_name_surrogate, pt_long_global, pt_expanded, pt_meta, pt_sparse, pt_quantized, pt_self_reference,
    pt_deep_list,
)}
#: Built at test time only: too large for git, or not representable in git (links, modes, empty folders), or
#: made by torch.save (whose archives are not byte-stable).
RUNTIME_ONLY = frozenset(
    {
        "dump_huge_line",
        "symlink_loop",
        "unreadable",
        "graphs_empty",
        "pt_expanded",
        "pt_meta",
        "pt_sparse",
        "pt_quantized",
        "pt_self_reference",
        "pt_deep_list",
    }
)

# Round two (issue 14: containment, bombs, odd YAML, config takeover, output safety) lives in its own module.
import hostile_round2  # noqa: E402

hostile_round2.h = sys.modules[__name__]
CASES.update(hostile_round2.CASES)
RUNTIME_ONLY = RUNTIME_ONLY | hostile_round2.RUNTIME_ONLY

# Round three: .pt archives whose zip headers make Python's zipfile raise (issue 14, the longer fuzz run).
import hostile_pt_zip  # noqa: E402

hostile_pt_zip.h = sys.modules[__name__]
CASES.update(hostile_pt_zip.CASES)
RUNTIME_ONLY = RUNTIME_ONLY | hostile_pt_zip.RUNTIME_ONLY

# Round three: logs and per-rank log folders linked out of the run folder, or FIFOs (all built at test time).
import hostile_log_links  # noqa: E402

hostile_log_links.h, hostile_log_links.r2 = sys.modules[__name__], hostile_round2
CASES.update(hostile_log_links.CASES)
RUNTIME_ONLY = RUNTIME_ONLY | hostile_log_links.RUNTIME_ONLY

# Round four: the commands besides the comparison (candidates, batch) on links and FIFOs (built at test time).
import hostile_commands  # noqa: E402

hostile_commands.h, hostile_commands.r2 = sys.modules[__name__], hostile_round2
CASES.update(hostile_commands.CASES)
RUNTIME_ONLY = RUNTIME_ONLY | hostile_commands.RUNTIME_ONLY

# Round four (issue 28): strings that act on the reader's terminal or hide what a report shows (sinks).
import hostile_sinks  # noqa: E402

hostile_sinks.h, hostile_sinks.r2 = sys.modules[__name__], hostile_round2
CASES.update(hostile_sinks.CASES)
RUNTIME_ONLY = RUNTIME_ONLY | hostile_sinks.RUNTIME_ONLY


def build_case(name: str, dest: Path) -> Path:
    """Build case ``name`` into ``dest`` (``dest/baseline``, ``dest/candidate``); returns ``dest``."""
    CASES[name](dest)
    return dest


def main() -> None:
    """Rewrite the committed corpus (the manifest is hand-written and kept)."""
    keep = OUT / "manifest.yaml"
    manifest = keep.read_text() if keep.exists() else None
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    if manifest is not None:
        keep.write_text(manifest)
    for name in CASES:
        if name not in RUNTIME_ONLY:
            build_case(name, OUT / name)
    listed = set(yaml.safe_load(manifest)["cases"]) if manifest else set()
    missing = sorted(set(CASES) - listed)
    if missing:
        print(f"manifest.yaml lacks: {', '.join(missing)}", file=sys.stderr)


if __name__ == "__main__":
    main()
