"""AD log writer: message formats V0-V3 and line prefixes L1-L3 of FORMATS.md section 1, plus the
surrounding lines a real run shows (other loggers, C++ runtime lines, a progress bar, warnings,
multi-line reprs, tracebacks). Deterministic: fixed base time, seeded pseudo-random timings.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from . import noise as nz
from .events import Event

_L1_TAG = {"info": "I", "warning": "W", "error": "E", "debug": "V"}
_L2_TAG = {"info": "INFO", "warning": "WARNING", "error": "ERROR", "debug": "DEBUG"}
_GREEN, _DIM, _RESET = "\x1b[32m", "\x1b[2m", "\x1b[0m"


@dataclass(frozen=True)
class LogStyle:
    """How a run's log is written."""

    fmt: str = "V3"
    """Message format ``V0``..``V3``."""
    prefix: str = "L1"
    """Line prefix ``L1`` (timestamped TRT-LLM logger), ``L2`` or ``L3`` (standalone ``[AUTO-DEPLOY]``)."""
    noise: int = 1
    """0: AD lines only (the interface's and the transforms' own); 1: realistic surrounding lines; 2: heavy
    (debug level, extra chatter)."""
    colors: bool = False
    """``_ENABLE_LOG_COLORS = True``: ANSI codes around ``[SUMMARY]``, ``skipped``, ``disabled``."""
    retry: bool = False
    """Write a first pipeline attempt that aborts, then the full run (same log file)."""
    seed: int = 0
    """Seeds timings and interleaving; two runs differing only in seed differ only in times."""
    base_time: datetime = datetime(2026, 2, 10, 11, 2, 15)
    dump_dir: str = "/tmp/ad-graphs"


class _Writer:
    def __init__(self, style: LogStyle) -> None:
        self.style = style
        self.rng = random.Random(style.seed)
        self.clock = 0.0
        self.lines: list[str] = []

    # ------------------------------------------------------------ prefixes
    def ts(self) -> str:
        return (self.style.base_time + timedelta(seconds=self.clock)).strftime("%m/%d/%Y-%H:%M:%S")

    def ad_line(self, level: str, msg: str, rank: int | None) -> str:
        p = self.style.prefix
        if p == "L1":
            rank_tag = f" [RANK {rank}]" if rank is not None else ""
            return f"[{self.ts()}] [TRT-LLM AUTO-DEPLOY]{rank_tag} [{_L1_TAG[level]}] {msg}"
        if p == "L3":
            rank_tag = f" [RANK {rank}]" if rank is not None else ""
            return f"[AUTO-DEPLOY] [{_L2_TAG[level]}]{rank_tag} {msg}"
        return f"[AUTO-DEPLOY] [{_L2_TAG[level]}] {msg}"

    def trt(self, level: str, msg: str) -> None:
        self.lines.append(f"[{self.ts()}] [TRT-LLM] [{_L1_TAG[level]}] {msg}")

    def raw(self, *lines: str) -> None:
        self.lines.extend(lines)

    def tick(self, seconds: float) -> None:
        self.clock += seconds


def _p(ev: Event) -> str:
    return f"[stage={ev.stage}, transform={ev.key}]"


def _times(rng: random.Random, ev: Event) -> tuple[float, float, float, float]:
    if ev.state == "disabled":
        return 0.0, 0.0, 0.0, 0.0
    apply = round(rng.uniform(0.002, 0.4) * (30 if ev.key in ("export_to_gm", "load_weights") else 1), 3)
    pre = 0.0 if ev.key == "export_to_gm" else round(rng.uniform(0.0, 0.05), 3) * (rng.random() < 0.3)
    post = round(rng.uniform(0.05, 0.6), 3) if (ev.matches or ev.key == "export_to_gm") else 0.0
    total = round(pre + apply + post + rng.uniform(0.0, 0.003), 3)
    return total, pre, apply, post


def _cleanup_v3(ev: Event, post: bool) -> str:
    if ev.key == "export_to_gm" and not post:
        return "skipped (disabled)"
    if post and (ev.matches or ev.key == "export_to_gm"):
        return "graph canonicalization + shape_prop" if ev.shape_prop else "graph canonicalization"
    return "skipped (graph already clean)"


