"""Run the fixture pipeline: export the tiny model, then apply the transforms in AD order, recording
for every transform what happened (a :class:`Event`) and the graph after it (a dump text).

The pipeline is driven by a :class:`RunSpec`, which holds everything a scenario can change.
"""

from __future__ import annotations

import copy
import functools
import warnings
from dataclasses import dataclass, field, replace

import torch
from torch import fx, nn

from . import dump_writer
from .events import Event, saying
from .model import ModelSpec, build_model, export_model
from .transforms import REWRITES, Knobs

#: (stage, key, enabled by default) in AD run order (FORMATS.md 4.1 subset; stages sorted by enum).
DEFAULT_PIPELINE: tuple[tuple[str, str, bool], ...] = (
    ("factory", "build_model", True),
    ("export", "export_to_gm", True),
    ("post_export", "cleanup_noop_slice", True),
    ("post_export", "cleanup_noop_add", True),
    ("post_export", "cleanup_input_constraints", True),
    ("pattern_matcher", "match_repeat_kv", True),
    ("pattern_matcher", "match_eager_attention", True),
    ("pattern_matcher", "match_grouped_attention", True),
    ("pattern_matcher", "match_attention_layout", True),
    ("pattern_matcher", "match_rope_pattern", True),
    ("pattern_matcher", "match_rope_layout", True),
    ("pattern_matcher", "match_rmsnorm_pattern", True),
    ("pattern_matcher", "quantize_fp8_linear_from_config", True),
    ("pattern_matcher", "match_swiglu_pattern", True),
    ("pattern_matcher", "detect_hidden_states_for_capture", False),
    ("sharding", "detect_sharding", True),
    ("sharding", "sharding_transform_executor", True),
    ("weight_load", "load_weights", True),
    ("weight_load", "move_inputs_to_device", True),
    ("post_load_fusion", "fuse_gemms", False),
    ("post_load_fusion", "fuse_rmsnorm", True),
    ("post_load_fusion", "optimize_rope", True),
    ("cache_init", "insert_cached_attention", True),
    ("cache_init", "initialize_cache", True),
    ("cache_init", "resize_kv_cache", True),
    ("visualize", "visualize_namespace", False),
    ("compile", "compile_model", True),
)

#: Transforms that report ``skipped`` when enabled (nothing to do in an unquantized model).
SKIPPED_WHEN_ENABLED = frozenset({"quantize_fp8_linear_from_config"})
#: Transforms that expect a CUDA memory change (V3 ``[CUDA MEM DIFF (EXPECTED)]`` line).
EXPECT_MEM = {"load_weights": 0.02, "initialize_cache": 0.25, "resize_kv_cache": 11.5}
#: Transforms run with shape propagation in their post-cleanup (affects cleanup log lines only).
#: (sharding_transform_executor is not one: it re-propagates the shapes it slices itself, and its log lines
#: have always been written without shape_prop.)
SHAPE_PROP = frozenset({"export_to_gm", "match_rmsnorm_pattern", "match_attention_layout", "match_rope_layout",
                        "match_swiglu_pattern", "match_repeat_kv", "match_grouped_attention",
                        "insert_cached_attention"})


@dataclass(frozen=True)
class RunSpec:
    """Everything a scenario may change about one run."""

    model: ModelSpec = field(default_factory=ModelSpec)
    knobs: Knobs = field(default_factory=Knobs)
    disabled: frozenset[str] = frozenset()
    enabled: frozenset[str] = frozenset()
    """Keys enabled on top of the defaults."""
    extra: tuple[tuple[str, str, str], ...] = ()
    """New transforms ``(stage, key, insert_after_key)``."""
    moves: tuple[tuple[str, str], ...] = ()
    """``(key, after_key)``: the transform runs right after ``after_key`` instead of at its place."""
    fail: tuple[tuple[str, str], ...] = ()
    """key -> exception text raised inside the transform (caught: ``skip_on_error``)."""
    crash_in: str | None = None
    """Key whose apply raises an uncaught error: the run stops there."""
    crash_error: str = "RuntimeError: CUDA error: an illegal memory access was encountered"
    piecewise: tuple[str, ...] = ()
    """Piecewise CUDA graphs: compile_model splits the graph around every op whose target contains one of these
    texts (each such op its own piece), as ``torch.fx`` ``split_module``; empty: no split."""


@dataclass(frozen=True)
class RunOutput:
    """Events in run order and the graph text after each transform."""

    events: tuple[Event, ...]
    dumps: tuple[tuple[str, str, dict[str, str | None]], ...]
    """``(stage, key, {format: text or None})`` after every transform that ran (or was disabled)."""


