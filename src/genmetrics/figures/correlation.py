"""The metric × metric correlation heatmap."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from genmetrics.analysis.correlation import POOLED
from genmetrics.analysis.correlation_panels import HeatmapPanels
from genmetrics.analysis.statistics import degenerate_interval
from genmetrics.figures._save import DPI, mark_empty
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import matplotlib, plt

#: fewest sources a cell is coloured with: below, r is printed in grey on white (with 5–9
#: points a rank correlation of unrelated scores often reaches ±0.7)
COLOUR_FROM = 10
#: the longest side of the saved figure, in pixels at :data:`genmetrics.figures._save.DPI`
MAX_PIXELS = 2400
#: a cell's side in inches: the widest (few scores), and the narrowest that holds r and its
#: interval (10 and 7.5 pt) or r alone (8–13 pt, with the cell); narrower cells are colour only
CELL_MAX, CELL_INTERVAL, CELL_R = 1.05, 1.0, 0.45


def cell_inches(k: int, nrows: int, ncols: int, longest: int) -> float:
    """The side of one cell: :data:`CELL_MAX`, or less where ``nrows`` × ``ncols`` panels of
    ``k − 1`` cells (and their score names of ``longest`` characters, the colour bar and the
    titles) would be wider or taller than :data:`MAX_PIXELS`."""
    cap = MAX_PIXELS / DPI
    labels = 0.35 + 0.075 * longest  # a panel's score names beside it (10 pt)
    across = (cap - 1.6 - ncols * (labels + 0.3)) / (ncols * max(k - 1, 1))
    down = (cap - 2.2 - nrows * (0.75 * labels + 0.6)) / (nrows * max(k - 1, 1))
    return max(0.05, min(CELL_MAX, across, down))


def correlation_heatmap(
    data: HeatmapPanels,
    path: str | Path,
    bold_from: int = COLOUR_FROM,
    colour_from: int = COLOUR_FROM,
    features: dict[str, str] | None = None,
) -> None:
    """One heatmap panel per scope of
    :func:`genmetrics.analysis.correlation_panels.heatmap_panels` (each dataset, then
    ``pooled``): lower triangle, −1 blue … +1 red (RdBu, colour-blind safe). The scores with
    no defined correlation in any drawn panel (``hidden``: fewer than ``min_points`` sources,
    or constant) leave the matrix and are listed under it. The figure stays within
    :data:`MAX_PIXELS` on a side: its cells shrink (:func:`cell_inches`) and what they print
    follows their size, never a smaller font: r and, smaller, its bootstrap interval (cells
    of at least :data:`CELL_INTERVAL` inches); r alone (at least :data:`CELL_R`); else colour
    alone, with a dot where r would be bold. The subtitle says which. r is in bold when its
    interval excludes 0 and it rests on at least ``bold_from`` sources (with fewer, the
    bootstrap itself is unreliable: a perfect ±1 stays ±1 in every resample). An interval of
    zero width (:func:`~genmetrics.analysis.statistics.degenerate_interval`, e.g. [1, 1]) is
    not printed as one: the cell says "n=…, no interval". A scope with fewer than
    ``min_points`` sources says "too few" in words instead of drawing a matrix; a cell with
    fewer than ``min_points`` sources scored on both is grey. A cell resting on fewer than
    ``colour_from`` sources gets no colour (r in grey: too few to read as a pattern).
    ``features``: entry → "featurizer X", listed under the figure for the entries drawn.
    """
    scopes, points, hidden, names = data.scopes, data.points, data.hidden, data.names
    min_points, n_total = data.min_points, data.n_total
    label = data.method.capitalize()
    k = len(names)
    ncols = max(1, int(np.ceil(np.sqrt(len(scopes)))))  # panels in a near-square grid
    nrows = max(1, -(-len(scopes) // ncols))
    longest = max((len(n) for n in names), default=1)
    cell = cell_inches(k, nrows, ncols, longest)
    mode = "interval" if cell >= CELL_INTERVAL else "r" if cell >= CELL_R else "colour"
    labels_in = 0.35 + 0.075 * longest
    side = max(4.2, labels_in + cell * max(k - 1, 1))
    drawn = bool(data.cells) and k >= 2
    fig, axes = plt.subplots(
        nrows,
        ncols,
        # nothing drawn (every panel too few): one line of words per panel
        figsize=(side * ncols + 1.6, side * nrows + 1.6) if drawn else (9.0, 1.2 + nrows),
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
    if not drawn:  # every panel too few (or nothing to correlate): words, no matrix
        mark_empty(fig, "no correlation: every panel has too few sources or scores")
    tick_pt = float(np.clip(cell * 72 * 0.7, 7.0, 10.0))
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
        _panel(ax, data.cells[scope], k, cell, mode, cmap, norm, bold_from, colour_from, min_points)
        ax.set_xlim(-0.5, k - 1.5)
        ax.set_ylim(k - 0.5, 0.5)
        ax.set_xticks(range(k - 1), names[:-1], rotation=45, ha="right", fontsize=tick_pt)
        ax.set_yticks(range(1, k), names[1:], fontsize=tick_pt)
        ax.spines[:].set_visible(False)
    coloured = any((np.nan_to_num(c["n"], nan=0) >= colour_from).any() for c in data.cells.values())
    if drawn and coloured:  # no colour bar where no cell has a colour
        fig.colorbar(
            matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap),
            ax=axes.ravel().tolist(),
            shrink=0.5,
            label=f"{label} correlation (−1: opposite, 0: unrelated, +1: together)",
        )
    width = int(13 * (side * ncols + 1.6)) if drawn else 110  # characters across the figure
    fig.suptitle(
        f"How metric scores move together across {n_total} scored sources "
        f"(model × seed points): {label} correlation\n"
        + textwrap.fill(_legend(data, mode, bold_from, colour_from), width),
        fontsize=11,
    )
    notes = []
    if hidden:
        notes.append(
            f"Not in the matrix: no correlation in any panel (fewer than {min_points} sources "
            f"with both scores, or constant): {', '.join(hidden)}"
        )
    entries = {n.split(".", 1)[0] for n in [*names, *hidden]}
    feats = sorted(f"{e}: {f}" for e, f in (features or {}).items() if e in entries)
    if feats:
        notes.append("Featurizers/evaluators: " + "; ".join(feats))
    if notes:
        fig.supxlabel("\n".join(textwrap.fill(n, width) for n in notes), fontsize=9)
    _save(fig, path)


def _legend(data: HeatmapPanels, mode: str, bold_from: int, colour_from: int) -> str:
    """The subtitle: what a cell shows at this figure's scale, and the colour rules."""
    if not data.cells:
        return f"a correlation needs at least {data.min_points} scored sources"
    rules = (
        f"colour only with ≥ {colour_from} sources (fewer: white); grey cells: too few (under "
        f"{data.min_points} sources scored on both) or a constant score"
    )
    if mode == "interval":
        return (
            "each cell: correlation and, below, its 95% percentile-bootstrap interval over the "
            'sources ("no interval": every resample gave the same value); bold: the interval '
            f"excludes 0 with ≥ {bold_from} sources; r in grey on white with fewer than "
            f"{colour_from} sources; " + rules
        )
    dropped = (
        "too many cells to print their 95% bootstrap intervals (they are in "
        "analysis/metric_correlation.csv)"
    )
    if mode == "r":
        return (
            f"each cell: the correlation ({dropped}); bold: the interval excludes 0 with "
            f"≥ {bold_from} sources; r in grey on white with fewer than {colour_from} "
            "sources; " + rules
        )
    return (
        f"too many cells to print numbers: colour only (r and its interval are in "
        f"analysis/metric_correlation.csv); a dot: the 95% interval excludes 0 with ≥ "
        f"{bold_from} sources; " + rules
    )


