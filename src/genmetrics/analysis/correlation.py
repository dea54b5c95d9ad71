"""Correlate metrics across sources.

The tidy table they start from (``results/scores.csv``) is :mod:`genmetrics.analysis.aggregate`'s.

* :func:`wide_scores` — one row per scored source, one column per score.
* :func:`correlation_table` — Pearson, Spearman and Kendall correlation between every pair of
  scores across the points (one point = one scored source: dataset, model, seed; the human
  references count as a source where they are scored), per dataset and pooled across datasets
  (within-dataset z-scores, :func:`pooled_scores`), with the number of points behind each cell
  and a bootstrap 95% interval (``results/analysis/metric_correlation.csv``); the heatmap
  draws the pairs of headline values (each metric's registered ``headline``, the values of
  the headline table: :func:`genmetrics.analysis.headline.headline_rows`).
* :func:`metric_correlation` — one correlation matrix over every source (kept for callers).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from genmetrics.analysis.headline import headline_rows
from genmetrics.analysis.statistics import (
    MIN_CORRELATION_POINTS,
    bootstrap_pairwise_correlation,
    degenerate_interval,
    replicate_bounds,
    zscore_within,
)


def wide_scores(df: pd.DataFrame) -> pd.DataFrame:
    """One row per scored source (dataset, model, seed), one column per score.

    Columns are named by the value (``precision``) or, where two metric entries share a value
    name, by the entry (``pos_compression_ratio``) or ``entry.value``.
    """
    return _wide_with_keys(df)[0]


def _wide_with_keys(df: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """:func:`wide_scores` and, per column, its (entry, value name)."""
    d = df.copy()
    d["seed"] = pd.to_numeric(d["seed"]).astype("Int64").astype("string").fillna("")
    d["score"] = d["entry"] + "\t" + d["name"]
    wide = d.pivot_table(index=["dataset", "model", "seed"], columns="score", values="value")
    wide = wide.reindex(columns=sorted(wide.columns, key=_column_order(d)))
    keys = [tuple(c.split("\t", 1)) for c in wide.columns]
    wide.columns = _short_names(list(wide.columns))
    return wide, keys


def _column_order(d: pd.DataFrame):
    first = {v: i for i, v in enumerate(dict.fromkeys(d["entry"]))}
    return lambda c: (first.get(c.split("\t")[0], 0), c)


def _short_names(cols: list[str]) -> list[str]:
    pairs = [c.split("\t", 1) for c in cols]
    names = [n for _, n in pairs]
    clashing = [(v, n) for v, n in pairs if names.count(n) > 1]
    per_entry = pd.Series([v for v, _ in clashing], dtype=object).value_counts()
    out = []
    for v, n in pairs:
        if names.count(n) == 1:
            out.append(n)
        else:
            out.append(v if per_entry[v] == 1 else f"{v}.{n}")
    return out


def metric_correlation(
    df: pd.DataFrame, method: str = "spearman", headline_only: bool = True
) -> pd.DataFrame:
    """Correlation between scores across all scored sources (datasets × models × seeds).

    Columns that are constant or mostly missing are dropped (their correlation is undefined).
    """
    wide = wide_scores(headline_rows(df) if headline_only else df)
    wide = wide.loc[:, wide.notna().sum() >= 3]
    wide = wide.loc[:, wide.nunique() > 1]
    return wide.corr(method=method)


METHODS = ("pearson", "spearman", "kendall")
#: fewest points (pairwise complete) for which a correlation is reported at all:
#: :data:`~genmetrics.analysis.statistics.MIN_CORRELATION_POINTS` (5; with 4 points even a
#: perfect rank correlation has p = 2/4! = 0.083, with 3 a rank correlation can only be ±1 or
#: ±0.5: it looks like a finding and is noise)
MIN_POINTS = MIN_CORRELATION_POINTS
POOLED = "pooled"
TABLE_COLUMNS = [
    "scope",
    "method",
    "metric_a",
    "metric_b",
    "r",
    "low",
    "high",
    "n",
    "n_boot_used",
    "n_points",
    "too_few",
    "in_figure",
    "level",
    "degenerate_interval",
]


def select_values(df: pd.DataFrame, values: str = "directed") -> pd.DataFrame:
    """Rows of the tidy table to correlate.

    ``directed``: values whose registered direction is "higher" or "lower" (the headline
    scores; lengths, counts, standard deviations and other values without a better direction
    are left out; values of metrics that are not registered are kept). ``headline``: each
    metric's registered headline values (:func:`genmetrics.analysis.headline.headline_rows`).
    ``all``: every value.
    """
    if values == "all":
        return df
    if values == "headline":
        return headline_rows(df)
    if values != "directed":
        raise ValueError(f"values: expected 'directed', 'headline' or 'all', got {values!r}")
    from genmetrics.metrics import all_metrics

    known = all_metrics()
    keep = [
        metric not in known or known[metric].values.get(name) is not None
        for metric, name in zip(df["metric"], df["name"], strict=True)
    ]
    return df[keep]


def pooled_scores(wide: pd.DataFrame) -> pd.DataFrame:
    """Within-dataset z-scores of :func:`wide_scores`: each score minus its mean over the
    dataset's sources, divided by its standard deviation there (ddof=1).

    This is how the "pooled" scope combines datasets: a score's level and spread differ from
    one dataset to the next (perplexity of news vs. stories), and correlating raw values
    across datasets would mostly measure those differences between datasets (two scores that
    both happen to be higher on one dataset look correlated). After standardising, the pooled
    correlation measures how scores move together *within* datasets, every dataset weighted
    by its number of sources. A score that is constant within a dataset, or observed there
    for a single source, has no z-score (missing) on that dataset.
    """
    datasets = wide.index.get_level_values("dataset").to_numpy()
    z = zscore_within(wide.to_numpy(dtype=float), datasets)
    return pd.DataFrame(z, index=wide.index, columns=wide.columns)


def correlation_table(
    df: pd.DataFrame,
    methods: Sequence[str] = METHODS,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    values: str = "directed",
    min_points: int = MIN_POINTS,
    figure_values: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Correlation between every pair of scores across the scored sources, with uncertainty.

    ``df`` is the tidy table (:data:`COLUMNS`); ``values`` picks the scores
    (:func:`select_values`). One row per (scope, method, pair of scores), columns
    :data:`TABLE_COLUMNS`:

    * ``scope``: a dataset (its sources only) or ``"pooled"`` (every dataset's sources after
      within-dataset z-scoring, :func:`pooled_scores`; only with more than one dataset);
    * ``r``: the point estimate of ``pandas.DataFrame.corr(method)`` (Kendall: tau-b), over the
      sources where both scores are present (pairwise complete); ``n``: their number;
      ``n_points``: the sources in the scope;
    * ``low``/``high``: percentile bootstrap interval (``level``, default 95%): ``n_boot``
      resamples of the scope's sources with replacement (pooled: within each dataset, then
      z-scored again), seeded by ``seed``, the same resamples for every method and pair. A
      resample where either score is constant has no correlation and is skipped;
      ``n_boot_used`` counts the usable ones, and with fewer than half usable there is no
      interval (NaN); ``level``: the interval's level;
    * ``degenerate_interval``: ``low`` = ``high`` (every usable resample gave the same value,
      as a perfect rank correlation does among few sources): no interval, whatever its
      bounds say (:func:`~genmetrics.analysis.statistics.degenerate_interval`);
    * ``too_few``: fewer than ``min_points`` pairwise complete sources: no correlation is
      reported (``r``, ``low``, ``high`` are NaN);
    * ``in_figure``: both scores are headline values (their metric's registered
      ``headline``), or with ``figure_values`` (``"<entry>/<value>"`` strings, the config's
      ``report.heatmap_values``) both are among those: the pairs drawn in the heatmap (the
      table has every pair). A ``figure_values`` item that names no scored value is an error.
    """
    methods = list(methods)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {m!r}")
    sel = select_values(df, values)
    if sel.empty:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    wide, keys = _wide_with_keys(sel)
    if figure_values is None:
        shown = set(zip(*(headline_rows(sel)[c] for c in ("entry", "name")), strict=True))
    else:
        shown = {tuple(v.split("/", 1)) for v in figure_values}
        unknown = sorted("/".join(v) for v in shown - set(keys))
        if unknown:
            raise ValueError(
                f"report.heatmap_values: {unknown[0]!r} is no scored value (known: "
                + ", ".join(sorted("/".join(k) for k in keys))
                + ")"
            )
    figure = np.array([k in shown for k in keys])
    names = list(wide.columns)
    datasets = wide.index.get_level_values("dataset").to_numpy()
    scopes = [(str(ds), datasets == ds, False) for ds in dict.fromkeys(datasets)]
    if len(scopes) > 1:
        scopes.append((POOLED, np.ones(len(wide), bool), True))
    raw = wide.to_numpy(dtype=float)
    k = len(names)
    a_idx, b_idx = np.triu_indices(k, 1)
    frames = []
    for i, (scope, rows, pooled) in enumerate(scopes):
        x, strata = raw[rows], datasets[rows]
        xs = zscore_within(x, strata) if pooled else x
        present = (~np.isnan(xs)).astype(float)
        n = present.T @ present
        point = {
            m: pd.DataFrame(xs).corr(method=m).to_numpy(dtype=float).reshape(k, k) for m in methods
        }
        boot = bootstrap_pairwise_correlation(
            x, strata if pooled else None, methods, n_boot, [seed, i]
        )
        for m in methods:
            r = point[m]
            low, high, used = replicate_bounds(boot.get(m), level, n_boot, (k, k))
            few = n < min_points
            low, high = np.where(few, np.nan, low), np.where(few, np.nan, high)
            frames.append(
                pd.DataFrame(
                    {
                        "scope": scope,
                        "method": m,
                        "metric_a": [names[a] for a in a_idx],
                        "metric_b": [names[b] for b in b_idx],
                        "r": np.where(few, np.nan, r)[a_idx, b_idx],
                        "low": low[a_idx, b_idx],
                        "high": high[a_idx, b_idx],
                        "n": n[a_idx, b_idx].astype(int),
                        "n_boot_used": used[a_idx, b_idx].astype(int),
                        "n_points": int(rows.sum()),
                        "too_few": few[a_idx, b_idx],
                        "in_figure": figure[a_idx] & figure[b_idx],
                        "level": level,
                        "degenerate_interval": degenerate_interval(low, high)[a_idx, b_idx],
                    }
                )
            )
    if not frames:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    return pd.concat(frames, ignore_index=True)[TABLE_COLUMNS]


