"""The FACE surprisal spectra, beside what SO ranks (each text's SO)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from genmetrics.analysis.spectra import SpectraPanel
from genmetrics.figures._save import mark_empty
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import OKABE_ITO, plt


def surprisal_spectra(panels: list[SpectraPanel], path: str | Path) -> None:
    """FACE surprisal spectra (Yang et al. 2023; Liu et al. 2025), one row per dataset of
    :func:`genmetrics.analysis.spectra.spectra_panels`. Left: the human mean spectrum (black)
    and each source's, raw (faint) and smoothed, with the smoothed 95% band of the mean
    (normal approximation, ± 1.96 SD/√n; n texts in each label), log-scaled when every value
    is positive (``value=norm``). Right: what SO ranks: each source's per-text SO values
    (dots; pairing by prompt: each text against its prompt's human text) and their mean, the
    score (a bar, the number printed), sources sorted by it; with pairing ``set`` the one SO
    of the two mean curves. SO is a proportion: its axis stays within [0, 1]. Each row's
    titles name the dataset, the evaluator and n."""
    n = max(1, len(panels))
    fig, axes = plt.subplots(
        n,
        2,
        figsize=(13.5, 4.9 * n),
        squeeze=False,
        layout="constrained",
        gridspec_kw={"width_ratios": [1.35, 1]},
    )
    if not panels:
        axes[0, 0].text(0.5, 0.5, "no face scores configured", ha="center", va="center")
        mark_empty(fig, "no face scores configured")
        axes[0, 1].set_visible(False)
    p: dict = {}
    entry = "face"
    for (ax, ax_so), panel in zip(axes, panels, strict=False):
        colours = {}
        for c in panel.curves:
            colour = "k" if c.reference else OKABE_ITO[len(colours) % len(OKABE_ITO)]
            if not c.reference:
                colours[c.label.rsplit(", n=", 1)[0]] = colour
            ax.plot(panel.freq, c.mean, color=colour, lw=0.5, alpha=0.3)
            ax.plot(panel.freq, c.smoothed, color=colour, lw=1.6, label=c.label)
            ax.fill_between(panel.freq, c.low, c.high, color=colour, alpha=0.15)
        if panel.positive:
            ax.set_yscale("log")
        p, entry = panel.params, panel.entry
        n_ref = next((c.n for c in panel.curves if c.reference), 0)
        feature = panel.feature or "evaluator not recorded"
        ax.set_title(
            f"dataset {panel.dataset}, entry {entry} ({feature}): mean spectra\n"
            f"human n = {n_ref} texts; each source's n in the legend",
            fontsize=10,
        )
        ax.set_xlabel("frequency (cycles per token)")
        ax.set_ylabel("|X(f)|: amplitude" if p.get("value") == "norm" else "Re X(f)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
        rng = np.random.default_rng(0)  # jitter of the dots only
        for i, v in enumerate(panel.so):
            colour = colours.get(v.label, "0.4")
            ax_so.barh(i, v.so, color=colour, alpha=0.35, edgecolor=colour, height=0.7)
            y = i + rng.uniform(-0.25, 0.25, size=len(v.values))
            ax_so.scatter(v.values, y, s=9, color=colour, alpha=0.7, lw=0, clip_on=False)
            ax_so.text(
                0.02,
                i + 0.36,
                f"SO = {v.so:.3f} (n = {len(v.values)})",
                fontsize=7.5,
                va="bottom",
                ha="left",
                transform=ax_so.get_yaxis_transform(),
            )
        ax_so.set_yticks(range(len(panel.so)), [v.label for v in panel.so], fontsize=8)
        ax_so.set_ylim(len(panel.so) - 0.4, -0.7)
        ax_so.set_xlim(0, 1)
        ax_so.set_xlabel("SO (spectral overlap with the human texts; higher: more human-like)")
        pairing = {v.pairing for v in panel.so}
        how = (
            "dots: each text's SO against its prompt's human text; bar: their mean, the score"
            if pairing == {"prompt"}
            else "one SO per source: the overlap of its mean curve with the human one"
        )
        ax_so.set_title(f"what the score ranks (best first)\n{how}", fontsize=10)
        ax_so.grid(axis="x", alpha=0.3)
    fig.suptitle(
        "Spectra of per-token surprisal (FACE, Yang et al. 2023). Left: mean spectra, not what "
        "SO scores; right: SO, the score\nbands: 95% interval of the mean spectrum "
        "(± 1.96 SD/√n). "
        f"Entry {entry}: value={p.get('value')}, zscore={p.get('zscore')}, "
        f"align={p.get('align')}, method={p.get('method')}, window={p.get('window')}",
        fontsize=10,
    )
    _save(fig, path)
