"""Speed and memory benchmark (issue 15): every figure of the issue's target table, measured side by side.

    python scripts/bench.py [--repeats 5] [--json FILE] [--dir DIR] [--quick] [--format json]
                            [--no-moe] [--no-tensor-pair] [--no-history]
    python scripts/bench.py --profile llama80 [--dir DIR]     # cProfile of one ad-diff run, top functions
    python scripts/bench.py --startup [--repeats 15] [--extra-path DIR]   # the start-up rows alone

Workloads, generated into ``--dir`` (reused by a later run while the sizes and the generators' source are
unchanged; a temporary folder, deleted afterwards, when no ``--dir`` is given):

* ``llama80``/``llama160``: ``scripts/benchgen/llama.py`` pairs (bf16 Llama-3-70B shapes, 92 dumps per
  run, recorded bf16 logits, one injected loss: match_rmsnorm_pattern misses one norm of the middle layer);
* ``worst160``/``worst320``: the same, the loss at match_repeat_kv (every later dump differs);
* ``swiglu160``/``swiglu320``: the same, the loss at match_swiglu_pattern (one SwiGLU of the middle layer
  left unfused: the shape of issue 43's pair);
* ``moe``: the ``scripts/fixturegen/large.py`` pair (80 layers, 90 transforms, 50k+ nodes per dump);
* ``log-only``: the 80-layer logs alone.
* ``log-big``: the same logs with 200 more lines after each transform line, figures drawn afresh (about
  43,000 lines a run, most of them repeated verbatim): what the accounting costs a line;
* ``log-distinct``: ``log-big`` with every added line made unique: what it costs when no line repeats.

Every command runs in its own process, started here with this interpreter and ``PYTHONPATH`` = this
checkout: ``python -c pass``, ``ad-diff --help`` (``python -m ad_diff``), ad-diff on each pair (``-f
json`` to /dev/null) and the read floor on each pair: a Python script that opens and splits every dump line
of both runs, reads the logs and the tensor files, and nothing more. The commands run interleaved (A, B,
C, A, B, C, ...) ``--repeats`` times and the table shows medians, because the machine is shared. Wall time
is ``perf_counter`` around the child; CPU time and peak RSS are its ``os.wait4`` rusage, taken by a tiny
launcher per run (``scripts/benchgen/runner.py`` says why a launcher: the RSS a forking parent reached
would otherwise count as the child's).

Every file is read once before timing, so all commands read from the page cache. The first run of each
ad-diff command keeps its output (``DIR/outputs/``): it must exit 1 and its JSON must hold a gated
match_loss finding at the injected transform (and a tensors section where logits were recorded). A command
failing that is INVALID in the table: its time would measure something else. A later run with another
exit code makes it INVALID too.

Rows measured by ``scripts/bench_tensors.py`` and ``scripts/bench_history.py`` are called as functions when
those scripts are present (the seam is described in ``scripts/benchgen/external.py``).

``--quick`` uses small sizes and one repeat: a smoke test of this script, whose figures mean nothing.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))

from benchgen.external import history_row, tensor_row  # noqa: E402
from benchgen.llama import make_llama_pair  # noqa: E402
from benchgen.runner import Cmd, Target, big_log, check_report, log_only, run_once, warm, workload  # noqa: E402
from benchgen.startup import env_for, startup_commands, startup_targets  # noqa: E402
from fixturegen.large import make_large_pair  # noqa: E402

READ_FLOOR = """
import sys
from pathlib import Path
n = 0
for run in sys.argv[1:]:
    for p in sorted(Path(run).rglob("*")):
        if p.suffix in (".txt", ".log"):
            with open(p, encoding="utf-8") as f:
                n += len(f.read().split("\\n"))
        elif p.is_file():
            n += len(p.read_bytes())
