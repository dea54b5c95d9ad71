"""What the correlation heatmap shows, from :func:`genmetrics.analysis.correlation.correlation_table`:
the panels (scopes), the scores in their drawing order, and each drawn panel's matrices;
drawn by :func:`genmetrics.figures.correlation.correlation_heatmap`."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from genmetrics.analysis.correlation import (
    MIN_POINTS,
    POOLED,
    cluster_order,
    correlation_matrix,
)


@dataclass(frozen=True)
class HeatmapPanels:
    """One method's heatmap: ``scopes`` (each dataset, then ``pooled``) with their number of
    sources (``points``); ``names``: the scores drawn, in order; ``hidden``: scores with no
    defined correlation in any drawn panel; ``cells``: per drawn scope (at least
    ``min_points`` sources), the ``r``, ``low``, ``high`` and ``n`` matrices in ``names``
    order; ``n_total``: sources over the datasets (not pooled)."""

    method: str
    scopes: list[str]
    points: dict[str, int]
    names: list[str]
    hidden: list[str]
    cells: dict[str, dict[str, np.ndarray]]
    min_points: int
    n_total: int


def heatmap_panels(
    table: pd.DataFrame, method: str, min_points: int | None = None, cluster: bool = True
) -> HeatmapPanels:
    """The heatmap of ``method``: only the table's ``in_figure`` pairs (the headline scores)
    when there are any; scores with no defined correlation in any drawn panel (fewer than
    ``min_points`` sources with both scores, or constant) are ``hidden``. ``cluster``: scores
    ordered by hierarchical clustering on 1 − |r| (mean over the drawn panels,
    :func:`~genmetrics.analysis.correlation.cluster_order`), else in the table's order."""
    min_points = MIN_POINTS if min_points is None else min_points
    t = table[table["method"] == method]
    if t["in_figure"].astype(bool).any():
        t = t[t["in_figure"].astype(bool)]
    scopes = list(dict.fromkeys(t["scope"]))
    points = {s: int(t.loc[t["scope"] == s, "n_points"].iloc[0]) for s in scopes}
    drawn = [s for s in scopes if points[s] >= min_points]
    names = list(dict.fromkeys([*t["metric_a"], *t["metric_b"]]))
    hidden: list[str] = []
    if drawn:
        stack = np.stack(
            [
                correlation_matrix(t, s, method).reindex(index=names, columns=names).to_numpy()
                for s in drawn
            ]
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # pairs undefined everywhere
            mean_abs = np.nanmean(np.abs(stack), axis=0)
        defined = np.isfinite(stack).any(axis=(0, 2))
        hidden = [m for m, ok in zip(names, defined, strict=True) if not ok]
        names = [m for m, ok in zip(names, defined, strict=True) if ok]
        mean_abs = pd.DataFrame(mean_abs[np.ix_(defined, defined)], index=names, columns=names)
        if cluster:
            names = cluster_order(mean_abs)
    cells = {
        s: {
            c: correlation_matrix(t, s, method, c)
            .reindex(index=names, columns=names)
            .to_numpy(dtype=float)
            for c in ("r", "low", "high", "n")
        }
        for s in drawn
    }
    return HeatmapPanels(
        method=method,
        scopes=scopes,
        points=points,
        names=names,
        hidden=hidden,
        cells=cells,
        min_points=min_points,
        n_total=sum(points[s] for s in scopes if s != POOLED),
    )
