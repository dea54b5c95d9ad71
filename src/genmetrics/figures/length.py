"""Which scores follow text length (Shaib et al. 2024, §5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.transforms import blended_transform_factory

from genmetrics.analysis.statistics import MIN_CORRELATION_POINTS, degenerate_interval
from genmetrics.figures._save import mark_empty
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import plt

_BOX = {"facecolor": "white", "edgecolor": "none", "pad": 1.5}


def _column(corr: pd.DataFrame, name: str, default) -> np.ndarray:
    return corr[name].to_numpy() if name in corr.columns else np.full(len(corr), default)


def length_figure(
    corr: pd.DataFrame, path: str | Path, n_sources: int, min_sources: int | None = None
) -> None:
    """Spearman ρ of each score with the mean text length across sources, from the table of
    :func:`genmetrics.analysis.length.length_correlation` (every row, undefined ones too): a
    bar per score with its interval (``spearman_low``/``high``: 95% Fisher z, Bonett–Wright)
    as whiskers, ``n`` beside its name and ρ with the interval printed right of the axes.
    A score over fewer than ``min_sources`` sources (default
    :data:`~genmetrics.analysis.statistics.MIN_CORRELATION_POINTS`) gets the words "too few
    sources" instead of a bar, a constant one "constant", and a perfect ρ = ±1 (whose
    interval is degenerate) "no interval"."""
    min_sources = MIN_CORRELATION_POINTS if min_sources is None else int(min_sources)
    rho = pd.to_numeric(corr["spearman"], errors="coerce").to_numpy(float) if len(corr) else []
    rho = np.asarray(rho, dtype=float)
    # bottom up: the undefined rows, then ρ ascending (the largest ρ on top)
    order = np.lexsort((np.nan_to_num(rho, nan=0.0), np.isfinite(rho)))
    corr = corr.iloc[order]
    rho = rho[order]
    n = _column(corr, "n", np.nan).astype(float)
    low = _column(corr, "spearman_low", np.nan).astype(float)
    high = _column(corr, "spearman_high", np.nan).astype(float)
    few = _column(corr, "too_few", False).astype(bool) | (np.isfinite(n) & (n < min_sources))
    flat = _column(corr, "constant", False).astype(bool)
    fig, ax = plt.subplots(figsize=(9.0, 1.3 + 0.34 * max(len(corr), 1)))
    y = np.arange(len(corr))
    names = [
        f"{score}  (n={int(k)})" if np.isfinite(k) else str(score)
        for score, k in zip(corr.index, n, strict=True)
    ]
    shown = np.isfinite(rho) & ~few
    whisker = shown & np.isfinite(low) & ~degenerate_interval(low, high)
    ax.barh(
        y[shown],
        rho[shown],
        color=np.where(rho[shown] > 0, "#c0504d", "#4f81bd"),
        height=0.6,
    )
    ax.errorbar(
        rho[whisker],
        y[whisker],
        xerr=np.vstack([rho[whisker] - low[whisker], high[whisker] - rho[whisker]]),
        fmt="none",
        ecolor="black",
        capsize=3,
        lw=1.0,
    )
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for i in range(len(corr)):
        if few[i]:
            note = f"too few sources for a correlation (n = {int(n[i])} < {min_sources})"
            ax.text(0, y[i], note, ha="center", va="center", fontsize=8, color="0.35", bbox=_BOX)
            continue
        if flat[i] or not np.isfinite(rho[i]):
            note = "constant: no correlation"
            ax.text(0, y[i], note, ha="center", va="center", fontsize=8, color="0.35", bbox=_BOX)
            continue
        if whisker[i]:
            label = f"ρ = {rho[i]:+.2f}  [{low[i]:+.2f}, {high[i]:+.2f}]"
        elif degenerate_interval(low[i], high[i]):
            label = f"ρ = {rho[i]:+.2f}  (no interval: a perfect ρ)"
        else:
            label = f"ρ = {rho[i]:+.2f}  (no interval)"
        ax.text(1.02, y[i], label, transform=right, ha="left", va="center", fontsize=8)
    if not len(corr):
        ax.text(0, 0, "no score reports the mean length (mean_words)", ha="center", va="center")
        mark_empty(fig, "no score reports the mean length (mean_words)")
    ax.set_yticks(y, names, fontsize=8)
    ax.set_ylim(-0.7, max(len(corr), 1) - 0.3)
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Spearman ρ with the mean length in words (across sources; −1 … +1)")
    ax.set_title(
        f"Which scores follow text length? {n_sources} scored sources (Shaib et al. 2024, §5)\n"
        "bars: Spearman ρ; whiskers: 95% interval (Fisher z, Bonett–Wright); "
        f"n: sources with the score; fewer than {min_sources}: too few",
        fontsize=9,
    )
    ax.grid(axis="x", alpha=0.3)
    _save(fig, path)
