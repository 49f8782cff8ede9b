"""``.pt`` files (``torch.save``): the only tensor files that need torch, and the most dangerous ones.

Before torch sees a file, its pickle is pre-scanned opcode by opcode (:func:`prescan`): the pickle must be
small, every global it names must be short and on an allow-list of what plain dense tensors need, and
sparse, meta, quantized or nested tensors are refused by their rebuild function's name; a zip archive that
Python's zipfile cannot read (or would inflate without bound) is an input error, not a crash
(:mod:`~ad_diff.kinds.tensors.pt_archive`). Only then is it
loaded with ``torch.load(weights_only=True, mmap=True)``. Loaded tensors are checked again (dense, strided,
CPU, no more elements than their storage holds: an expanded view of one element claiming 2**31 is refused,
never materialised), and containers are walked iteratively with a depth cap (self-referencing or very deep
lists end in a clear error). Nothing in a pickle is ever executed.
"""

from __future__ import annotations

import io
import pickletools
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ad_diff.core import lazy, limits, safepath
from ad_diff.errors import InputError
from ad_diff.kinds.tensors.header import safe_name
from ad_diff.kinds.tensors.pt_archive import check_torch_agrees, read_pickle

if TYPE_CHECKING:
    import torch
else:
    torch = lazy.module("torch")

MAX_PICKLE = 8 * 1024 * 1024
"""Bytes of pickle (not of tensor data) a .pt may hold: a dict of 10,000 tensors takes about 1 MiB."""
MAX_GLOBAL = 200
"""Characters of a ``module name`` global: torch's longest allowed one is about 45."""
ZIP_MAGIC = b"PK\x03\x04"
"""How a file that torch.load reads as a zip archive starts (torch.serialization._is_zipfile)."""
MAX_DEPTH = 32
"""Nesting of dicts/lists/tuples around the tensors."""
_ALLOWED = frozenset({
    "collections OrderedDict", "torch._utils _rebuild_tensor_v2", "torch._utils _rebuild_tensor",
    "torch._utils _rebuild_parameter", "torch._utils _rebuild_parameter_with_state",
    "torch.nn.parameter Parameter",
    "torch._tensor _rebuild_from_type_v2", "torch Tensor", "torch Size", "torch device", "builtins set",
    "builtins frozenset", "torch.storage UntypedStorage", "torch.serialization _get_layout", "torch strided",
    "torch._utils _rebuild_tensor_v3",
})  # fmt: skip
_UNSUPPORTED = {
    "_rebuild_sparse_tensor": "a sparse tensor", "_rebuild_sparse_csr_tensor": "a sparse tensor",
    "_rebuild_meta_tensor_no_storage": "a meta tensor (no data)", "_rebuild_qtensor": "a quantized tensor",
    "_rebuild_nested_tensor": "a nested tensor", "_rebuild_wrapper_subclass": "a tensor subclass",
    "_rebuild_device_tensor_from_numpy": "a numpy-backed tensor", "_rebuild_xla_tensor": "an XLA tensor",
}  # fmt: skip
_STRINGS = (
    "SHORT_BINUNICODE",
    "BINUNICODE",
    "BINUNICODE8",
    "UNICODE",
    "SHORT_BINSTRING",
    "BINSTRING",
    "STRING",
)

_CACHE: dict[Path, dict[str, Any]] = {}


def _allowed(name: str) -> bool:
    module, _, attr = name.partition(" ")
    if name in _ALLOWED:
        return True
    # dtypes and typed storages: torch.bfloat16, torch.BFloat16Storage ...
    return module == "torch" and attr.isidentifier() and (attr.endswith("Storage") or attr in _dtype_names())


def _dtype_names() -> frozenset[str]:
    return frozenset({
        "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64", "bool", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "half",
        "float",
        "double", "long", "int", "short",
    })  # fmt: skip


def _open(path: Path, source: Path | None) -> BinaryIO:
    """``source`` (the ``/proc/self/fd`` name of the file :func:`load_pt` opened beneath its run folder), else
    ``path`` opened by the one opener beneath the folder it resolves to (a file the caller named)."""
    if source is None:
        return safepath.open_file(path, safepath.given_root(path), "a torch.save file")
    return source.open("rb")  # not a run path: the descriptor safepath.pinned opened, by its name


