"""The FACE surprisal spectra."""

from __future__ import annotations

from pathlib import Path

from genmetrics.analysis.spectra import SpectraPanel
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import panel_grid, plt


def surprisal_spectra(panels: list[SpectraPanel], path: str | Path) -> None:
    """FACE surprisal spectra (Yang et al. 2023; Liu et al. 2025), one panel per dataset of
    :func:`genmetrics.analysis.spectra.spectra_panels`: the human mean spectrum (black) and
    each model's, raw (faint) and smoothed, with the smoothed 95% band of the mean (normal
    approximation, ± 1.96 SD/√n; n texts in each label); log-scaled when every value is
    positive (``value=norm``)."""
    fig, axes = panel_grid(len(panels), 6.4, empty="no face scores configured")
    cmap = plt.get_cmap("tab10")
    p: dict = {}
    entry = "face"
    for ax, panel in zip(axes.flat, panels, strict=False):
        models = 0
        for c in panel.curves:
            if c.reference:
                color = "k"
            else:
                color, models = cmap(models % 10), models + 1
            ax.plot(panel.freq, c.mean, color=color, lw=0.5, alpha=0.3)
            ax.plot(panel.freq, c.smoothed, color=color, lw=1.6, label=c.label)
            ax.fill_between(panel.freq, c.low, c.high, color=color, alpha=0.15)
        if panel.positive:
            ax.set_yscale("log")
        p, entry = panel.params, panel.entry
        ax.set_title(f"dataset: {panel.dataset}", fontsize=10)
        ax.set_xlabel("frequency (cycles per token)")
        ax.set_ylabel("|X(f)|: amplitude" if p.get("value") == "norm" else "Re X(f)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(
        "Spectra of per-token surprisal (FACE, Yang et al. 2023): closer to the human curve = "
        "more human-like fluctuation\nbands: 95% interval of the mean spectrum (± 1.96 SD/√n, "
        "n texts in the legend)\n"
        f"score entry {entry}: value={p.get('value')}, zscore={p.get('zscore')}, "
        f"align={p.get('align')}, method={p.get('method')}, window={p.get('window')}",
        fontsize=10,
    )
    _save(fig, path)
