"""The ``pr-scale`` study's tables (Le Bronnec et al. (2024), §4.2, §5.3, App. A, App. B.1).

* :func:`size_series` — P and R (with their intervals over texts), MAUVE and PRD's F_8 /
  F_1/8 per (dataset, model), each model with its size in billions of parameters
  (:data:`MODEL_SIZES_B`), smallest first;
* :func:`size_trend` — per dataset and value, whether it grows with model size (§5.3:
  "The Recall is consistently better for larger models"): the values in size order, the
  rank correlation with size, ``grows`` (strictly increasing) and ``separated`` (the largest
  model's interval lies wholly above the smallest's, or wholly below: ``-1``);
* :func:`ours_table` / :func:`comparison` — our numbers in one tidy table and the
  side-by-side with ``resources/papers/pr-scale.csv`` (Fig. A.5's correlations, Fig. 6's
  plateau and the P and R where our N sweep ends).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.analysis.paper_comparison import Match, side_by_side

#: billions of parameters of each model whose texts the study imports (the data mirror's
#: READMEs: gpt2_generations, detectgpt_continuations)
MODEL_SIZES_B = {
    "gpt2-117m": 0.117,
    "gpt2-1.5b": 1.5,
    "gpt-neo-2.7B": 2.7,
    "gpt-j-6B": 6.0,
    "gpt-neox-20b": 20.0,
}
#: (entry, value name) of each column of :func:`size_series`
SERIES_VALUES = {
    "precision": ("precision_recall", "precision"),
    "recall": ("precision_recall", "recall"),
    "mauve": ("mauve", "mauve"),
    "f8": ("prd", "f8"),
    "f1_8": ("prd", "f1_8"),
}
#: Fig. A.5's names (the paper's table) of our correlation table's score names
A5_NAMES = {"Precision": "precision", "Recall": "recall", "MAUVE": "mauve"}
A5_NAMES |= {"F_{1/8}": "f1_8", "F_8": "f8"}


def size_series(scores: pd.DataFrame, sizes: Mapping[str, float] = MODEL_SIZES_B) -> pd.DataFrame:
    """One row per (dataset, model) of ``scores`` (the tidy ``scores.csv``) whose model has
    a size: ``size_b``, each value of :data:`SERIES_VALUES` averaged over seeds, with
    ``<value>_lower``/``_upper`` (the interval over texts; with several seeds, the widest
    bounds) and ``n_candidate``/``n_reference`` (the fewest texts). Sorted by dataset, then
    size."""
    d = scores[scores["model"].isin(list(sizes))]
    rows = []
    for (dataset, model), g in d.groupby(["dataset", "model"], sort=False):
        row: dict = {"dataset": dataset, "model": model, "size_b": float(sizes[model])}
        for col, (entry, name) in SERIES_VALUES.items():
            v = g[(g["entry"] == entry) & (g["name"] == name)]
            row[col] = float(v["value"].mean()) if len(v) else math.nan
            row[f"{col}_lower"] = float(v["lower"].min()) if len(v) else math.nan
            row[f"{col}_upper"] = float(v["upper"].max()) if len(v) else math.nan
        pr = g[g["entry"] == SERIES_VALUES["recall"][0]]
        for c in ("n_candidate", "n_reference"):
            row[c] = pd.to_numeric(pr[c], errors="coerce").min() if len(pr) else math.nan
        rows.append(row)
    if not rows:
        raise GenmetricsError(f"no scores of the models {sorted(sizes)}")
    out = pd.DataFrame(rows).sort_values(["dataset", "size_b"], kind="stable")
    for c in ("n_candidate", "n_reference"):
        out[c] = out[c].astype("Int64")
    return out.reset_index(drop=True)


def size_trend(series: pd.DataFrame, values: tuple[str, ...] = ("precision", "recall")):
    """Per dataset of :func:`size_series` with two or more models and per value: the models
    and values in size order, ``spearman`` (rank correlation of the value with size; NaN with
    two models: a sign is all two points give), ``grows`` (each larger model scores higher),
    ``separated`` (1: the largest model's interval lies wholly above the smallest's, -1:
    wholly below, 0: they overlap; NaN without intervals) and ``change`` (largest minus
    smallest)."""
    rows = []
    for dataset, g in series.groupby("dataset", sort=False):
        g = g.sort_values("size_b", kind="stable")
        if len(g) < 2:
            continue
        for value in values:
            v = g[value].to_numpy(dtype=float)
            lo, hi = g[f"{value}_lower"].to_numpy(float), g[f"{value}_upper"].to_numpy(float)
            if np.isnan([lo[0], hi[0], lo[-1], hi[-1]]).any():
                sep = math.nan
            else:
                sep = 1 if lo[-1] > hi[0] else -1 if hi[-1] < lo[0] else 0
            rho = math.nan
            if len(g) > 2:
                rho = float(pd.Series(v).corr(pd.Series(g["size_b"].to_numpy()), "spearman"))
            rows.append(
                {
                    "dataset": dataset,
                    "value": value,
                    "models": " < ".join(g["model"]),
                    "values": " < ".join(f"{x:.3f}" for x in v),
                    "spearman": rho,
                    "grows": bool(np.all(np.diff(v) > 0)),
                    "separated": sep,
                    "change": float(v[-1] - v[0]),
                }
            )
    return pd.DataFrame(rows)


def ours_table(
    correlation: pd.DataFrame,
    sweep_means: pd.DataFrame,
    *,
    scope: str = "pooled",
    method: str = "spearman",
) -> pd.DataFrame:
    """Our numbers that answer the paper's, tidy (``what``, ``a``, ``b``, ``source``,
    ``value``, ``lower``, ``upper``, ``n``):

    * ``correlation``: ``metric_correlation.csv``'s ``r`` (``low``/``high``, ``n``) of
      ``scope`` and ``method`` for every pair, both ways round (a, b and b, a);
    * ``sweep_end``: per swept source, the largest N of the N sweep (``value``), and
      ``sweep_precision`` / ``sweep_recall``: the mean P and R there (``lower``/``upper``:
      their range over the runs; ``n``: that N)."""
    c = correlation[(correlation["scope"] == scope) & (correlation["method"] == method)]
    rows = []
    for r in c.itertuples(index=False):
        for a, b in ((r.metric_a, r.metric_b), (r.metric_b, r.metric_a)):
            rows.append(
                {"what": "correlation", "a": a, "b": b, "value": r.r, "lower": r.low}
                | {"upper": r.high, "n": r.n}
            )
    s = sweep_means[sweep_means["sweep"] == "n"]
    for source, g in s.groupby("source", sort=False):
        end = g.loc[g["value"].idxmax()]
        rows.append({"what": "sweep_end", "source": source, "value": end["value"]})
        for v in ("precision", "recall"):
            rows.append(
                {"what": f"sweep_{v}", "source": source, "value": end[v]}
                | {"lower": end[f"{v}_min"], "upper": end[f"{v}_max"], "n": end["value"]}
            )
    cols = ["what", "a", "b", "source", "value", "lower", "upper", "n"]
    return pd.DataFrame(rows).reindex(columns=cols)


def comparison(
    ours: pd.DataFrame,
    paper: str | pd.DataFrame = "pr-scale",
    *,
    sweep_source: str = "webtext/gpt2-117m/seed0",
    root=None,
) -> pd.DataFrame:
    """The side-by-side (:func:`genmetrics.analysis.paper_comparison.side_by_side`) of
    :func:`ours_table` and the paper's cells: Fig. A.5's correlations (the sign compared with
    ``versus="zero"``), Fig. 6's plateau N against where our sweep of ``sweep_source`` ends,
    and Fig. 6's P and R (only in the figure) against ours there."""
    names = list(A5_NAMES)
    a5_note = "ours: the runs of every dataset together (within-dataset z-scores), Spearman"
    matches = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            sel = {"what": "correlation", "a": A5_NAMES[a], "b": A5_NAMES[b]}
            matches.append(Match(("Fig. A.5", a, b), sel, versus="zero", note=a5_note))
    row6 = "Llama-2 7B Chat against N (k = 4)"
    note = f"ours: {sweep_source}, the largest N its texts allow"
    matches.append(
        Match(
            ("Fig. 6", row6, "N of the plateau"),
            {"what": "sweep_end", "source": sweep_source},
            note=note,
        )
    )
    for v in ("precision", "recall"):
        sel = {"what": f"sweep_{v}", "source": sweep_source}
        matches.append(Match(("Fig. 6", row6, v), sel, note=note + "; range over the repeats"))
    return side_by_side(paper, ours, matches, root=root)