def _panel(ax, cells, k, cell, mode, cmap, norm, bold_from, colour_from, min_points) -> None:
    """One panel's lower triangle: the colours, and the texts ``mode`` allows (r alone: in a
    font that grows with the ``cell``'s side in inches, 8 to 13 pt)."""
    r_pt = float(np.clip(cell * 72 * 0.3, 8.0, 13.0))
    r, low, high, cnt = (cells[c] for c in ("r", "low", "high", "n"))
    rgba = np.ones((k, k, 4))
    for i in range(1, k):
        for j in range(i):
            v = r[i, j]
            if not np.isfinite(v):
                rgba[i, j] = (0.88, 0.88, 0.88, 1.0)
                if mode == "colour":
                    continue
                few = np.isfinite(cnt[i, j]) and cnt[i, j] < min_points
                note = f"too few\n(n={int(cnt[i, j])})" if few else "constant"
                ax.text(j, i, note, ha="center", va="center", fontsize=8, color="0.35")
                continue
            coloured = cnt[i, j] >= colour_from
            rgba[i, j] = cmap(norm(v)) if coloured else (1.0, 1.0, 1.0, 1.0)
            colour = ("white" if abs(v) > 0.6 else "black") if coloured else "0.45"
            lo, hi = low[i, j], high[i, j]
            sure = np.isfinite(lo) and (lo > 0 or hi < 0) and cnt[i, j] >= bold_from
            if mode == "colour":
                if sure:
                    ax.plot(j, i, "o", ms=3, color=colour)
                continue
            weight = "bold" if sure else "normal"
            if mode == "r":
                ax.text(
                    j,
                    i,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=r_pt,
                    color=colour,
                    fontweight=weight,
                )
                continue
            ax.text(
                j,
                i - 0.14,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=10,
                color=colour,
                fontweight=weight,
            )
            if degenerate_interval(lo, hi) or not np.isfinite(lo):
                ci = f"n={int(cnt[i, j])}, no interval"
            else:
                ci = f"[{lo:.2f}, {hi:.2f}]"
            ax.text(j, i + 0.24, ci, ha="center", va="center", fontsize=7.5, color=colour)
    ax.imshow(rgba, interpolation="nearest", aspect="auto")
