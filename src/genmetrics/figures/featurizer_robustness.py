"""The models' ranks under each featurizer: a slope chart per dataset and metric value, with
Kendall's τ-b and its interval from :mod:`genmetrics.analysis.featurizer_robustness`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from genmetrics.analysis.featurizer_robustness import interval_cell
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import OKABE_ITO, panel_grid


def _pair_line(row: dict) -> str:
    """``τ-b(A, B) = 0.33 (p 0.60), 95% interval [-0.33, 1.00]; same top``, or the words."""
    head = f"τ-b({row['featurizer_a']}, {row['featurizer_b']})"
    if not np.isfinite(row["tau"]):
        return f"{head}: {interval_cell(row)}"
    text = f"{head} = {row['tau']:.2f} (p = {row['p_value']:.2f})"
    cell = interval_cell(row)
    text += f", {row['level']:.0%} interval {cell}" if cell.startswith("[") else f"; {cell}"
    if row["same_top"] is not None:
        text += "; same top model" if row["same_top"] else "; the top model changes"
    return text


def robustness_figure(table: pd.DataFrame, ranks: pd.DataFrame, path: str | Path) -> None:
    """One panel per (dataset, metric value): each model's rank (1 = best, at the top) under
    each featurizer, joined by a line per model (crossing lines: the order flips), models
    named at both ends (tied models share a label); the title gives τ-b of every pair of
    featurizers with its interval, or why there is none."""
    keys = list(dict.fromkeys(ranks[["dataset", "metric", "value"]].itertuples(index=False)))
    fig, axes = panel_grid(
        len(keys), width=5.6, height=4.6, empty="no metric is computed under two featurizers"
    )
    for ax, (ds, metric, value) in zip(axes.flat, keys, strict=False):
        sub = ranks[(ranks["dataset"] == ds) & (ranks["metric"] == metric)]
        sub = sub[sub["value"] == value]
        feats = list(dict.fromkeys(sub["featurizer"]))
        models = sorted(sub["model"].unique())
        n = len(models)
        # tied models (one rank under a featurizer) drawn a little apart, in name order
        tied = sub.groupby(["featurizer", "rank"])["model"].transform(lambda s: s.rank() - 1)
        size = sub.groupby(["featurizer", "rank"])["model"].transform("size")
        sub = sub.assign(y=sub["rank"] + (tied - (size - 1) / 2) * 0.06)
        for i, model in enumerate(models):
            pts = sub[sub["model"] == model].set_index("featurizer").reindex(feats)
            ax.plot(
                range(len(feats)),
                pts["y"].to_numpy(dtype=float),
                marker="o",
                lw=2,
                color=OKABE_ITO[i % len(OKABE_ITO)],
            )
        for x, f in enumerate(feats):
            at = sub[sub["featurizer"] == f].groupby("rank")["model"].apply(", ".join)
            for rank, names in at.items():
                ax.annotate(
                    textwrap.fill(names, 24),
                    (x, rank),
                    xytext=(8 if x == len(feats) - 1 else -8, 0),
                    textcoords="offset points",
                    ha="left" if x == len(feats) - 1 else "right",
                    va="center",
                    fontsize=8,
                )
        ax.set_xticks(range(len(feats)), [f"featurizer\n{f}" for f in feats])
        ax.set_xlim(-0.9, len(feats) - 0.1)
        ax.set_ylim(n + 0.5, 0.5)
        ax.set_yticks(range(1, n + 1))
        ax.set_ylabel("rank of the model (1 = best)")
        rows = table[
            (table["dataset"] == ds) & (table["metric"] == metric) & (table["value"] == value)
        ]
        better = rows["direction"].iloc[0] if len(rows) else ""
        what = metric if value == metric else f"{metric} / {value}"
        lines = [f"{ds}: {what} ({better} is better), {n} models"]
        lines += [textwrap.fill(_pair_line(r), 70) for r in rows.to_dict("records")]
        ax.set_title("\n".join(lines), fontsize=9, loc="left")
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(
        "Do the models keep their order when the featurizer changes?\n"
        "Each line is one model's rank under each featurizer (mean over seeds); "
        "crossing lines are flips",
        fontsize=11,
    )
    _save(fig, path)