def _mem_parts(gb: float, rng: random.Random) -> str:
    free = 78.0 - gb

    def v(x: float, d: float | None) -> str:
        return f"{x:6.2f}GB" + (f" ({d:+.2f}GB)" if d is not None and abs(d) >= 0.005 else "")

    resv = 3.2 + gb + round(rng.uniform(0, 0.02), 2)
    extra = 0.01 if gb else 0.0
    return f"free: {v(free, -gb)} | resv: {v(resv, gb + extra)} | alloc: {v(resv - 0.2, gb)} | frag: {v(0.2, None)}"


def transform_messages(ev: Event, style: LogStyle, rng: random.Random, *, rank_count: int | None = None
                       ) -> list[tuple[str, str]]:
    """``(level, message)`` lines one transform logs (message = text after the logger prefix)."""
    fmt, P, t = style.fmt, _p(ev), ev.key
    matches = ev.matches if rank_count is None else rank_count
    total, pre, apply, post = _times(rng, ev)
    out: list[tuple[str, str]] = []
    enabled = ev.state != "disabled"
    skipped = ev.state in ("skipped", "failed", "disabled")
    is_clean = skipped or matches == 0
    valid = skipped or ev.shape_prop
    fail_text = f"Transform {t} failed: {ev.error}"
    if fmt == "V0":
        out += ev.said  # V0's interface adds no context to any line
        if ev.state == "failed":
            out.append(("warning", fail_text))
        if ev.state == "crashed":
            return out
        res = "skipped=True" if skipped else f"num_matches={matches}"
        out.append(("info", f"stage={ev.stage}, transform={t}, {res}, is_clean={is_clean}, has_valid_shapes={valid}"))
        return out
    if fmt in ("V1", "V2"):
        if fmt == "V1":
            sp = "with shape_prop" if ev.shape_prop else "(no shape_prop)"
            pre_line, post_line = f"{P} running pre-cleanup {sp}", f"{P} running post-cleanup {sp}"
        else:
            sp = "(with shape_prop)" if ev.shape_prop else "(no shape_prop)"
            pre_line = post_line = f"{P} running graph cleanup {sp}"
        if enabled:
            out.append(("info", pre_line))
        # V1's _log_info prefixes only the interface's own lines; V2's decorator patches ad_logger.log for
        # the whole call, so the transform's own lines get <P> too
        out += [(lvl, msg if fmt == "V1" else f"{P} {msg}") for lvl, msg in ev.said]
        if ev.state == "crashed":
            return out
        if ev.state == "failed":
            out.append(("warning", fail_text if fmt == "V1" else f"{P} {fail_text}"))
        if enabled and matches and not skipped:
            out.append(("info", post_line))
        res = "skipped=True" if skipped else f"num_matches={matches}"
        out.append(("info", f"{P} enabled={enabled}, {res}, is_clean={is_clean}, has_valid_shapes={valid}"))
        if style.noise >= 2:
            out.append(("debug", f"{P} {'Graph' if fmt == 'V1' else 'Model'} after {t}: " + nz.module_repr()))
        if fmt == "V2":
            out.append(("info", f"{P} elapsed time: total={total:.3f}s, pre_cleanup={pre:.3f}s, apply={apply:.3f}s, "
                                f"post_cleanup={post:.3f}s"))
        return out
    # V3
    summ = f"{_GREEN}[SUMMARY]{_RESET}" if style.colors else "[SUMMARY]"
    dim = (lambda s: f"{_DIM}{s}{_RESET}") if style.colors else (lambda s: s)
    if style.noise >= 2:
        out.append(("debug", f"{P} {t} config: stage=<Stages.{ev.stage.upper()}: '{ev.stage}'> enabled={enabled} "
                             f"skip_on_error=False run_per_gm=True requires_clean_graph=True"))
    if not enabled:
        out.append(("info", f"{P} {summ} {dim('disabled')}"))
        return out
    out.append(("info", f"{P} [PRE-CLEANUP] {_cleanup_v3(ev, False)}"))
    out.append(("info", f"{P} [APPLY] applying transform..."))
    out += [(lvl, f"{P} [APPLY] {msg}") for lvl, msg in ev.said]  # _apply_logging_context
    if ev.state == "crashed":
        return out
    if ev.state == "failed":
        out.append(("warning", f"{P} [APPLY] {fail_text}"))
    out.append(("info", f"{P} [POST-CLEANUP] {_cleanup_v3(ev, True) if not skipped else 'skipped (graph already clean)'}"))
    if ev.mem_gb:
        out.append(("info", f"{P} [CUDA MEM DIFF (EXPECTED)] {_mem_parts(ev.mem_gb, rng)}"))
    elif style.noise >= 2:
        out.append(("debug", f"{P} [CUDA MEM] {_mem_parts(0.0, rng)}"))
    tm = f"time: {total:.3f}s (pre={pre:.3f}s, apply={apply:.3f}s, post={post:.3f}s)"
    if ev.state == "applied":
        out.append(("info", f"{P} {summ} matches={matches} | {tm}"))
    else:
        out.append(("info", f"{P} {summ} {dim('skipped')} | {tm}"))
    if style.noise >= 2:
        out.append(("debug", f"{P} Model after {t}: " + nz.module_repr()))
    return out


