"""OmniInput model comparison (Liu et al. §3.3): each model's mean PR curve over sampler seeds
with a min–max band, one figure per sequence length."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics.figures._save import save as _save
from genmetrics.figures._style import plt


def omniinput_compare_figure(
    curves: Mapping[str, Mapping[str, np.ndarray]],
    rows: Sequence[Mapping[str, Any]],
    path: str | Path,
    subtitle: str = "",
) -> None:
    """Left: precision against recall, each model's mean curve over seeds (line) and the
    min–max of precision over seeds (band); right: precision against the threshold λ on z.
    ``curves`` from :func:`genmetrics.studies.omniinput_compare.compare.mean_curve` per run; ``rows`` from
    :func:`~genmetrics.studies.omniinput_compare.compare.comparison_rows` (AUPR in the legend)."""
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.6), constrained_layout=True)
    colors = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
    by_run = {r["run"]: r for r in rows}
    for k, (run, c) in enumerate(curves.items()):
        color, r = colors[k % len(colors)], by_run[run]
        ok = np.isfinite(c["precision"]) & np.isfinite(c["recall"])
        label = (
            f"{r['model']}: AUPR {r['aupr_mean']:.3f} (min–max {r['aupr_min']:.3f}–"
            f"{r['aupr_max']:.3f}, n = {r['n_seeds']} seeds)"
        )
        axes[0].plot(c["recall"][ok], c["precision"][ok], "-o", ms=3, color=color, label=label)
        axes[0].fill_between(
            c["recall"][ok], c["precision_min"][ok], c["precision_max"][ok], color=color, alpha=0.2
        )
        okl = np.isfinite(c["precision"])
        axes[1].plot(c["lambda"][okl], c["precision"][okl], "-o", ms=3, color=color, label=run)
        axes[1].fill_between(
            c["lambda"][okl],
            c["precision_min"][okl],
            c["precision_max"][okl],
            color=color,
            alpha=0.2,
        )
    axes[0].set_xlabel("recall: share of accepted inputs with z ≤ λ (mean over seeds)")
    axes[0].set_ylabel("precision: share of inputs with z ≤ λ accepted")
    axes[0].set_title("PR curves (band: min–max over seeds)")
    axes[0].set_xlim(-0.02, 1.02)
    axes[1].set_xlabel("λ: threshold on z, mean NLL (nats per token of the model's tokenizer)")
    axes[1].set_ylabel("precision at z ≤ λ")
    axes[1].set_title("Precision by threshold")
    for ax in axes:
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7.5)
    length = rows[0]["length"] if rows else "?"
    fig.suptitle(
        f"OmniInput model comparison (Liu et al. §3.3): every input of {length} tokens of each "
        f"model's own tokenizer; one annotator for all. {subtitle}",
        fontsize=10,
    )
    _save(fig, path)
