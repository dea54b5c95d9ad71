"""Which scores follow text length (Shaib et al. 2024, §5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from genmetrics.figures._save import save as _save
from genmetrics.figures._style import plt


def length_figure(corr: pd.DataFrame, path: str | Path, n_sources: int) -> None:
    """Spearman correlation of each score with mean text length across sources (the table of
    :func:`genmetrics.analysis.length.length_analysis`, undefined rows dropped)."""
    corr = corr.sort_values("spearman")
    fig, ax = plt.subplots(figsize=(6.5, 0.6 + 0.28 * max(len(corr), 1)))
    ax.barh(
        corr.index.astype(str),
        corr["spearman"],
        color=np.where(corr["spearman"] > 0, "#c0504d", "#4f81bd"),
    )
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Spearman correlation with mean length in words (across sources)")
    ax.set_title(f"Which scores follow text length? ({n_sources} sources; Shaib et al. 2024)")
    _save(fig, path)