def _strip_context(msg: str, ev: Event) -> str:
    """L2: ``info/warning/...`` bypass ``log()``, so the ``<P>`` and ``[APPLY]`` context prefixes vanish."""
    msg = msg.removeprefix(_p(ev) + " ")
    return msg.removeprefix("[APPLY] ")


@dataclass(frozen=True)
class Story:
    """What happens to one run beyond its events: ranks, a rank that dies, a restore, a kill, a shutdown
    error."""

    ranks: Sequence[int] = (0,)
    rank1_counts: dict[str, int] | None = None
    """Match counts rank 1 reports instead of the event's (rank disagreement)."""
    rank_dies: tuple[int, str, str] | None = None
    """``(rank, key, error)``: that rank starts transform ``key``, prints a traceback and logs nothing
    more."""
    restored_at: str | None = None
    """The run restored a cache (``restore_cache``) at this boundary: earlier events were not logged
    (run_folder drops them); it logs the restore line instead."""
    killed: bool = False
    """The job was killed after the last event: no epilogue, no traceback."""
    shutdown_error: bool = False
    """Python prints an ignored exception at interpreter shutdown, after generation."""
    rank_tags: bool = True
    """AD lines carry ``[RANK n]`` (False: launcher tags are the only way to tell ranks apart)."""
    rank_counts: dict[tuple[int, str], int] | None = None
    """Match counts ``(rank, key) -> n`` a rank reports instead of the event's (any rank)."""
    world_size: int = 1
    """The run's world size, as its LLM args print it."""
    restore_cache: str = "pipeline"
    """Which cache ``restored_at`` came from: ``pipeline`` (a pipeline snapshot) or ``graph`` (the graph cache
    of ``AD_ENABLE_CACHING``); see :func:`restore_line`."""


#: The graph cache's entry key (AD hashes the run's configuration; any fixed hex string will do here).
GRAPH_CACHE_KEY = hashlib.sha256(b"org/tiny-llama-3l").hexdigest()


def restore_line(story: Story) -> str:
    """What the optimizer logs (logger prefix, no transform context: no transform is running) when it
    restores a cache instead of running the transforms up to ``story.restored_at`` (FORMATS.md 7, 7.1)."""
    if story.restore_cache == "graph":
        return f"[cache] Loaded graph from /cache/ad-graphs/{GRAPH_CACHE_KEY}/graph.pt"
    if story.restore_cache != "pipeline":
        raise ValueError(f"unknown cache {story.restore_cache!r}: 'pipeline' or 'graph'")
    where = f"/cache/ad-pipeline/3f9c2a71/{story.restored_at}"
    return f"Restored AutoDeploy pipeline snapshot for '{story.restored_at}' from {where}"


