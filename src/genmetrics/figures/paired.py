"""The paired model × model matrix of one dataset: in cell (row A, column B) the number of
headline values on which A is significantly better than B (Holm-adjusted paired p below
:data:`genmetrics.analysis.paired.ALPHA`; in brackets, Benjamini–Hochberg-adjusted), from
:func:`genmetrics.analysis.paired.wins`. A pair tested on no value says "not tested" (a
count of 0 would read as "never better"); when no pair is tested, the figure says why (the
paired table's note, e.g. sets drawn on different prompts)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from genmetrics.analysis.paired import ALPHA, wins
from genmetrics.figures._save import mark_empty
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import plt

NOT_TESTED = "not\ntested"


def cell_labels(table: pd.DataFrame, dataset: str) -> tuple[list[str], np.ndarray, int, str]:
    """The models of ``dataset``, each cell's text (``"W\\n(BH W')"``, :data:`NOT_TESTED`
    for a pair with no tested value, ``"—"`` on the diagonal), the values tested per pair
    (the most) and, when no pair was tested, why (the paired table's most frequent note)."""
    models, _, labels, tested, why = _cells(table, dataset)
    return models, labels, tested, why


def _cells(table: pd.DataFrame, dataset: str) -> tuple[list[str], np.ndarray, np.ndarray, int, str]:
    """:func:`cell_labels` with the Holm win counts (the cells' colour) beside the labels."""
    models, w, tested = wins(table, dataset)
    bh = wins(table, dataset, "p_bh")[1]
    t = table[table["dataset"] == dataset]
    done = {
        frozenset((a, b))
        for a, b in t.dropna(subset=["p"])[["model_a", "model_b"]].itertuples(index=False)
    }
    labels = np.empty((len(models), len(models)), dtype=object)
    for i, a in enumerate(models):
        for j, b in enumerate(models):
            if i == j:
                labels[i, j] = "—"
            elif frozenset((a, b)) not in done:
                labels[i, j] = NOT_TESTED
            else:
                labels[i, j] = f"{w[i, j]}\n(BH {bh[i, j]})"
    why = ""
    if tested == 0 and "note" in t and t["note"].notna().any():
        why = str(t["note"].dropna().mode().iloc[0])
    return models, w, labels, tested, why


def paired_matrix_figure(table: pd.DataFrame, dataset: str, path: str | Path) -> None:
    """Draw the matrix of ``dataset`` (the paired table's rows of it) to ``path``: cell
    colour and number, the values where the row's model is significantly better than the
    column's; the title gives how many values each pair was tested on."""
    models, w, labels, tested, why = _cells(table, dataset)
    n = max(len(models), 1)
    fig, ax = plt.subplots(figsize=(1.6 + 1.1 * n, 1.2 + 0.9 * n))
    if not models:
        ax.text(0.5, 0.5, f"{dataset}: fewer than two models to compare", ha="center")
        ax.set_axis_off()
        mark_empty(fig, f"{dataset}: fewer than two models to compare")
        _save(fig, path)
        return
    if tested == 0:
        text = f"{dataset}: no pair of models could be tested\n({why or 'no paired p-value'})"
        ax.text(0.5, 0.5, text, ha="center", va="center")
        ax.set_axis_off()
        _save(fig, path)
        return
    untested = labels == NOT_TESTED
    shown = np.where(np.eye(len(models), dtype=bool) | untested, np.nan, w.astype(float))
    im = ax.imshow(shown, cmap="Blues", vmin=0, vmax=max(tested, 1))
    for i in range(len(models)):
        for j in range(len(models)):
            if i == j or untested[i, j]:
                colour = "0.5"
            else:
                colour = "white" if w[i, j] > 0.6 * max(tested, 1) else "black"
            ax.text(j, i, labels[i, j], ha="center", va="center", color=colour)
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