class CompiledWrapper(nn.Module):
    """What compile_model returns: a plain module holding the GraphModule as ``model``."""

    def __init__(self, gm: fx.GraphModule) -> None:
        super().__init__()
        self.model = gm


class _Monolithic(nn.Module):
    def __init__(self, gm: fx.GraphModule) -> None:
        super().__init__()
        self.model = gm


class PiecewiseWrapper(nn.Module):
    """What compile_model returns with piecewise CUDA graphs on: the split graph as ``monolithic.model``, its
    pieces as ``monolithic.model.submod_N`` (FORMATS.md 7.1, section names)."""

    def __init__(self, gm: fx.GraphModule) -> None:
        super().__init__()
        self.monolithic = _Monolithic(gm)


def split_piecewise(gm: fx.GraphModule, cuts: tuple[str, ...]) -> PiecewiseWrapper:
    """``gm`` split around every op whose target contains one of ``cuts``."""
    from torch.fx.passes.split_module import split_module

    part: dict[fx.Node, int] = {}
    k = 0
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        cut = any(c in str(n.target) for c in cuts)
        k += cut
        part[n] = k
        k += cut
    return PiecewiseWrapper(split_module(gm, None, lambda n: part[n], keep_original_order=True))


def pipeline_for(spec: RunSpec) -> list[tuple[str, str, bool]]:
    """The configured transforms of a run, in order, with their effective enabled flag."""
    steps = [(s, k, (e or k in spec.enabled) and k not in spec.disabled) for s, k, e in DEFAULT_PIPELINE]
    for stage, key, after in spec.extra:
        idx = next(i for i, (_, k, _) in enumerate(steps) if k == after)
        steps.insert(idx + 1, (stage, key, True))
    for key, after in spec.moves:
        step = steps.pop(next(i for i, (_, k, _) in enumerate(steps) if k == key))
        steps.insert(next(i for i, (_, k, _) in enumerate(steps) if k == after) + 1, step)
    return steps


@functools.cache
def _exported(model: ModelSpec) -> fx.GraphModule:
    return export_model(build_model(model))


@functools.cache
def run(spec: RunSpec) -> RunOutput:
    """Run the pipeline of ``spec`` and capture events and graphs."""
    events: list[Event] = []
    dumps: list[tuple[str, str, dict[str, str | None]]] = []
    mod: nn.Module | None = None
    for stage, key, enabled in pipeline_for(spec):
        sp = key in SHAPE_PROP
        if not enabled:
            events.append(Event(stage, key, "disabled"))
        elif key == spec.crash_in:
            events.append(Event(stage, key, "crashed", error=spec.crash_error))
            break
        elif key in dict(spec.fail):
            events.append(Event(stage, key, "failed", error=dict(spec.fail)[key], shape_prop=sp))
        elif key == "build_model":
            events.append(Event(stage, key, "applied", 0))
        elif key == "export_to_gm":
            with warnings.catch_warnings():
                # torch's own pytree deprecation warning inside GraphModule.__deepcopy__
                warnings.simplefilter("ignore", FutureWarning)
                mod = copy.deepcopy(_exported(spec.model))
            events.append(Event(stage, key, "applied", 1, shape_prop=sp))
        elif key in SKIPPED_WHEN_ENABLED and not spec.knobs.quantize_fp8:
            events.append(Event(stage, key, "skipped"))
        elif key == "compile_model":
            assert isinstance(mod, fx.GraphModule)
            mod = split_piecewise(mod, spec.piecewise) if spec.piecewise else CompiledWrapper(mod)
            events.append(Event(stage, key, "applied", 1))
        elif key in REWRITES:
            assert isinstance(mod, fx.GraphModule)
            with saying() as said:
                n = REWRITES[key](mod, spec.knobs)
            events.append(Event(stage, key, "applied", n, shape_prop=sp, said=tuple(said)))
        else:
            n = 2 * spec.model.layers if key == "initialize_cache" else 0
            events.append(Event(stage, key, "applied", n, mem_gb=EXPECT_MEM.get(key, 0.0)))
        if key in EXPECT_MEM and events[-1].state == "applied":
            events[-1] = replace(events[-1], shape_prop=sp, mem_gb=EXPECT_MEM[key])
        if mod is not None:
            dumps.append((stage, key, dump_writer.render_all(stage, key, mod)))
    return RunOutput(tuple(events), tuple(dumps))


def fake_mode_of(gm: fx.GraphModule):
    """The FakeTensorMode of an exported graph (for tests)."""
    return torch._guards.detect_fake_mode([n.meta["val"] for n in gm.graph.nodes if "val" in n.meta])
