"""Lines around the AD transform lines in a real log: other loggers, the C++ runtime, tqdm, Python
warnings, multi-line reprs, an aborted first attempt and a crash traceback. All fixed text (no machine
paths, no object addresses)."""

from __future__ import annotations

from typing import Any

_SITE = "/usr/local/lib/python3.12/dist-packages"


def module_repr() -> str:
    """A multi-line module repr as ``Model after <t>:`` debug lines print it (continuation lines unprefixed)."""
    return "\n".join([
        "GraphModule(",
        "  (model): Module(",
        "    (embed_tokens): Module()",
        "    (layers): Module(",
        "      (0): Module(",
        "        (input_layernorm): Module()",
        "        (self_attn): Module(",
        "          (q_proj): Module()",
        "          (k_proj): Module()",
        "        )",
        "      )",
        "    )",
        "  )",
        "  (lm_head): Module()",
        ")",
    ])


def preamble(w: Any, style: Any, world_size: int = 1) -> None:
    """Start-of-run lines (before the executor sets the AD logger rank), with the LLM args' world size."""
    if style.noise < 1:
        return
    w.raw("[TensorRT-LLM] TensorRT-LLM version: 1.2.0rc6")
    w.trt("info", "Starting TensorRT-LLM init.")
    w.raw("[TensorRT-LLM][INFO] Set logger level to INFO")
    w.trt("info", "TensorRT-LLM inited.")
    w.trt("info", "LLM args: AutoDeployConfig(")
    w.raw("    model='org/tiny-llama-3l',", f"    world_size={world_size},", "    max_seq_len=64,",
          "    compile_backend='torch-simple',", "    transforms={...},", ")")
    if style.prefix == "L1":
        w.raw(w.ad_line("info", "Using AutoDeploy config from default.yaml", None))
    else:
        w.raw(w.ad_line("info", "Using AutoDeploy config from default.yaml", None))
        if style.prefix == "L2":
            # *_once goes through log() on the L2 logger, which adds its own prefix again
            w.raw("[AUTO-DEPLOY] [WARNING] [AUTO-DEPLOY] [RANK 0] Using an experimental attention backend")
    w.raw("[TensorRT-LLM][INFO] Initializing MPI with thread mode 3")
    w.tick(2.0)
    if style.noise >= 2:
        w.trt("warning", "Logger level already set from environment. Discard new verbosity: info")
        w.raw(f"{_SITE}/torch/utils/_pytree.py:185: FutureWarning: optree is installed but its version is too old",
              "  warnings.warn(")


def loading_weights(w: Any) -> None:
    """tqdm output of the weight loader."""
    w.raw("Loading weights:   0%|          | 0/2 [00:00<?, ?it/s]",
          "Loading weights: 100%|##########| 2/2 [00:00<00:00, 45.11it/s]")


def abort(w: Any, style: Any) -> None:
    """End of an aborted first attempt (the launcher restarts the run; the dump dir is recreated)."""
    w.trt("error", "Executor worker exited unexpectedly (exit code -9)")
    w.raw("[TensorRT-LLM][WARNING] Device 0 peer access not supported, falling back")
    w.trt("warning", "Restarting the AutoDeploy run (attempt 2/3)")
    w.tick(5.0)


def restart(w: Any, style: Any, attempt: int) -> None:
    """Lines printed again when the run restarts."""
    w.trt("info", "Starting TensorRT-LLM init.")
    w.raw("[TensorRT-LLM][INFO] Initializing MPI with thread mode 3")


def traceback(w: Any, ev: Any) -> None:
    """Uncaught exception raised inside transform ``ev``: the Python traceback closes the log."""
    ad = f"{_SITE}/tensorrt_llm/_torch/auto_deploy"
    w.raw(
        "Traceback (most recent call last):",
        '  File "examples/auto_deploy/build_and_run_ad.py", line 288, in <module>',
        "    main()",
        '  File "examples/auto_deploy/build_and_run_ad.py", line 251, in main',
        "    llm = build_llm_from_config(config)",
        f'  File "{ad}/transform/optimizer.py", line 74, in __call__',
        "    mod, info = transform(cm, mod, self.factory, self.shared_config)",
        f'  File "{ad}/transform/interface.py", line 421, in __call__',
        "    gm, info_apply = self._apply(gm, cm, factory, shared_config)",
        f'  File "{ad}/transform/library/{ev.stage}.py", line 918, in _apply',
        "    self._execute(gm, node)",
        ev.error,
    )


def epilogue(w: Any, style: Any) -> None:
    """End-of-run lines after the last transform."""
    if style.noise < 1:
        return
    w.tick(1.0)
    w.trt("info", "AutoDeploy executor ready; warming up CUDA graphs for batch sizes [1, 2, 4]")
    w.raw("[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.11 GiB")
    w.trt("info", "[0] Prompt: 'How big is the universe? ', Generated text: ' The universe is'")


def shutdown_error(w: Any) -> None:
    """What Python prints at interpreter shutdown when a ``__del__`` fails (TRT-LLM's MPI session), after the
    run finished: the program still exits normally."""
    w.raw(
        "Exception ignored in: <function MpiPoolSession.__del__>",
        "Traceback (most recent call last):",
        f'  File "{_SITE}/tensorrt_llm/executor/utils.py", line 132, in __del__',
        "    self.shutdown()",
        f'  File "{_SITE}/tensorrt_llm/executor/utils.py", line 127, in shutdown',
        "    self.mpi_pool.shutdown(wait=True)",
        "AttributeError: 'NoneType' object has no attribute 'shutdown'",
    )