print(n)
"""
LOST_AT = "match_rmsnorm_pattern"
"""Where the injected loss of the Llama and MoE pairs shows (both generators lose RMSNorm matches)."""
WORST_AT = "match_repeat_kv"
"""The worst-case pairs' loss: the candidate's match_repeat_kv, the first pattern-matcher transform that
rewrites the graph, misses one layer's k repeat, and that layer keeps its unsqueeze/expand/reshape (so
match_grouped_attention misses it too) to the end: every later dump differs (84 of 92)."""
SWIGLU_AT = "match_swiglu_pattern"
"""The SwiGLU pairs' loss (issue 43's pair): the candidate's match_swiglu_pattern leaves one layer's SwiGLU
unfused, which the later fusions and the cache insertion carry to the end."""
LOSS_AT = {"worst": ("repeat_kv", WORST_AT), "swiglu": ("swiglu", SWIGLU_AT)}
"""The loss and the transform it shows at, by workload family (the other pairs: rmsnorm at LOST_AT)."""


def _say(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


@dataclass(frozen=True)
class Sizes:
    """Workload sizes."""

    llama: tuple[int, int] = (80, 160)
    worst: tuple[int, int] = (160, 320)
    """Layers of the worst-case pairs (divergence at the first pattern-matcher transform)."""
    swiglu: tuple[int, int] = (160, 320)
    """Layers of the SwiGLU-loss pairs."""
    moe: tuple[int, int, int] = (80, 90, 50_000)
    """layers, transforms, nodes per dump."""
    big_log: int = 200
    """Lines added after each transform line of the 80-layer logs (``log-big``: about 65,000 lines a run)."""


QUICK = Sizes(llama=(2, 4), worst=(4, 8), swiglu=(4, 8), moe=(2, 20, 200), big_log=5)


def _fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "-"
    return {"x": f"{v:.2f}x", "s": f"{v:.3f} s", "MiB": f"{v:.1f} MiB"}.get(unit, f"{v:.3g} {unit}")


def targets(c: dict[str, Cmd], w: dict[str, dict], has_moe: bool) -> list[Target]:
    """The issue's target rows from the medians (plus the machine-load ratios as notes)."""
    if "llama80 ad-diff" not in c:  # --startup
        return startup_targets(c)

    def ratio(a: str, b: str, what: str, limit: float | None) -> Target:
        ad, fl = c[a], c[b]
        note = f"{ad.med('wall'):.2f} s / {fl.med('wall'):.2f} s; CPU {ad.med('cpu') / fl.med('cpu'):.2f}x"
        return Target(what, ad.med("wall") / fl.med("wall"), limit, "x", note, ad.invalid or fl.invalid)

    rows = [
        ratio("llama160 ad-diff", "llama160 floor", "160-layer pair: ad-diff / read floor", 2.5),
        ratio("llama80 ad-diff", "llama80 floor", "80-layer pair: ad-diff / read floor", 3.0),
    ]
    if has_moe:
        moe = c["moe ad-diff"]
        pair = w["moe"]["largest_pair_bytes"]
        rows += [
            ratio("moe ad-diff", "moe floor", "MoE pair: ad-diff / read floor", 2.0),
            Target(
                "MoE pair: peak RSS / largest dump pair",
                moe.med("rss_kb") * 1024 / pair,
                7.0,  # issue 43 (it was 8x since issue 15)
                "x",
                f"{moe.med('rss_kb') / 1024:.0f} MiB / {pair / 2**20:.1f} MiB",
                moe.invalid,
            ),
        ]
    for family, what in (("worst", "worst case"), ("swiglu", "SwiGLU loss")):
        if f"{family}160 ad-diff" in c:
            rows += worst_targets(c, family, what)
    for name, what in (("log-big", "large log"), ("log-distinct", "large log, no line twice")):
        if f"{name} ad-diff" in c:  # no target of its own: the accounting's per-line cost on a large log
            row = ratio(f"{name} ad-diff", f"{name} floor", f"{what}: ad-diff / read floor", None)
            row.note += f"; {w[name]['lines']} lines a run"
            rows.append(row)
    big = c["llama160 ad-diff"]
    rows.append(
        Target(
            "160-layer pair with tensors: peak RSS",
            big.med("rss_kb") / 1024,
            120.0,
            "MiB",
            f"read floor {c['llama160 floor'].med('rss_kb') / 1024:.0f} MiB",
            big.invalid,
        )
    )
    one, two = c["llama80 ad-diff"], c["llama160 ad-diff"]
    floors = c["llama160 floor"].med("wall") / c["llama80 floor"].med("wall")
    rows.append(
        Target(
            "doubling the layers (80 -> 160): ad-diff time",
            two.med("wall") / one.med("wall"),
            2.1,
            "x",
            f"CPU {two.med('cpu') / one.med('cpu'):.2f}x; read floor {floors:.2f}x",
            one.invalid or two.invalid,
        )
    )
    for name in c:  # --extra-path variants of the pairs, against the same read floor
        if name.endswith("]") and " ad-diff [" in name and not name.startswith("log-only"):
            pair = name.split(" ad-diff [")[0]
            rows.append(ratio(name, f"{pair} floor", f"{name}: ad-diff / read floor", None))
    return rows + startup_targets(c)


