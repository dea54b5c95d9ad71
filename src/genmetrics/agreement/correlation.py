"""Do our metrics agree with people? Correlation of metric values on judged texts with
human criteria, with bootstrap intervals (the values come from
:func:`genmetrics.agreement.scoring.score_texts`).

Correlation levels (Deutsch, Dror & Roth 2021, "A Statistical Analysis of Summarization
Evaluation Metrics using Resampling Methods"; Bhandari et al. 2020 report the first two):

* ``system`` — a system's score is the mean over items of its texts' scores, for the metric
  and the human criterion; the correlation runs across systems. Bootstrap: systems *and*
  items resampled with replacement ("boot-both"), means recomputed on the resampled items.
* ``item`` (summary level) — per item, the correlation across the systems' texts of that
  item, averaged over the items where it is defined (both sides vary). Bootstrap: items.
* ``pooled`` — one correlation over every (item, system) text (Maynez et al. 2020).
  Bootstrap: items, with all their systems.

Methods: Pearson, Spearman and Kendall τ-b as scipy.stats computes them, through the kernels
of :mod:`genmetrics.analysis.statistics` (:func:`~genmetrics.analysis.statistics.cross_correlation`;
for the rank methods values are first rounded to 12 significant digits, so that means equal
up to floating-point rounding tie). Percentile intervals; a replicate where a correlation is
undefined (a constant side) is left out of that cell and ``n_boot_used`` says how many
remained. Every random draw comes from ``numpy.random.default_rng(seed)``.

* :func:`correlations` — every metric column with every criterion, per level and method;
* :func:`upstream_check` — our values against the stored upstream values of the same texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from genmetrics import GenmetricsError
from genmetrics.analysis.statistics import (
    bootstrap_indices,
    cross_correlation,
    kendall_columns,
    nan_mean,
    percentile_interval,
)

LEVELS = ("system", "item", "pooled")
METHODS = ("kendall", "spearman", "pearson")


def _blocks(table: pd.DataFrame, cols: Sequence[str]) -> tuple[np.ndarray, list, list, int]:
    """[item, system, col] array over the items that have every system (and no NaN)."""
    systems = sorted(table["system"].unique())
    complete = table.dropna(subset=list(cols))
    counts = complete.groupby("item")["system"].nunique()
    keep = sorted(counts.index[counts == len(systems)])
    dropped = int(table["item"].nunique() - len(keep))
    sub = complete[complete["item"].isin(keep)].set_index(["item", "system"])
    idx = pd.MultiIndex.from_product([keep, systems])
    arr = sub.reindex(idx)[list(cols)].to_numpy(float).reshape(len(keep), len(systems), len(cols))
    return arr, keep, systems, dropped


def _level_stat(method: str, level: str, m: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The system-level or pooled correlation for blocks m (items, systems, K), h (…, C) →
    (K, C); the item level (a mean of per-item correlations) is resampled in
    :func:`correlations` from the per-item values directly."""
    if level == "system":
        return cross_correlation(method, m.mean(axis=0), h.mean(axis=0), axis=0)
    if level == "pooled":
        x = m.reshape(-1, m.shape[-1])
        y = h.reshape(-1, h.shape[-1])
        if method == "kendall":
            return kendall_columns(x, y)
        return cross_correlation(method, x, y, axis=0)
    raise GenmetricsError(f"correlation level {level!r} is not one of {LEVELS}")


