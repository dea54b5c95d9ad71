"""Metric families, one module each; every module registers its metrics on import.

Use :func:`genmetrics.metrics.compute` or the CLI (``genmetrics score``).
"""

from genmetrics.metrics.invoke import compute, run
from genmetrics.metrics.registry import (
    Metric,
    MetricResult,
    all_metrics,
    get,
    register,
    resolve_params,
)

__all__ = [
    "Metric",
    "MetricResult",
    "all_metrics",
    "compute",
    "get",
    "register",
    "resolve_params",
    "run",
]