def render_log(events: Sequence[Event], style: LogStyle, *, rank1_counts: dict[str, int] | None = None,
               ranks: Sequence[int] = (0,)) -> str:
    """The whole log text for one run. ``ranks`` > 1 interleaves duplicate lines of the other ranks;
    ``rank1_counts`` overrides match counts that rank 1 reports (rank disagreement)."""
    return "".join(line + "\n" for _, line in render_lines(events, style, Story(ranks, rank1_counts)))


def render_lines(events: Sequence[Event], style: LogStyle, story: Story) -> list[tuple[int, str]]:
    """The log of one run as ``(rank of the process that printed it, line)`` pairs (what launchers tag)."""
    w = _Writer(style)
    ranks = story.ranks
    rank_tagged = style.prefix != "L2" and story.rank_tags
    owner: list[int] = []  # the printing rank of each line of w.lines

    def sync(rank: int) -> None:
        owner.extend([rank] * (len(w.lines) - len(owner)))

    nz.preamble(w, style, story.world_size)
    sync(0)
    attempts = [events[:4], events] if style.retry else [events]
    dead: set[int] = set()
    for attempt, evs in enumerate(attempts):
        if attempt:
            nz.restart(w, style, attempt)
            sync(0)
        crashed = None
        for i, ev in enumerate(evs):
            live = [r for r in ranks if r not in dead]
            msgs_by_rank = {}
            dies = story.rank_dies if story.rank_dies and story.rank_dies[1] == ev.key else None
            for r in live:
                rc = (story.rank1_counts or {}).get(ev.key) if r == 1 else None
                rc = (story.rank_counts or {}).get((r, ev.key), rc)
                this = replace(ev, state="crashed", error=dies[2]) if dies and dies[0] == r else ev
                rng = random.Random(f"{style.seed}/{attempt}/{ev.key}")
                msgs_by_rank[r] = transform_messages(this, style, rng, rank_count=rc)
            first = i == 0 and story.restored_at is not None
            if first:
                for r in live:
                    msgs_by_rank[r].insert(0, ("info", restore_line(story)))
            if ev.key == "build_model" or first:
                # logged by the first dump_graph call, after the transform's own lines; only V2 (patched
                # log) and V3 (logging context) add the <P> prefix to it
                ctx = f"{_p(ev)} " if style.fmt in ("V2", "V3") else ""
                for r in live:
                    msgs_by_rank[r].append(("info", f"{ctx}Graph dumping enabled to: {style.dump_dir}"))
            if ev.key == "load_weights" and style.noise >= 1:
                nz.loading_weights(w)
                sync(0)
            merged = _interleave(w.rng, msgs_by_rank)
            for r, (level, msg) in merged:
                if style.prefix == "L2":
                    msg = _strip_context(msg, ev)
                first_line, *rest = msg.split("\n")
                w.raw(w.ad_line(level, first_line, r if rank_tagged else None), *rest)
                sync(r)
            if dies is not None:
                nz.traceback(w, replace(ev, state="crashed", error=dies[2]))
                sync(dies[0])
                dead.add(dies[0])
            total_time = _times(random.Random(f"{style.seed}/{attempt}/{ev.key}"), ev)[0]
            w.tick(total_time)
            if ev.state == "crashed":
                crashed = ev
                break
            if attempt == 0 and style.retry and ev is evs[-1]:
                nz.abort(w, style)
                sync(0)
        if crashed is not None:
            nz.traceback(w, crashed)
            sync(0)
            return list(zip(owner, w.lines, strict=True))
    if not story.killed:
        nz.epilogue(w, style)
        if story.shutdown_error:
            nz.shutdown_error(w)
        sync(0)
    return list(zip(owner, w.lines, strict=True))


def _interleave(rng: random.Random, by_rank: dict[int, list[tuple[str, str]]]) -> list[tuple[int, tuple[str, str]]]:
    queues = {r: list(m) for r, m in sorted(by_rank.items())}
    out: list[tuple[int, tuple[str, str]]] = []
    while any(queues.values()):
        live = [r for r, q in queues.items() if q]
        r = live[0] if len(live) == 1 or rng.random() < 0.6 else rng.choice(live)
        out.append((r, queues[r].pop(0)))
    return out
