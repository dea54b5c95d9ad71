"""Run time of each score against the number of texts, ours and the reference (Shaib et al. 2024,
Fig. 3): log–log, one colour per score, ours solid, the reference dashed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from genmetrics.figures._save import save as _save
from genmetrics.figures._style import OKABE_ITO, plt

_STYLE = {"ours": ("-", "o"), "reference": ("--", "x")}
#: the Okabe–Ito colours without the pale yellow, which thin lines on white do not show
_COLOURS = tuple(c for c in OKABE_ITO if c != "#F0E442")


def runtime_figure(
    table: pd.DataFrame,
    path: str | Path,
    title: str,
    note: str = "",
    reference_label: str = "reference (diversity package)",
) -> None:
    """Seconds against number of texts from the tidy table of
    :func:`genmetrics.studies.shaib_diversity.runtime.runtime_sweep` (columns ``label``, ``implementation``,
    ``n_texts``, ``seconds``). ``title``: the machine and the text source; ``note``: a line
    under the axes (which references differ or are missing)."""
    fig, ax = plt.subplots(figsize=(9.5, 5.6))
    labels = list(dict.fromkeys(table["label"]))
    for k, label in enumerate(labels):
        colour = _COLOURS[k % len(_COLOURS)]
        for impl, (ls, marker) in _STYLE.items():
            g = table[(table["label"] == label) & (table["implementation"] == impl)]
            g = g.sort_values("n_texts")
            if g.empty:
                continue
            ax.plot(
                g["n_texts"],
                g["seconds"],
                ls=ls,
                marker=marker,
                color=colour,
                lw=1.6,
                ms=5,
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ns = sorted(table["n_texts"].unique())
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("number of texts N (log scale)")
    ax.set_ylabel("wall time per score (seconds, log scale; median of repeats)")
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    ax.set_title(title, fontsize=10)
    scores = [
        Line2D([], [], color=_COLOURS[k % len(_COLOURS)], lw=2.5, label=label)
        for k, label in enumerate(labels)
    ]
    styles = [
        Line2D([], [], color="0.3", ls="-", marker="o", label="ours (genmetrics)"),
        Line2D([], [], color="0.3", ls="--", marker="x", label=reference_label),
    ]
    first = ax.legend(
        handles=scores, title="score", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9
    )
    ax.add_artist(first)
    ax.legend(
        handles=styles,
        title="implementation",
        loc="lower left",
        bbox_to_anchor=(1.01, 0.0),
        fontsize=9,
    )
    if note:
        ax.text(0.0, -0.13, note, transform=ax.transAxes, ha="left", va="top", fontsize=8)
    _save(fig, path)