def _cell(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA:
        return ""
    if isinstance(x, float):
        return f"{x:.0f}" if x.is_integer() and abs(x) >= 10 else f"{x:.3f}"  # a count
    return str(x).replace("|", "\\|")


def markdown_table(df: pd.DataFrame) -> str:
    """A pipe table of ``df`` (floats to 3 decimals, missing values empty)."""
    lines = ["| " + " | ".join(map(str, df.columns)) + " |"]
    lines.append("|" + "---|" * len(df.columns))
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(x) for x in row) + " |")
    return "\n".join(lines)


def study_markdown(
    side: pd.DataFrame, series: pd.DataFrame, trend: pd.DataFrame, sweep: pd.DataFrame
) -> str:
    """``analysis/pr_scale_side_by_side.md``: the paper's numbers beside ours, P and R per
    model size, their trend with size, and P and R along the N sweep."""
    side_cols = ["table", "row", "column", "paper", "ours", "lower", "upper", "n"]
    side_cols += ["direction_agrees", "note"]
    size_cols = ["dataset", "model", "size_b", "precision", "precision_lower"]
    size_cols += ["precision_upper", "recall", "recall_lower", "recall_upper", "mauve"]
    size_cols += ["f8", "f1_8", "n_candidate", "n_reference"]
    n_sweep = sweep[sweep["sweep"] == "n"][["source", "value", "precision", "recall", "runs"]]
    parts = [
        "# pr-scale: Le Bronnec et al. (2024) beside this run",
        "## The paper's numbers beside ours",
        markdown_table(side[side_cols]),
        "## P and R per model size (interval over texts: half-samples, recentred)",
        "kNN radii grow as a set shrinks: where two models of a dataset have different "
        "n_candidate, compare them at equal N in the N sweep below.",
        markdown_table(series[size_cols]),
        "## Against size (§5.3: Recall is consistently better for larger models)",
        markdown_table(trend),
        "## P and R against N (k fixed; mean over the repeats)",
        markdown_table(n_sweep.rename(columns={"value": "N"})),
    ]
    return "\n\n".join(parts) + "\n"
