"""The metric × metric correlation heatmap."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from genmetrics.analysis.correlation import POOLED
from genmetrics.analysis.correlation_panels import HeatmapPanels
from genmetrics.analysis.statistics import degenerate_interval
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import matplotlib, plt


def correlation_heatmap(data: HeatmapPanels, path: str | Path, bold_from: int = 10) -> None:
    """One heatmap panel per scope of
    :func:`genmetrics.analysis.correlation_panels.heatmap_panels` (each dataset, then
    ``pooled``): lower triangle, −1 blue … +1 red (RdBu, colour-blind safe), each cell
    annotated with r and, smaller, its bootstrap interval; the scores with no defined
    correlation in any drawn panel are listed under the figure. r is in bold when its
    interval excludes 0 and it rests on at least ``bold_from`` sources (with fewer, the
    bootstrap itself is unreliable: a perfect ±1 stays ±1 in every resample). An interval of
    zero width (:func:`~genmetrics.analysis.statistics.degenerate_interval`, e.g. [1, 1]) is
    not printed as one: the cell says "n=…, no interval". A scope with fewer than
    ``min_points`` sources says "too few" in words instead of drawing a matrix, and so does a
    cell with fewer than ``min_points`` sources scored on both.
    """
    import textwrap

    scopes, points, names, hidden = data.scopes, data.points, data.names, data.hidden
    min_points, n_total = data.min_points, data.n_total
    label = data.method.capitalize()
    k = len(names)
    side = max(4.5, 1.8 + 0.8 * max(k - 1, 1))
    ncols = max(1, int(np.ceil(np.sqrt(len(scopes)))))  # panels in a near-square grid
    nrows = max(1, -(-len(scopes) // ncols))
    fig, axes = plt.subplots(
        nrows,
        ncols,
        # nothing drawn (every panel too few): one line of words per panel
        figsize=(side * ncols + 1.4, side * nrows + 1.2) if data.cells else (9.0, 1.2 + nrows),
        squeeze=False,
        layout="constrained",
    )
    cmap = plt.get_cmap("RdBu_r")
    norm = matplotlib.colors.Normalize(vmin=-1, vmax=1)
    for ax in axes.flat[len(scopes) :]:
        ax.set_axis_off()
    if not scopes:
        axes[0, 0].text(0.5, 0.5, "no scores to correlate", ha="center", va="center")
        axes[0, 0].set_axis_off()
    for ax, scope in zip(axes.flat, scopes, strict=False):
        n = points[scope]
        what = f"{n} scored sources" if n != 1 else "1 scored source"
        if scope == POOLED:
            title = f"All datasets pooled: {what}\n(each score z-scored within its dataset)"
        else:
            title = f"Dataset {scope}: {what}"
        ax.set_title(title, fontsize=11)
        if n < min_points or k < 2:
            reason = (
                f"{what}: too few for a correlation (need ≥ {min_points})"
                if n < min_points
                else "no pair of scores with a defined correlation"
            )
            ax.text(0.5, 0.5, reason, ha="center", va="center", fontsize=11)
            ax.set_axis_off()
            continue
        r, low, high, cnt = (data.cells[scope][c] for c in ("r", "low", "high", "n"))
        rgba = np.ones((k, k, 4))
        for i in range(1, k):
            for j in range(i):
                v = r[i, j]
                if not np.isfinite(v):
                    rgba[i, j] = (0.88, 0.88, 0.88, 1.0)
                    few = np.isfinite(cnt[i, j]) and cnt[i, j] < min_points
                    note = f"too few\n(n={int(cnt[i, j])})" if few else "constant"
                    ax.text(j, i, note, ha="center", va="center", fontsize=6.5, color="0.35")
                    continue
                rgba[i, j] = cmap(norm(v))
                colour = "white" if abs(v) > 0.6 else "black"
                lo, hi = low[i, j], high[i, j]
                sure = np.isfinite(lo) and (lo > 0 or hi < 0) and cnt[i, j] >= bold_from
                ax.text(
                    j,
                    i - 0.14,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8.5,
                    color=colour,
                    fontweight="bold" if sure else "normal",
                )
                if degenerate_interval(lo, hi):
                    ci = f"n={int(cnt[i, j])}, no interval"
                elif np.isfinite(lo):
                    ci = f"[{lo:.2f}, {hi:.2f}]"
                else:
                    ci = f"n={int(cnt[i, j])}, no interval"
                ax.text(j, i + 0.24, ci, ha="center", va="center", fontsize=6.2, color=colour)
        ax.imshow(rgba, interpolation="nearest", aspect="auto")
        ax.set_xlim(-0.5, k - 1.5)
        ax.set_ylim(k - 0.5, 0.5)
        ax.set_xticks(range(k - 1), names[:-1], rotation=45, ha="right", fontsize=9)
        ax.set_yticks(range(1, k), names[1:], fontsize=9)
        ax.spines[:].set_visible(False)
    if data.cells and k >= 2:
        fig.colorbar(
            matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap),
            ax=axes.ravel().tolist(),
            shrink=0.5,
            label=f"{label} correlation (−1: opposite, 0: unrelated, +1: together)",
        )
    width = 40 + int(14 * side * ncols)  # characters that fit the figure's width
    legend = (
        "each cell: correlation and, below, its 95% percentile-bootstrap interval over the "
        'sources ("no interval": every resample gave the same value); bold: the interval '
        f"excludes 0 with ≥ {bold_from} sources; grey: too few (under {min_points} sources "
        "scored on both) or a constant score"
    )
    if not data.cells:
        width, legend = 110, f"a correlation needs at least {min_points} scored sources"
    fig.suptitle(
        f"How metric scores move together across {n_total} scored sources "
        f"(model × seed points): {label} correlation\n" + textwrap.fill(legend, int(width * 0.85)),
        fontsize=11,
    )
    if hidden:
        note = (
            f"Not shown (fewer than {min_points} sources with both scores, or constant, "
            f"in every panel): {', '.join(hidden)}"
        )
        fig.supxlabel(textwrap.fill(note, width), fontsize=9)
    _save(fig, path)
