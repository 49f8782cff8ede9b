"""ad-diff: compare two TensorRT-LLM AutoDeploy runs transform by transform.

The library entry point is :func:`ad_diff.pipeline.run`; the CLI in :mod:`ad_diff.cli` is a thin layer over
it. Heavy dependencies (torch, pandas) are imported lazily so ``ad-diff --help`` and log-only comparisons
stay fast.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