def worst_targets(c: dict[str, Cmd], family: str = "worst", what: str = "worst case") -> list[Target]:
    """The rows of a worst-case family (``worst``, ``swiglu``): the 160-layer pair against its read floor,
    doubling its layers, its memory."""
    ad, fl, two = c[f"{family}160 ad-diff"], c[f"{family}160 floor"], c[f"{family}320 ad-diff"]
    floors = c[f"{family}320 floor"].med("wall") / fl.med("wall")
    return [
        Target(f"{what}, 160 layers: ad-diff / read floor", ad.med("wall") / fl.med("wall"), 2.5, "x",
               f"{ad.med('wall'):.2f} s / {fl.med('wall'):.2f} s; CPU {ad.med('cpu') / fl.med('cpu'):.2f}x",
               ad.invalid or fl.invalid),
        Target(f"{what}, 160 -> 320 layers: ad-diff time", two.med("wall") / ad.med("wall"), 2.1, "x",
               f"CPU {two.med('cpu') / ad.med('cpu'):.2f}x; read floor {floors:.2f}x",
               ad.invalid or two.invalid),
        Target(f"{what}, 160 layers: peak RSS", ad.med("rss_kb") / 1024, 120.0, "MiB",
               f"320 layers {two.med('rss_kb') / 1024:.0f} MiB; read floor {fl.med('rss_kb') / 1024:.0f} MiB",
               ad.invalid),
    ]


def generate(root: Path, sz: Sizes, moe: bool, startup: bool = False) -> dict[str, dict]:
    """Every workload under ``root`` (reused when already there; only the log-only one and its source with
    ``startup``)."""
    w: dict[str, dict] = {}
    for name, layers in zip(
        ("llama80", "llama160"), sz.llama, strict=True
    ):  # names = role (sizes in --quick)
        if startup and name != "llama80":
            continue
        w[name] = workload(root, name, {"layers": layers}, functools.partial(make_llama_pair, layers=layers))
    for family, sizes in (("worst", sz.worst), ("swiglu", sz.swiglu)):
        loss = LOSS_AT[family][0]
        for name, layers in zip((f"{family}160", f"{family}320"), sizes, strict=True):
            if not startup:
                w[name] = workload(root, name, {"layers": layers, "loss": loss},
                                   functools.partial(make_llama_pair, layers=layers, loss=loss))
    if moe and not startup:
        layers, transforms, nodes = sz.moe
        w["moe"] = workload(
            root,
            "moe",
            {"layers": layers, "transforms": transforms, "nodes": nodes},
            lambda d: make_large_pair(d, layers=layers, transforms=transforms, nodes_per_dump=nodes),
        )
    w["log-only"] = workload(
        root, "log-only", {"layers": sz.llama[0]}, lambda d: log_only(d, root / "llama80")
    )
    if not startup:
        repeat = sz.big_log
        w["log-big"] = workload(root, "log-big", {"layers": sz.llama[0], "repeat": repeat},
                                lambda d: big_log(d, root / "llama80", repeat=repeat))
        w["log-distinct"] = workload(root, "log-distinct", {"layers": sz.llama[0], "repeat": repeat},
                                     lambda d: big_log(d, root / "llama80", repeat=repeat, distinct=True))
    return w


def commands(root: Path, w: dict[str, dict], fmt: str, extra: list[Path], startup: bool) -> dict[str, Cmd]:
    """The measured commands, in the order they run within a repeat."""
    py = sys.executable
    c = startup_commands(py, root / "log-only", extra, LOST_AT, fmt, READ_FLOOR)
    if startup:
        return c
    for name in ["llama80", "llama160", "worst160", "worst320", "swiglu160", "swiglu320",
                 *(["moe"] if "moe" in w else []), "log-big", "log-distinct"]:
        b, cand = str(root / name / "baseline"), str(root / name / "candidate")
        argv = [py, "-m", "ad_diff", b, cand, "-f", fmt]
        at = LOSS_AT[name[:-3]][1] if name[:-3] in LOSS_AT else LOST_AT
        tensors = name not in ("moe", "log-big", "log-distinct")
        c[f"{name} ad-diff"] = Cmd(f"{name} ad-diff", argv, 1, at, tensors=tensors)
        for tag in map(str, extra):  # the same pair with another checkout or dependency first: before/after
            label = f"{name} ad-diff [{Path(tag).name}]"
            c[label] = Cmd(label, argv, 1, at, tensors=tensors, pythonpath=tag)
        c[f"{name} floor"] = Cmd(f"{name} floor", [py, "-c", READ_FLOOR, b, cand], 0)
    return c


