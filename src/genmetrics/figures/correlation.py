"""The metric × metric correlation heatmap."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from genmetrics.analysis.correlation import POOLED
from genmetrics.analysis.correlation_panels import HeatmapPanels
from genmetrics.analysis.statistics import degenerate_interval
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import matplotlib, plt

#: fewest sources a cell is coloured with: below, r is printed in grey on white (with 5–9
#: points a rank correlation of unrelated scores often reaches ±0.7)
COLOUR_FROM = 10


def correlation_heatmap(
    data: HeatmapPanels,
    path: str | Path,
    bold_from: int = COLOUR_FROM,
    colour_from: int = COLOUR_FROM,
    features: dict[str, str] | None = None,
) -> None:
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
    cell with fewer than ``min_points`` sources scored on both. A cell resting on fewer than
    ``colour_from`` sources gets no colour (r in grey: too few to read as a pattern). The
    scores with no defined correlation (``hidden``: a headline score on too few sources, or
    constant) keep their row and column, greyed, so no headline metric drops out.
    ``features``: entry → "featurizer X", listed under the figure for the entries drawn.
    """
    import textwrap

    scopes, points, hidden = data.scopes, data.points, data.hidden
    names = [*data.names, *hidden]  # the hidden ones kept, greyed, last
    min_points, n_total = data.min_points, data.n_total
    label = data.method.capitalize()
    k = len(names)
    side = max(5.0, 2.2 + 1.05 * max(k - 1, 1))
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
        r, low, high, cnt = (_padded(data.cells[scope][c], k) for c in ("r", "low", "high", "n"))
        rgba = np.ones((k, k, 4))
        for i in range(1, k):
            for j in range(i):
                v = r[i, j]
                if not np.isfinite(v):
                    rgba[i, j] = (0.88, 0.88, 0.88, 1.0)
                    few = np.isfinite(cnt[i, j]) and cnt[i, j] < min_points
                    note = f"too few\n(n={int(cnt[i, j])})" if few else "constant"
                    if not np.isfinite(cnt[i, j]):  # a hidden score: its note under the figure
                        continue
                    ax.text(j, i, note, ha="center", va="center", fontsize=8, color="0.35")
                    continue
                coloured = cnt[i, j] >= colour_from
                rgba[i, j] = cmap(norm(v)) if coloured else (1.0, 1.0, 1.0, 1.0)
                colour = ("white" if abs(v) > 0.6 else "black") if coloured else "0.45"
                lo, hi = low[i, j], high[i, j]
                sure = np.isfinite(lo) and (lo > 0 or hi < 0) and cnt[i, j] >= bold_from
                ax.text(
                    j,
                    i - 0.14,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=10,
                    color=colour,
                    fontweight="bold" if sure else "normal",
                )
                if degenerate_interval(lo, hi):
                    ci = f"n={int(cnt[i, j])}, no interval"
                elif np.isfinite(lo):
                    ci = f"[{lo:.2f}, {hi:.2f}]"
                else:
                    ci = f"n={int(cnt[i, j])}, no interval"
                ax.text(j, i + 0.24, ci, ha="center", va="center", fontsize=7.5, color=colour)
        ax.imshow(rgba, interpolation="nearest", aspect="auto")
        ax.set_xlim(-0.5, k - 1.5)
        ax.set_ylim(k - 0.5, 0.5)
        ax.set_xticks(range(k - 1), names[:-1], rotation=45, ha="right", fontsize=10)
        ax.set_yticks(range(1, k), names[1:], fontsize=10)
        for tick in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
            if tick.get_text() in hidden:
                tick.set_color("0.5")
        ax.spines[:].set_visible(False)
    coloured = any((np.nan_to_num(c["n"], nan=0) >= colour_from).any() for c in data.cells.values())
    if data.cells and k >= 2 and coloured:  # no colour bar where no cell has a colour
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
        f"excludes 0 with ≥ {bold_from} sources; colour only with ≥ {colour_from} sources "
        f"(fewer: r in grey on white); grey cells: too few (under {min_points} sources "
        "scored on both) or a constant score"
    )
    if not data.cells:
        width, legend = 110, f"a correlation needs at least {min_points} scored sources"
    fig.suptitle(
        f"How metric scores move together across {n_total} scored sources "
        f"(model × seed points): {label} correlation\n" + textwrap.fill(legend, int(width * 0.85)),
        fontsize=11,
    )
    notes = []
    if hidden:
        notes.append(
            f"Greyed names: no correlation in any panel (fewer than {min_points} sources "
            f"with both scores, or constant): {', '.join(hidden)}"
        )
    entries = {n.split(".", 1)[0] for n in names}
    feats = sorted(f"{e}: {f}" for e, f in (features or {}).items() if e in entries)
    if feats:
        notes.append("Featurizers/evaluators: " + "; ".join(feats))
    if notes:
        fig.supxlabel("\n".join(textwrap.fill(n, width) for n in notes), fontsize=9)
    _save(fig, path)


def _padded(m: np.ndarray, k: int) -> np.ndarray:
    """``m`` (the drawn scores' matrix) grown to ``k`` × ``k`` with NaN (the hidden scores)."""
    out = np.full((k, k), np.nan)
    out[: m.shape[0], : m.shape[1]] = m
    return out
