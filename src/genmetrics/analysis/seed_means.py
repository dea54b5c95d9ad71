"""Per-model means over generation seeds with their standard errors, as bars
(Le Bronnec et al. (2024), Fig. B.2: MAUVE per model with standard errors), and the same
means against the number of in-context examples (their Fig. 8: precision and recall against
n, one line per model).

The standard error of a model's value is ``std / sqrt(n_seeds)`` with the sample standard
deviation (``ddof=1``) over its seeds; its 95% interval (``ci_low``, ``ci_high``, at
``level``) is the Student-t one, mean ± t_{0.975, n_seeds − 1} · se
(:func:`genmetrics.analysis.statistics.t_interval`: with 2 seeds t = 12.7, so two seeds
bound the mean only loosely), ``interval`` :data:`T_OVER_SEEDS`. Given the seed summary
(``results/scores_summary.csv``, whose interval is over prompts and seeds:
:func:`genmetrics.analysis.units.seed_intervals`), a value with an interval there takes it
instead (``interval``: ``prompts`` for one seed, ``prompts, seeds``; ``resamples``), so one
seed has an interval too. Without either (one seed, no resampled prompts) a model has none
(NaN, drawn without a whisker). Every table keeps ``n_seeds`` so a reader sees what the bar
rests on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.analysis.statistics import t_interval

BAR_KEYS = ["dataset", "entry", "reference", "model", "name"]
#: the interval columns added after the first ones (``level``: of the interval; ``interval``:
#: what it is over; ``resamples``: of a bootstrap interval)
INTERVAL_COLUMNS = ["ci_low", "ci_high", "level", "interval", "resamples"]
#: ``interval`` of the Student-t interval over seeds
T_OVER_SEEDS = "seeds (t)"
BAR_COLUMNS = [*BAR_KEYS, "mean", "std", "se", "n_seeds", *INTERVAL_COLUMNS]
FEW_SHOT_COLUMNS = ["dataset", "n", *BAR_KEYS[1:], "mean", "std", "se", "n_seeds"]
FEW_SHOT_COLUMNS += INTERVAL_COLUMNS
#: the level of the intervals over seeds
LEVEL = 0.95
PARSED_COLUMNS = ["dataset", "n", "model", "seed", "texts", "unparsed", "parsed_share"]


def seed_means(
    scores: pd.DataFrame,
    metrics: Sequence[str],
    names: Sequence[str] | None = None,
    summary: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """:func:`genmetrics.analysis.aggregate.seed_summary` (mean, std with ddof=1, number of
    seeds) of each value ``names`` (all when None) of the registered ``metrics``, per
    (dataset, entry, reference, model), plus the standard error and the 95% t interval
    (``ci_low``, ``ci_high``, ``level``), from the tidy ``results/scores.csv``; with the seed
    ``summary`` (``results/scores_summary.csv``), its interval over prompts and seeds where
    it has one (see the module docstring). The human references (model ``references``) are
    left out: they have no seeds. Columns :data:`BAR_COLUMNS`, sorted by :data:`BAR_KEYS`."""
    from genmetrics.analysis.aggregate import seed_summary

    d = scores[scores["metric"].isin(list(metrics)) & (scores["model"] != "references")]
    if names is not None:
        d = d[d["name"].isin(list(names))]
    if d.empty:
        return pd.DataFrame(columns=BAR_COLUMNS)
    out = seed_summary(d)
    out["se"] = out["std"] / np.sqrt(out["n_seeds"])
    out["ci_low"], out["ci_high"] = t_interval(out["mean"], out["std"], out["n_seeds"], LEVEL)
    out["level"] = LEVEL
    out["interval"] = np.where(out["n_seeds"] >= 2, T_OVER_SEEDS, None)
    out["resamples"] = pd.array([pd.NA] * len(out), dtype="Int64")
    if summary is not None:
        out = _bootstrap_intervals(out, summary)
    return out[BAR_COLUMNS].sort_values(BAR_KEYS, kind="stable").reset_index(drop=True)


def _bootstrap_intervals(out: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """``out`` with the summary's intervals where it has one (on the metric's own scale:
    :func:`genmetrics.analysis.units.summary_intervals`)."""
    from genmetrics.analysis.units import summary_intervals

    keys = ["dataset", "model", "reference", "metric", "entry", "name"]
    s = summary_intervals(summary)
    s = s[s["lower"].notna() & s["upper"].notna()]
    s = s.rename(
        columns={c: f"s_{c}" for c in ("lower", "upper", "level", "interval", "resamples")}
    )
    m = out.assign(reference=out["reference"].fillna("")).merge(s, on=keys, how="left")
    has = m["s_lower"].notna().to_numpy()
    for c, sc in (("ci_low", "s_lower"), ("ci_high", "s_upper"), ("level", "s_level")):
        m.loc[has, c] = m.loc[has, sc]
    m["interval"] = m["interval"].astype(object)
    m.loc[has, "interval"] = m.loc[has, "s_interval"]
    m["resamples"] = m["s_resamples"].astype("Int64").where(has, pd.NA)
    return m


def few_shot_table(
    scores: pd.DataFrame,
    variants: Mapping[str, Mapping[str, Any]],
    metrics: Sequence[str] = ("precision_recall",),
    names: Sequence[str] | None = ("precision", "recall"),
    summary: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """:func:`seed_means` of the few-shot variants of a dataset against their number of
    examples (with the seed ``summary``'s intervals where given): ``variants`` maps a variant
    dataset (``<dataset>-n<k>``, as the plan names them: ``Plan.few_shot_variants``) to
    ``{"dataset": <dataset>, "n": k}``. Rows of datasets
    that are no variant are left out; ``dataset`` is the base dataset's name. Sorted by
    (dataset, entry, reference, model, name, n). Columns :data:`FEW_SHOT_COLUMNS`."""
    means = seed_means(scores, metrics, names, summary)
    means = means[means["dataset"].isin(list(variants))]
    if means.empty:
        return pd.DataFrame(columns=FEW_SHOT_COLUMNS)
    for v, spec in variants.items():
        if not {"dataset", "n"} <= set(spec):
            raise GenmetricsError(f"few-shot variant {v!r}: needs 'dataset' and 'n', got {spec}")
    n = means["dataset"].map(lambda v: int(variants[v]["n"]))
    base = means["dataset"].map(lambda v: str(variants[v]["dataset"]))
    out = means.assign(dataset=base, n=n)[FEW_SHOT_COLUMNS]
    keys = ["dataset", "entry", "reference", "model", "name", "n"]
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def parsed_table(
    stats: Mapping[tuple[str, str, int], Mapping[str, Any]],
    variants: Mapping[str, Mapping[str, Any]],
) -> pd.DataFrame:
    """How many outputs the biography parser could cut back to one biography, per few-shot
    variant, model and seed: ``stats`` maps (variant dataset, model, seed) to that
    generation's statistics (``texts``, ``unparsed``: :func:`genmetrics.generation.transformers_backend.generate`).
    Generations of other datasets are left out. Columns :data:`PARSED_COLUMNS`, sorted by
    (dataset, model, n, seed); ``parsed_share`` = 1 − unparsed / texts."""
    rows = []
    for (ds, model, seed), st in stats.items():
        if ds not in variants:
            continue
        texts, unparsed = int(st["texts"]), int(st.get("unparsed", 0))
        share = 1.0 - unparsed / texts if texts else float("nan")
        base, n = str(variants[ds]["dataset"]), int(variants[ds]["n"])
        rows.append([base, n, model, int(seed), texts, unparsed, share])
    out = pd.DataFrame(rows, columns=PARSED_COLUMNS)
    return out.sort_values(["dataset", "model", "n", "seed"], kind="stable").reset_index(drop=True)
