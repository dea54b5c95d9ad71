"""FACE-2's scaling check: does a metric rank bigger models higher? The valid-cell figure and
the GAM-smoothed spectra per model size."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from genmetrics.analysis.statistics import degenerate_interval
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import panel_grid, plt
from genmetrics.studies.face2_scaling.smoothed_spectra import SmoothedSpectra
from genmetrics.studies.face2_scaling.valid_cells import ValidCells


def valid_cell_figure(data: ValidCells, path: str | Path) -> None:
    """FACE-2's scaling check as a figure (Liu et al. 2025, Table 2), from
    :func:`genmetrics.studies.face2_scaling.valid_cells.valid_cells`: per metric, the share of (family ×
    dataset) cells where it orders models by size; a dot per evaluator LM, a bar for their
    mean with its 95% paired-bootstrap interval over prompts (a zero-width interval, every
    resample agreeing, says "no interval" instead), the random baseline dashed; the title
    gives the number of cells."""
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
    shown = False
    names = list(summary["metric"])
    for i, m in enumerate(summary["metric"]):
        lo_hi = data.intervals.get(m)
        if lo_hi is None:
            continue
        if degenerate_interval(*lo_hi):  # every resample agrees: no interval to draw
            names[i] = f"{m} (no interval: every resample agrees)"
            continue
        label = None if shown else "95% paired bootstrap over prompts"
        ax.plot(lo_hi, [i, i], color="k", lw=1.2, label=label)
        shown = True
    ax.axvline(baseline, ls="--", color="grey", label=f"random ({baseline:.2f})")
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=7)
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("valid-cell ratio: share of (family × dataset) cells ordered larger ≻ smaller")
    cells = f"{data.cells} cell{'s' * (data.cells != 1)}"
    note = ": one evaluator's ratio is 0 or 1" if data.cells == 1 else ""
    ax.set_title(
        f"Does the metric rank bigger models higher? (FACE-2 check)\n"
        f"n = {cells} (family × dataset){note}",
        fontsize=10,
    )
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, path)


#: one sequential colour map per family (cycled), light = smaller, dark = larger
FAMILY_CMAPS = ("Blues", "Oranges", "Greens", "Purples", "Reds", "Greys")


def _shade(size: float, sizes: list[float]) -> float:
    """Position of ``size`` on its family's colour map by log size: 0.4 (smallest) … 0.95."""
    lo, hi = np.log(min(sizes)), np.log(max(sizes))
    return 0.95 if hi == lo else 0.4 + 0.55 * (np.log(size) - lo) / (hi - lo)


def smoothed_spectra_figure(data: SmoothedSpectra, path: str | Path) -> None:
    """FACE-2's Figure 5 (Liu et al. 2025) from
    :func:`genmetrics.studies.face2_scaling.smoothed_spectra.spectra_gam_panels`: one panel per dataset, a
    GAM-smoothed spectrum per model with its 95% band, coloured by size within each family
    (one sequential colour map per family, light = smaller), the human texts in black."""
    panels = data.panels
    fig, axes = panel_grid(len(panels), 6.6, empty="no spectra to smooth")
    fams = list(data.families)
    p = data.params
    units = "unitless" if p.get("zscore") or p.get("log") else "nats"
    what = "|X(f)|" if p.get("value") == "norm" else "Re X(f)"
    prep = "z-scored surprisal" if p.get("zscore") else "surprisal"
    for ax, panel in zip(axes.flat, panels, strict=False):
        for c in panel.curves:
            g = c.gam
            if c.family is None:
                color, lw, z = "k", 2.0, 3
            else:
                sizes = [float(s) for s in data.families[c.family].values()]
                cmap = plt.get_cmap(FAMILY_CMAPS[fams.index(c.family) % len(FAMILY_CMAPS)])
                color, lw, z = cmap(_shade(float(c.size), sizes)), 1.6, 2
            ax.fill_between(g.x, g.low, g.high, color=color, alpha=0.18, lw=0, zorder=z)
            ax.plot(g.x, g.fit, color=color, lw=lw, zorder=z, label=f"{c.label}, n={g.n_texts}")
        ax.set_title(f"dataset: {panel.dataset}", fontsize=10)
        ax.set_xlabel("frequency (cycles per token)")
        ax.set_ylabel(f"{what} of the {prep} ({units})")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, title="model (family: size)", title_fontsize=7)
    gam = data.gam
    alphas = list(gam["alphas"])
    evaluator = f", evaluator {data.evaluator}" if data.evaluator else ""
    fig.suptitle(
        f"Surprisal spectra per model size, GAM-smoothed (as FACE-2, Fig. 5): entry "
        f"{data.entry}{evaluator}, convention={p.get('convention')}, {what} of the {prep}\n"
        f"GAM spectrum ~ s(frequency): cubic B-splines ({gam['df']} basis functions), "
        f"roughness penalty by {gam['folds']}-fold cross-validation over texts "
        f"({len(alphas)} weights, {min(alphas):.0e}…{max(alphas):.0e})\n"
        f"fitted to every text's spectrum at {gam['frequencies']} of the 1,000 frequencies "
        f"(0 left out); bands: {gam['level']:.0%} CI of the fit; n: texts; size: billions of "
        "parameters or the configured order",
        fontsize=9,
    )
    _save(fig, path)