def compile_bytecode(folders: list[Path]) -> None:
    """Write the ``.pyc`` files of ``folders``, as ``pip install`` does: a process started with
    ``PYTHONDONTWRITEBYTECODE`` set (this sandbox sets it) would otherwise compile every module it imports
    from source on every run, which no installed ad-diff does."""
    import compileall

    for entry in folders:
        for folder in str(entry).split(os.pathsep):
            if Path(folder).is_dir():
                compileall.compile_dir(folder, quiet=1, workers=1)


def measure(
    cmds: dict[str, Cmd], env: dict[str, str], repeats: int, loads: list[float], outputs: Path
) -> None:
    """Run every command ``repeats`` times, interleaved, in ``outputs`` (no ``ad_diff`` there, so that
    ``PYTHONPATH`` alone chooses the code). The first run of each ad-diff pair command keeps its output in
    ``outputs`` and is checked (:func:`check_report`); the later ones write to /dev/null."""
    outputs.mkdir(parents=True, exist_ok=True)
    order = list(cmds.values())
    for i in range(repeats):
        # Forward on even repeats, backward on odd ones: on this shared VM a command that runs right after a
        # long one is measurably slower (measured: the same code 0.72 s first, 0.85 s second), so every
        # command takes each place in the order as often as the others.
        for cmd in order if i % 2 == 0 else order[::-1]:
            safe = re.sub(r"[^\w.-]+", "_", cmd.name)
            keep = outputs / f"{safe}.json" if i == 0 and cmd.lost_at else None
            wall, cpu, rss, rc = run_once(cmd.argv, env_for(cmd, env), keep, cwd=outputs)
            cmd.wall.append(wall)
            cmd.cpu.append(cpu)
            cmd.rss_kb.append(rss)
            cmd.rcs.append(rc)
            if keep is not None:
                cmd.invalid = check_report(cmd, rc, keep)
            elif rc != cmd.expect_rc and not cmd.invalid:
                cmd.invalid = f"a timed run exited {rc}, expected {cmd.expect_rc}"
        loads.append(os.getloadavg()[0])
        _say(f"  repeat {i + 1}/{repeats} done (1-min load average {loads[-1]:.1f})")


def report(
    cmds: dict[str, Cmd], w: dict[str, dict], rows: list[Target], repeats: int, loads: list[float]
) -> None:
    """Print the workloads, the commands' medians and the target table."""
    _say()
    _say("workloads:")
    for name, info in w.items():
        if name == "log-only":
            continue
        _say(
            f"  {name:<9} {info['dumps_per_run']} dumps/run, {info['mb_per_run']:.1f} MB/run, largest dump "
            f"pair {info['largest_pair_bytes'] / 2**20:.2f} MiB, tensors {info['tensor_bytes']} B/run "
            f"(generated in {info.get('generated_s', 0):.1f} s)"
        )
    _say(f"commands (median of {repeats}, interleaved): wall s, CPU s, peak RSS MiB, exit codes")
    width = max(18, *(len(n) for n in cmds))
    for cmd in cmds.values():
        bad = f"  INVALID: {cmd.invalid}" if cmd.invalid else ""
        _say(
            f"  {cmd.name:<{width}} {cmd.med('wall'):8.3f} {cmd.med('cpu'):8.3f} "
            f"{cmd.med('rss_kb') / 1024:8.1f}  {sorted(set(cmd.rcs))}{bad}"
        )
    _say(
        f"machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, python "
        f"{platform.python_version()}; 1-min load average during the runs {min(loads):.1f}..{max(loads):.1f}"
    )
    _say()
    width = max(len(r.what) for r in rows)
    _say(f"  {'target':<{width}}  {'measured':>10}  {'limit':>10}  status")
    for r in rows:
        _say(
            f"  {r.what:<{width}}  {_fmt(r.value, r.unit):>10}  "
            f"{'<= ' + _fmt(r.limit, r.unit) if r.limit is not None else '':>10}  "
            f"{r.status:<8}  {r.invalid or r.note}"
        )


def profile(root: Path, name: str, env: dict[str, str], fmt: str) -> None:
    """Write ``root/<name>.prof`` (cProfile of one ad-diff run) and print its top functions."""
    out = root / f"{name}.prof"
    b, c = root / name / "baseline", root / name / "candidate"
    subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "ad_diff", str(b), str(c), "-f", fmt],
        stdout=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    import pstats

    for key in ("tottime", "cumulative"):
        _say(f"--- {name}: top 30 by {key} ({out})")
        pstats.Stats(str(out), stream=sys.stdout).sort_stats(key).print_stats(30)