def correlation_matrix(table: pd.DataFrame, scope: str, method: str, column: str = "r"):
    """One scope's and method's ``column`` (``r``, ``low``, ``high``, ``n``) of
    :func:`correlation_table` as a symmetric matrix (metrics in the table's order; the
    diagonal is NaN, or the pairs' maximum ``n`` for ``n``)."""
    t = table[(table["scope"] == scope) & (table["method"] == method)]
    names = list(dict.fromkeys([*t["metric_a"], *t["metric_b"]]))
    order = {m: i for i, m in enumerate(names)}
    out = np.full((len(names), len(names)), np.nan)
    ia, ib = t["metric_a"].map(order).to_numpy(), t["metric_b"].map(order).to_numpy()
    out[ia, ib] = out[ib, ia] = t[column].to_numpy(dtype=float)
    return pd.DataFrame(out, index=names, columns=names)


def cluster_order(matrix: pd.DataFrame) -> list[str]:
    """Metrics ordered by average-linkage hierarchical clustering on 1 − |r| (scipy
    ``linkage``, optimal leaf ordering): scores that move together end up next to each
    other. Undefined correlations count as 0 (distance 1)."""
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    names = list(matrix.index)
    if len(names) < 3:
        return names
    d = 1 - np.abs(np.nan_to_num(matrix.to_numpy(dtype=float), nan=0.0))
    d = np.clip((d + d.T) / 2, 0, 1)
    np.fill_diagonal(d, 0)
    z = linkage(squareform(d, checks=False), method="average", optimal_ordering=True)
    return [names[i] for i in leaves_list(z)]


def length_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per source: the headline scores plus ``mean_words``, the texts' mean length
    (the largest one reported, i.e. before any length control)."""
    wide = wide_scores(headline_rows(df))
    lengths = df[df["name"] == "mean_words"].copy()
    if lengths.empty:
        return wide.iloc[:, :0]
    lengths["seed"] = pd.to_numeric(lengths["seed"]).astype("Int64").astype("string").fillna("")
    mean = lengths.groupby(["dataset", "model", "seed"])["value"].max()
    return wide.join(mean.rename("mean_words"), how="inner")
