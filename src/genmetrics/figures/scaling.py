"""FACE-2's scaling check: does a metric rank bigger models higher?"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from genmetrics.analysis.scaling import ValidCells
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import plt


def valid_cell_figure(data: ValidCells, path: str | Path) -> None:
    """FACE-2's scaling check as a figure (Liu et al. 2025, Table 2), from
    :func:`genmetrics.analysis.scaling.valid_cells`: per metric, the share of (family ×
    dataset) cells where it orders models by size; a dot per evaluator LM, a bar for their
    mean with its 95% paired-bootstrap interval, the random baseline dashed."""
    summary, baseline = data.summary, data.baseline
    n = len(summary)
    fig, ax = plt.subplots(figsize=(8.0, 1.2 + 0.32 * max(n, 1)))
    if n == 0:
        ax.text(0.5, 0.5, "no metric has a complete (family, dataset) cell", ha="center")
    y = np.arange(n)
    ax.barh(y, summary["mean"].fillna(0), color="#9ecae1", label="mean over evaluators")
    cmap = plt.get_cmap("tab10")
    k = 0
    for ev, ratio in data.ratios:
        if ev is None:
            color, label = "k", "text metric (no LM)"
        else:
            color, label, k = cmap(k % 10), f"evaluator/featurizer: {ev}", k + 1
        ax.plot(ratio, y, "o", color=color, ms=4, label=label)
    for i, m in enumerate(summary["metric"]):
        lo_hi = data.intervals.get(m)
        if lo_hi is not None:
            ax.plot(lo_hi, [i, i], color="k", lw=1.2)
    ax.axvline(baseline, ls="--", color="grey", label=f"random ({baseline:.2f})")
    ax.set_yticks(y)
    ax.set_yticklabels(summary["metric"], fontsize=7)
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("valid-cell ratio: share of (family × dataset) cells ordered larger ≻ smaller")
    ax.set_title(f"Does the metric rank bigger models higher? ({data.cells} cells; FACE-2 check)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    _save(fig, path)
