"""Correlation of scores across runs, pooled as Le Bronnec et al. (2024) pool their Fig. 7.

Fig. 7 is "the correlation between Precision and Recall and other distribution-based metrics
on the Wikipedia Biography dataset in our experiments" (§5.2): one point per biography run
(a model with a number n of in-context examples, 4000 texts, one generation per run: the text
gives no seeds for this task), the metrics' raw values, every run against the same human
biographies. The text does not say Spearman or Pearson, so both are computed.

* :func:`run_points` — one row per run (model, n): each value's mean over the run's seeds
  (the paper averages P and R over seeds where it has several, §5.1), the human references
  and the prompts left out. The few-shot variants ``<dataset>-n<k>`` share one reference set,
  so their raw values are comparable (no z-scoring within a variant: that would remove the
  effect of n, which drives the paper's correlations).
* :func:`run_correlation` — every pair of values: r over the runs and a percentile bootstrap
  interval over runs (runs drawn with replacement, ``numpy.random.default_rng(seed)``; a
  resample where a value is constant has no r and is skipped; fewer than half usable
  resamples: no interval).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.analysis.statistics import (
    MIN_CORRELATION_POINTS,
    bootstrap_pairwise_correlation,
    pairwise_correlation,
    replicate_bounds,
)
from genmetrics.paths import PROMPTS, REFERENCES

__all__ = ["RUN_CORRELATION_COLUMNS", "run_correlation", "run_points"]

#: the columns of :func:`run_correlation`
RUN_CORRELATION_COLUMNS = ["method", "metric_a", "metric_b", "r", "low", "high", "n"]
RUN_CORRELATION_COLUMNS += ["n_boot", "n_boot_used", "level", "interval", "too_few"]
#: what the interval is over
OVER_RUNS = "percentile bootstrap over runs (runs drawn with replacement)"


def run_points(
    scores: pd.DataFrame,
    values: Mapping[str, str],
    variants: Mapping[str, Mapping[str, object]] | None = None,
) -> pd.DataFrame:
    """One row per run of the tidy ``scores`` (:mod:`genmetrics.analysis.aggregate`): index
    (``model``, ``n``), a column per label of ``values`` (label → ``"<entry>/<value name>"``)
    holding the mean over the run's seeds, and ``n_seeds``.

    ``variants`` maps a few-shot variant dataset to ``{"dataset", "n"}`` (the plan's
    ``few_shot_variants``): ``n`` is the number of in-context examples; a dataset that is no
    variant is its own ``n`` (its name). The human references and the prompts are no run."""
    variants = variants or {}
    keep = ~scores["model"].isin([REFERENCES, PROMPTS])
    d = scores[keep].copy()
    d["key"] = d["entry"].astype(str) + "/" + d["name"].astype(str)
    missing = [v for v in values.values() if v not in set(d["key"])]
    if missing:
        raise GenmetricsError(f"no scores of {missing[0]!r} among the runs (entry/value name)")
    label = {v: k for k, v in values.items()}
    d = d[d["key"].isin(list(label))]
    d["n"] = [variants.get(ds, {}).get("n", ds) for ds in d["dataset"]]
    d["label"] = d["key"].map(label)
    wide = d.pivot_table(index=["model", "n"], columns="label", values="value", aggfunc="mean")
    seeds = d.groupby(["model", "n"])["seed"].nunique().rename("n_seeds")
    out = wide.reindex(columns=list(values)).join(seeds)
    return out.sort_index()


def run_correlation(
    points: pd.DataFrame,
    columns: Sequence[str] | None = None,
    methods: Sequence[str] = ("spearman", "pearson"),
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    min_points: int = MIN_CORRELATION_POINTS,
) -> pd.DataFrame:
    """Every pair of ``columns`` of ``points`` (default: all but ``n_seeds``), per method:
    ``r`` over the runs (rows; pairwise complete, ``n`` of them), ``low``/``high`` the
    percentile bootstrap interval at ``level`` over runs (``n_boot`` resamples of the rows with
    replacement, seeded by ``seed``, the same resamples for every pair and method;
    ``n_boot_used``: the resamples where r is defined). With fewer than ``min_points`` runs
    (:data:`~genmetrics.analysis.statistics.MIN_CORRELATION_POINTS`) nothing is reported
    (``too_few``). Columns :data:`RUN_CORRELATION_COLUMNS`, pairs in ``columns`` order."""
    cols = list(columns) if columns is not None else [c for c in points if c != "n_seeds"]
    x = points[cols].to_numpy(dtype=float)
    present = (~np.isnan(x)).astype(float)
    n = present.T @ present
    boot = bootstrap_pairwise_correlation(x, None, list(methods), n_boot, seed)
    a_idx, b_idx = np.triu_indices(len(cols), 1)
    frames = []
    for m in methods:
        r = pairwise_correlation(x, m)
        low, high, used = replicate_bounds(boot.get(m), level, n_boot, np.shape(r))
        few = n < min_points
        frames.append(
            pd.DataFrame(
                {
                    "method": m,
                    "metric_a": [cols[a] for a in a_idx],
                    "metric_b": [cols[b] for b in b_idx],
                    "r": np.where(few, np.nan, r)[a_idx, b_idx],
                    "low": np.where(few, np.nan, low)[a_idx, b_idx],
                    "high": np.where(few, np.nan, high)[a_idx, b_idx],
                    "n": n[a_idx, b_idx].astype(int),
                    "n_boot": int(n_boot),
                    "n_boot_used": used[a_idx, b_idx].astype(int),
                    "level": level,
                    "interval": OVER_RUNS,
                    "too_few": few[a_idx, b_idx],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[RUN_CORRELATION_COLUMNS]
