"""Input checks for the feature helpers that are called directly, outside ``compute()``.

``compute()`` already validates each feature matrix with :func:`genmetrics.metrics.kinds.validate_embeddings`
(2-D, real, finite, non-empty). What it cannot know is that the two sets must come from the same
featurizer (equal dimensions), or how many points a given k or number of clusters needs: those
checks depend on the data and stay with the metrics. Helpers that other modules call directly
(``prdc_exact``, ``prdc_approx``, ``prdc_for_ks``: the k and N sweeps) use :func:`check_pair`,
the same validator plus the dimension check.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.kinds import validate_embeddings
from genmetrics.metrics.registry import register

#: how a distribution metric registers (``precision_recall``, ``mauve``, ``prd``): a candidate
#: set of embeddings scored against a reference set of the same featurizer
distribution_metric = partial(register, input="embeddings", reference="required")


def check_dims(p: np.ndarray, q: np.ndarray) -> None:
    """Reference and candidate features must have the same number of dimensions."""
    if p.shape[1] != q.shape[1]:
        raise GenmetricsError(
            f"reference has {p.shape[1]} dimensions but candidate has {q.shape[1]}; "
            "both must come from the same featurizer"
        )


def check_pair(reference: Any, candidate: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both sets validated as ``compute()`` does, and of equal dimension."""
    p = validate_embeddings(reference, "reference")
    q = validate_embeddings(candidate, "candidate")
    check_dims(p, q)
    return p, q


def check_points(sizes: dict[str, int], k: int, extra: int = 1, what: str = "") -> None:
    """Each set needs at least k + ``extra`` points (the point itself and its k neighbours)."""
    for name, n in sizes.items():
        if n < k + extra:
            raise GenmetricsError(
                f"{name}: k={k} needs at least k+{extra}={k + extra} points{what}, got {n}"
            )


def as_ks(ks: Sequence[int] | int) -> list[int]:
    """One k or several → sorted distinct positive ints."""
    ks = [ks] if isinstance(ks, (int, np.integer)) else list(ks)
    if not ks or any(isinstance(k, bool) or int(k) != k or k < 1 for k in ks):
        raise GenmetricsError(f"k must be positive integers, got {ks!r}")
    return sorted({int(k) for k in ks})
