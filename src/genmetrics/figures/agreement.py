"""Human agreement: metric × criterion correlation heatmaps and pairwise (A/B) agreement."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from genmetrics.analysis.statistics import degenerate_interval
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import OKABE_ITO, plt

LEVEL_SHORT = {
    "system": "system level",
    "item": "item level",
    "pooled": "pooled",
}
LEVEL_WORDS = {
    "system": "system level: systems' mean scores",
    "item": "item level: across the systems' texts of one item, averaged over items",
    "pooled": "pooled: every text",
}


def _metric_label(metric: str) -> str:
    if metric.startswith("upstream."):
        return f"{metric[len('upstream.') :]} (stored)"
    return metric


def agreement_heatmap(
    corr: pd.DataFrame, level: str, method: str, path: str | Path, *, title: str
) -> None:
    """Metric (rows) × human criterion (columns) correlation at one level and method, each
    cell annotated with its value and bootstrap interval ("no interval" where there is none
    or it has zero width, e.g. [1, 1]), bold when the interval excludes 0;
    our scores first, the set's stored upstream scores below a line. With one criterion the
    columns are every level computed instead."""
    d = corr[corr["method"] == method]
    criteria = list(dict.fromkeys(d["criterion"]))
    if len(criteria) == 1:
        columns = [(criteria[0], lv) for lv in dict.fromkeys(d["level"])]
    else:
        columns = [(c, level) for c in criteria]
    d = d[[(c, lv) in columns for c, lv in zip(d["criterion"], d["level"], strict=True)]]
    metrics = list(dict.fromkeys(d["metric"]))
    n_ours = sum(not m.startswith("upstream.") for m in metrics)
    vals = np.full((len(metrics), len(columns)), np.nan)
    lo, hi = vals.copy(), vals.copy()
    for r in d.itertuples():
        i, j = metrics.index(r.metric), columns.index((r.criterion, r.level))
        vals[i, j] = np.nan if pd.isna(r.value) else r.value
        lo[i, j] = np.nan if pd.isna(r.ci_low) else r.ci_low
        hi[i, j] = np.nan if pd.isna(r.ci_high) else r.ci_high
    many = len(metrics) > 30
    fig_h = 2.0 + (0.22 if many else 0.42) * len(metrics)
    fig_w = max(7.5, 3.4 + (1.15 if many else 1.5) * len(columns))
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    cmap = plt.get_cmap("RdBu_r").with_extremes(bad="#d9d9d9")
    im = ax.imshow(np.ma.masked_invalid(vals), cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    for i in range(len(metrics)):
        for j in range(len(columns)):
            v = vals[i, j]
            if np.isnan(v):
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=6, color="#555555")
                continue
            no_interval = np.isnan(lo[i, j]) or degenerate_interval(lo[i, j], hi[i, j])
            sure = not no_interval and (lo[i, j] > 0 or hi[i, j] < 0)
            interval = "no interval" if no_interval else f"[{lo[i, j]:.2f}, {hi[i, j]:.2f}]"
            text = f"{v:.2f}" if many else f"{v:.2f}\n{interval}"
            ax.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=6 if many else 7,
                fontweight="bold" if sure else "normal",
                color="white" if abs(v) > 0.6 else "black",
            )
    if len(criteria) == 1:
        labels = [f"{c}\n{LEVEL_SHORT[lv]}" for c, lv in columns]
    else:
        labels = criteria
    ax.set_xticks(range(len(columns)), labels, fontsize=8)
    ax.tick_params(axis="x", top=True, labeltop=True, bottom=False, labelbottom=False)
    ax.set_yticks(
        range(len(metrics)), [_metric_label(m) for m in metrics], fontsize=6 if many else 8
    )
    if 0 < n_ours < len(metrics):
        ax.axhline(n_ours - 0.5, color="black", lw=1.2)
    n = ""
    if len(d):
        first = d.iloc[0]
        n = f"{int(first.n_systems)} systems × {int(first.n_items)} items"
    how = "" if len(criteria) == 1 else f", {LEVEL_WORDS[level]}"
    ax.set_title(
        f"{title}\n{method.capitalize()} correlation of each metric with human scores{how}\n"
        f"{n}; bold: its 95% bootstrap interval excludes 0"
        + ("; below the line: scores stored with the set" if 0 < n_ours < len(metrics) else ""),
        fontsize=9,
    )
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    cb.set_label(f"{method} correlation (−1 … +1)", fontsize=8)
    _save(fig, path)


def pairwise_agreement_figure(res: pd.DataFrame, path: str | Path, *, title: str) -> None:
    """Per metric (rows) and group (colours): the share of A/B items where the metric picks
    the raters' majority, with its bootstrap interval; 0.5 is chance."""
    metrics = list(dict.fromkeys(res["metric"]))
    groups = list(dict.fromkeys(res["group"]))
    fig, ax = plt.subplots(
        figsize=(7.6, 2.2 + 0.3 * len(metrics) * max(1, len(groups)) ** 0.5 + 0.15 * len(groups))
    )
    step = 0.7 / max(1, len(groups))
    for g_i, g in enumerate(groups):
        d = res[res["group"] == g].set_index("metric").reindex(metrics)
        y = np.arange(len(metrics)) + (g_i - (len(groups) - 1) / 2) * step
        x = d["item_agreement"].to_numpy(float)
        err = np.vstack([x - d["ci_low"].to_numpy(float), d["ci_high"].to_numpy(float) - x])
        n = int(d["n_decisive_items"].max())
        ax.errorbar(
            x,
            y,
            xerr=err,
            fmt="o" if g == "all" else "s",
            color=OKABE_ITO[g_i % len(OKABE_ITO)],
            ms=5,
            capsize=2,
            label=f"{g} ({n} items with a majority)",
        )
    ax.axvline(0.5, color="grey", ls="--", lw=0.8)
    ax.text(0.5, -0.9, "chance", color="grey", fontsize=7, ha="center")
    labels = []
    for m in metrics:
        higher = bool(res.loc[res["metric"] == m, "higher_is_better"].iloc[0])
        labels.append(f"{m} ({'higher' if higher else 'lower'} wins)")
    ax.set_yticks(range(len(metrics)), labels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(len(metrics) - 0.5, -1.1)
    ax.set_xlabel("share of items where the metric picks the raters' choice")
    ax.set_title(f"{title}\nmetric choice vs raters' majority, 95% bootstrap intervals", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.4, -0.16), ncol=2, frameon=False)
    _save(fig, path)
