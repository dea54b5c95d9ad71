"""The paired model × model matrix of one dataset: in cell (row A, column B) the number of
headline values on which A is significantly better than B (Holm-adjusted paired p below
:data:`genmetrics.analysis.paired.ALPHA`; in brackets, Benjamini–Hochberg-adjusted), from
:func:`genmetrics.analysis.paired.wins`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from genmetrics.analysis.paired import ALPHA, wins
from genmetrics.figures._save import mark_empty
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import plt


def paired_matrix_figure(table: pd.DataFrame, dataset: str, path: str | Path) -> None:
    """Draw the matrix of ``dataset`` (the paired table's rows of it) to ``path``: cell
    colour and number, the values where the row's model is significantly better than the
    column's; the title gives how many values each pair was tested on."""
    models, w, tested = wins(table, dataset)
    bh = wins(table, dataset, "p_bh")[1]
    n = max(len(models), 1)
    fig, ax = plt.subplots(figsize=(1.6 + 1.1 * n, 1.2 + 0.9 * n))
    if not models:
        ax.text(0.5, 0.5, f"{dataset}: fewer than two models to compare", ha="center")
        ax.set_axis_off()
        mark_empty(fig, f"{dataset}: fewer than two models to compare")
        _save(fig, path)
        return
    shown = np.where(np.eye(len(models), dtype=bool), np.nan, w.astype(float))
    im = ax.imshow(shown, cmap="Blues", vmin=0, vmax=max(tested, 1))
    for i in range(len(models)):
        for j in range(len(models)):
            if i == j:
                ax.text(j, i, "—", ha="center", va="center", color="0.5")
                continue
            dark = w[i, j] > 0.6 * max(tested, 1)
            colour = "white" if dark else "black"
            text = f"{w[i, j]}\n(BH {bh[i, j]})"
            ax.text(j, i, text, ha="center", va="center", color=colour)
    ax.set_xticks(range(len(models)), models, rotation=30, ha="right")
    ax.set_yticks(range(len(models)), models)
    ax.set_xlabel("model B (column)")
    ax.set_ylabel("model A (row) better than B")
    ax.set_title(
        f"{dataset}: values where A is better than B\n(paired; Holm p < {ALPHA}, in "
        f"brackets Benjamini–Hochberg's;\n{tested} values tested per pair)",
        fontsize=10,
    )
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="values")
    _save(fig, path)