def correlations(
    table: pd.DataFrame,
    metrics: Sequence[str],
    criteria: Sequence[str],
    *,
    levels: Sequence[str] = LEVELS,
    methods: Sequence[str] = METHODS,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Correlation of every metric column with every human criterion, per level and method.

    ``table`` has ``item``, ``system`` and the named columns. Only items scored for every
    system on every column enter (``n_items_dropped`` counts the others). Returns one row per
    (metric, criterion, level, method): ``value``, ``ci_low``, ``ci_high``, ``n_systems``,
    ``n_items``, ``n_items_defined`` (item level: items where the correlation is defined),
    ``n_boot``, ``n_boot_used``, ``seed``.
    """
    for lv in levels:
        if lv not in LEVELS:
            raise GenmetricsError(f"correlation level {lv!r} is not one of {LEVELS}")
    for me in methods:
        if me not in METHODS:
            raise GenmetricsError(f"correlation method {me!r} is not one of {METHODS}")
    if n_boot < 1 or not 0 < ci < 1:
        raise GenmetricsError(f"correlations: need n_boot >= 1 and 0 < ci < 1 ({n_boot}, {ci})")
    missing = [c for c in (*metrics, *criteria) if c not in table.columns]
    if missing:
        raise GenmetricsError(f"correlations: no column(s) {missing}")
    arr, items, systems, dropped = _blocks(table, [*metrics, *criteria])
    if len(items) < 2 or len(systems) < 2:
        raise GenmetricsError(
            f"correlations: need >= 2 complete items and systems, got {len(items)}, {len(systems)}"
        )
    m, h = arr[..., : len(metrics)], arr[..., len(metrics) :]
    rng = np.random.default_rng(seed)
    n_i, n_s = len(items), len(systems)
    rows = []
    for level in levels:
        draws_i = bootstrap_indices(rng, n_i, n_boot)
        draws_s = bootstrap_indices(rng, n_s, n_boot)
        for method in methods:
            defined = None
            boots = np.full((n_boot, len(metrics), len(criteria)), np.nan)
            if level == "item":  # per-item correlations once, then resample their mean
                per = cross_correlation(method, m, h, axis=1)
                point = nan_mean(per)
                defined = (~np.isnan(per)).sum(axis=0)
                for b in range(n_boot):
                    boots[b] = nan_mean(per[draws_i[b]])
            elif level == "system":
                point = _level_stat(method, level, m, h)
                w = np.stack([np.bincount(d, minlength=n_i) for d in draws_i]) / n_i
                ms = np.einsum("bi,isk->bsk", w, m)
                hs = np.einsum("bi,isc->bsc", w, h)
                ms = np.take_along_axis(ms, draws_s[:, :, None], axis=1)
                hs = np.take_along_axis(hs, draws_s[:, :, None], axis=1)
                boots = cross_correlation(method, ms, hs, axis=1)
            else:
                point = _level_stat(method, level, m, h)
                for b in range(n_boot):
                    boots[b] = _level_stat(method, "pooled", m[draws_i[b]], h[draws_i[b]])
            lo, hi = percentile_interval(boots, ci)  # a cell never defined: NaN, counted
            used = (~np.isnan(boots)).sum(axis=0)
            for k, metric in enumerate(metrics):
                for c, crit in enumerate(criteria):
                    v = point[k, c]
                    rows.append(
                        {
                            "metric": metric,
                            "criterion": crit,
                            "level": level,
                            "method": method,
                            "value": None if np.isnan(v) else float(v),
                            "ci_low": None if used[k, c] == 0 else float(lo[k, c]),
                            "ci_high": None if used[k, c] == 0 else float(hi[k, c]),
                            "n_systems": n_s,
                            "n_items": n_i,
                            "n_items_defined": None if defined is None else int(defined[k, c]),
                            "n_items_dropped": dropped,
                            "n_boot": n_boot,
                            "n_boot_used": int(used[k, c]),
                            "seed": seed,
                        }
                    )
    return pd.DataFrame(rows)


def upstream_check(table: pd.DataFrame, pairs: Mapping[str, str]) -> pd.DataFrame:
    """Our value vs the stored upstream value of the same texts, per ``ours → upstream`` pair:
    Pearson r, Spearman ρ, mean and max |ours − upstream|, and n."""
    rows = []
    for ours, theirs in pairs.items():
        if ours not in table or theirs not in table:
            raise GenmetricsError(
                f"upstream_check: no column {ours if ours not in table else theirs!r}"
            )
        d = table[[ours, theirs]].dropna()
        diff = (d[ours] - d[theirs]).abs()
        rows.append(
            {
                "ours": ours,
                "upstream": theirs,
                "pearson": float(stats.pearsonr(d[ours], d[theirs]).statistic),
                "spearman": float(stats.spearmanr(d[ours], d[theirs]).statistic),
                "mean_abs_diff": float(diff.mean()),
                "max_abs_diff": float(diff.max()),
                "share_within_0.01": float((diff <= 0.01).mean()),
                "n": len(d),
            }
        )
    return pd.DataFrame(rows)