def prescan(path: Path, source: Path | None = None) -> tuple[int, int] | None:
    """Refuse a ``.pt`` whose pickle could run code, names an over-long global, or holds odd tensors.
    Returns where a zip archive's ``data.pkl`` lies (data offset, size), ``None`` for a legacy file."""
    try:
        with _open(path, source) as f:
            # torch.load's own test (a local header first): zipfile.is_zipfile looks for an end record in
            # the last 64 KiB instead, so a pickle with a zip appended was scanned as the zip and loaded by
            # torch as the pickle, which the scan never saw
            is_zip = f.read(4) == ZIP_MAGIC
            f.seek(0)
            where = None
            cut = False
            if is_zip:
                stream, where = read_pickle(path, f, MAX_PICKLE)
            else:  # legacy torch.save (or a bare pickle): its pickles come first, raw storage bytes after
                stream = f.read(MAX_PICKLE + 1)
                cut = len(stream) > MAX_PICKLE
                stream = stream[:MAX_PICKLE]
    except OSError as e:
        raise InputError(path, f"cannot be read ({e.strerror or e}); expected a torch.save file") from e
    _scan(path, stream, 1 if is_zip else limits.PICKLE_STREAMS, cut)
    return where


def _scan(path: Path, stream: bytes, pickles: int, cut: bool = False) -> None:
    """Walk, opcode by opcode, each of the ``pickles`` consecutive pickles torch will unpickle (one in a zip
    archive; :data:`~ad_diff.core.limits.PICKLE_STREAMS` in a legacy file, raw storage bytes after them).

    Every one must be a complete, well-formed pickle naming only allowed globals: a malformed later pickle
    went to torch unscanned once, and an unterminated 80 KB global then took 84 s in its error message.
    The walk is linear in ``stream`` (``cut``: the file goes on past it, beyond the pickle cap).
    """
    buf = io.BytesIO(stream)
    for index in range(pickles):
        which = "pickle" if pickles == 1 else f"pickle {index + 1} of the {pickles} of a legacy file"
        too_long = InputError(path, f"refused to load: its pickles take more than the {MAX_PICKLE:,}-byte "
                                    f"cap ({which} does not end within it); nothing in it was executed")
        if buf.tell() >= len(stream):
            if cut:
                raise too_long
            raise InputError(path, f"not a readable torch.save file: it ends before {which}")
        try:
            _walk(path, buf)
        except InputError:
            raise
        except Exception as e:  # noqa: BLE001 - any malformed opcode stream is an input error
            if cut and buf.tell() >= len(stream):
                raise too_long from None
            raise InputError(path, f"not a readable torch.save file ({which}: {str(e)[:120]}); nothing in it "
                                   "was executed") from None


def _walk(path: Path, buf: io.BytesIO) -> None:
    """One pickle's opcodes up to its STOP, each global checked (:func:`_check_global`)."""
    strings: list[str] = []  # recent string pushes: STACK_GLOBAL takes module and name from them
    memo: dict[int, str] = {}
    last_string = False
    for op, arg, _pos in pickletools.genops(buf):
        name = op.name
        slot = arg if isinstance(arg, int) else -1
        if name in _STRINGS:
            strings.append(arg.decode("latin-1") if isinstance(arg, bytes) else str(arg))
            del strings[:-4]
        elif name == "MEMOIZE" and last_string:
            memo[len(memo)] = strings[-1]
        elif name in ("BINPUT", "LONG_BINPUT", "PUT") and last_string:
            memo[slot] = strings[-1]
        elif name in ("BINGET", "LONG_BINGET", "GET") and slot in memo:
            strings.append(memo[slot])
            del strings[:-4]
        elif name in ("GLOBAL", "INST"):
            _check_global(path, str(arg))
        elif name == "STACK_GLOBAL":
            if len(strings) < 2:
                raise InputError(path, "refused to load: a global whose name cannot be read statically")
            _check_global(path, f"{strings[-2]} {strings[-1]}")
        last_string = name in _STRINGS or (name in ("BINGET", "LONG_BINGET", "GET") and slot in memo)


def _check_global(path: Path, name: str) -> None:
    shown = name[:80] + ("..." if len(name) > 80 else "")
    if len(name) > MAX_GLOBAL:
        raise InputError(
            path,
            f"refused to load: the pickle names a global of {len(name)} characters "
            f"({shown!r}); nothing in it was executed",
        )
    attr = name.rpartition(" ")[2]
    if attr in _UNSUPPORTED:
        raise InputError(
            path,
            f"holds {_UNSUPPORTED[attr]}, which ad-diff does not compare; record dense "
            "tensors (ad_diff.recording.save_tensors)",
        )
    if not _allowed(name):
        raise InputError(
            path,
            f"refused to load: this pickle calls {shown.replace(' ', '.')}, i.e. it could run code, and "
            "ad-diff "
            "only loads .pt files holding plain tensors and containers. Nothing in it was executed. Record "
            "tensors with ad_diff.recording (safetensors) instead.",
        )


