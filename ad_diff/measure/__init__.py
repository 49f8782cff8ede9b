"""Measurement stage: numbers about differences, never verdicts (those come from ``ad_diff.classify``)."""

from ad_diff.measure.tensors import MeasureOptions, measure

__all__ = ["MeasureOptions", "measure"]