def as_json(
    a: argparse.Namespace,
    repeats: int,
    loads: list[float],
    w: dict[str, dict],
    cmds: dict[str, Cmd],
    rows: list[Target],
    ext: dict[str, dict],
) -> dict[str, object]:
    """Every figure of a run, for ``--json``."""
    machine = {
        "system": platform.system(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_avg_1min": loads,
    }
    commands = {
        k: {
            "argv": ["<read floor>" if x == READ_FLOOR else x for x in v.argv],
            "wall_s": v.wall,
            "cpu_s": v.cpu,
            "rss_kb": v.rss_kb,
            "rc": v.rcs,
            "invalid": v.invalid,
            "median_wall_s": v.med("wall"),
            "median_cpu_s": v.med("cpu"),
            "median_rss_kb": v.med("rss_kb"),
        }
        for k, v in cmds.items()
    }
    targets = [
        {
            "what": r.what,
            "value": r.value,
            "limit": r.limit,
            "unit": r.unit,
            "status": r.status,
            "note": r.note,
            "invalid": r.invalid,
        }
        for r in rows
    ]
    return {
        "schema": 1,
        "quick": a.quick,
        "repeats": repeats,
        "format": a.format,
        "machine": machine,
        "workloads": w,
        "commands": commands,
        "targets": targets,
        "external": ext,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, help="interleaved runs per command (default 5; 1 with --quick)")
    ap.add_argument("--json", type=Path, help="write every figure to this file")
    ap.add_argument(
        "--dir", type=Path, help="where the workloads are generated and kept (default: temporary)"
    )
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat: a smoke test")
    ap.add_argument("--format", default="json", help="ad-diff output format measured (default json)")
    ap.add_argument("--no-moe", action="store_true", help="skip the MoE pair (763 MB per run)")
    ap.add_argument("--no-tensor-pair", action="store_true", help="skip the tensor pair row")
    ap.add_argument("--no-history", action="store_true", help="skip the history row")
    ap.add_argument(
        "--profile", choices=("llama80", "llama160", "worst160", "worst320", "swiglu160", "swiglu320", "moe"),
        help="profile one ad-diff run instead",
    )
    ap.add_argument("--startup", action="store_true", help="only python -c pass, --help and log-only")
    ap.add_argument(
        "--extra-path",
        type=Path,
        action="append",
        default=[],
        help="also run every ad-diff row (start-up and pairs) with DIR first on PYTHONPATH, e.g. another "
        "version of a dependency (pip install --target DIR) or an older checkout's ad_diff/ (git archive); "
        "several folders joined with ':' count as one variant",
    )
    a = ap.parse_args(argv)
    repeats = a.repeats or (1 if a.quick else 5)
    sz = QUICK if a.quick else Sizes()
    root = (a.dir or Path(tempfile.mkdtemp(prefix="ad-diff-bench-"))).resolve()  # commands run elsewhere
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    try:
        w = generate(root, sz, moe=not a.no_moe or a.profile == "moe", startup=a.startup)
        if a.profile:
            profile(root, a.profile, env, a.format)
            if a.dir is None:
                _say("(the profile is deleted with the temporary folder: pass --dir to keep it)")
            return 0
        cmds = commands(root, w, a.format, a.extra_path, a.startup)
        compile_bytecode([ROOT / "ad_diff", *a.extra_path])
        size = warm([root / name for name in w])
        _say(f"workloads in {root} ({size / 1e6:.0f} MB, read once to warm the page cache); measuring")
        loads = [os.getloadavg()[0]]
        measure(cmds, env, repeats, loads, root / "outputs")
        rows = targets(cmds, w, "moe" in w)
        ext: dict[str, dict] = {}
        if not (a.no_tensor_pair or a.startup):
            more, ext["tensor_pair"] = tensor_row(root / "tensor-pair", repeats, a.quick)
            rows += more
        if not (a.no_history or a.startup):
            more, ext["history"] = history_row(root / "history", repeats, a.quick)
            rows += more
        report(cmds, w, rows, repeats, loads)
        if a.quick:
            _say("(--quick: small sizes, one repeat; these figures are not the issue's)")
        if a.json:
            a.json.write_text(
                json.dumps(as_json(a, repeats, loads, w, cmds, rows, ext), indent=2, default=str) + "\n"
            )
    finally:
        if a.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