def load_pt(path: Path, root: Path | None = None) -> dict[str, Any]:
    """The tensors of a ``.pt`` (a tensor or nested containers of tensors), by dotted name, memory-mapped
    (``root``: the run folder it is opened beneath; ``None``: the folder it resolves into). The file is
    opened once; the pre-scan, torch's zip reader and torch.load all read that one open file."""
    if path in _CACHE:
        return _CACHE[path]
    root = safepath.given_root(path) if root is None else root
    with safepath.pinned(path, root, "a torch.save file") as name:
        obj = _load(path, name)

    flat = _flatten(obj, path.stem if isinstance(obj, torch.Tensor) else "", path)
    _CACHE[path] = flat
    return flat


def _load(path: Path, name: Path) -> Any:
    """torch.load of ``name`` (``path`` opened, see :func:`load_pt`) after the pre-scan; errors name
    ``path``."""
    where = prescan(path, name)
    if where is not None:
        check_torch_agrees(path, where, name)

    try:
        try:
            return torch.load(name, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError as e:
            if "mmap" not in str(e) and "zip" not in str(e):
                raise
            return torch.load(name, map_location="cpu", weights_only=True)  # legacy format cannot be mapped
    except Exception as e:  # noqa: BLE001 - any failure of torch's reader on garbage is an input error
        first = next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)[:200]
        raise InputError(path, f"not a readable torch.save file ({type(e).__name__}: {first})") from e


def _flatten(root: Any, prefix: str, path: Path) -> dict[str, Any]:
    """Tensors by dotted name, walked iteratively (no recursion) with a depth cap and a cycle check."""
    out: dict[str, Any] = {}
    stack: list[tuple[Any, str, int, frozenset[int]]] = [(root, prefix, 0, frozenset())]
    while stack:
        obj, name, depth, seen = stack.pop()
        if isinstance(obj, torch.Tensor):
            if len(out) >= limits.TENSORS_PER_FILE:
                raise limits.count_cap(path, "tensors", limits.TENSORS_PER_FILE, "TENSORS_PER_FILE")
            out[safe_name(name)] = _checked(obj, name, path)
            continue
        if obj is None:
            continue
        if not isinstance(obj, (dict, list, tuple)):
            raise InputError(
                path,
                f"expected a tensor or a dict of tensors, found {type(obj).__name__} at "
                f"'{safe_name(name)[:80]}'",
            )
        if id(obj) in seen:
            raise InputError(path, f"container at '{safe_name(name)[:80]}' contains itself")
        if depth >= MAX_DEPTH:
            raise InputError(
                path, f"containers nested deeper than {MAX_DEPTH} levels at '{safe_name(name)[:80]}'"
            )
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
        inner = seen | {id(obj)}
        for k, v in reversed(list(items)):
            stack.append((v, f"{name}.{k}" if name else str(k), depth + 1, inner))
    return dict(sorted(out.items()))


def _checked(t: Any, name: str, path: Path) -> Any:
    """``t``, detached from autograd, if it is a dense CPU tensor that holds every element it claims; else
    an InputError."""
    shown = safe_name(name)[:80]
    if t.is_meta:
        raise InputError(path, f"tensor '{shown}' is a meta tensor (it has no data)")
    if t.layout is not torch.strided or t.is_quantized or t.is_nested:
        raise InputError(
            path, f"tensor '{shown}' is not a dense tensor ({t.layout}); ad-diff compares dense ones"
        )
    if t.device.type != "cpu":
        raise InputError(path, f"tensor '{shown}' is on {t.device}; expected a CPU tensor")
    stored = t.untyped_storage().nbytes() // max(t.element_size(), 1)
    if t.numel() > stored:
        raise InputError(
            path,
            f"tensor '{shown}' claims {t.numel()} elements over a storage of {stored} "
            "(an expanded or zero-stride view); ad-diff compares stored values only",
        )
    # saved without torch.no_grad() (any `torch.save(model(x))`), a tensor carries requires_grad, and
    # .numpy() refuses it: its values are what is compared, so it is read like any other
    return t.detach()


def flat_numpy(record: Any) -> Any:
    """The record's elements as a flat numpy array of its storage type (bf16 as uint16, complex as pairs)."""
    t = load_pt(record.path, record.root)[record.name].detach()  # loaded detached already; .numpy() needs it
    if not t.is_contiguous():
        t = t.contiguous()  # bounded: numel <= stored elements (checked on load)
    flat = t.reshape(-1)
    if flat.dtype == torch.bfloat16:
        return flat.view(torch.int16).numpy().view("uint16")
    if flat.dtype.is_floating_point and flat.element_size() == 1:
        return flat.view(torch.uint8).numpy()
    if flat.dtype == torch.complex64:
        return flat.view(torch.float32).numpy()
    return flat.numpy()
