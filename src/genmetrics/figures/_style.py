"""The shared matplotlib setup of the figures: the non-interactive backend and the palette."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = [
    "OKABE_ITO",
    "entry_features",
    "matplotlib",
    "panel_grid",
    "plt",
    "record_feature",
    "size_range",
]

#: Okabe & Ito (2008) colour-blind-safe palette (black last), cycled beyond eight models
OKABE_ITO = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)


def panel_grid(n: int, width: float, height: float = 4.6, empty: str = "nothing to draw"):
    """(figure, axes) for ``n`` panels, two a row, the spare axes hidden; with no panel the
    first axes says ``empty`` and the figure is marked as drawing nothing
    (:func:`genmetrics.figures._save.mark_empty`). ``width``/``height``: inches per panel."""
    n_panels = max(1, n)
    ncols = min(2, n_panels)
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    if n == 0:
        axes[0, 0].text(0.5, 0.5, empty, ha="center", va="center")
        fig.genmetrics_empty = empty  # genmetrics.figures._save.mark_empty (no import cycle)
    return fig, axes


def entry_features(metrics: Mapping[str, Any] | None) -> dict[str, str]:
    """entry → ``"featurizer X"`` / ``"evaluator X"`` from a config's ``metrics:`` section
    (what a figure's title names); an entry with neither is left out."""
    out = {}
    for entry, spec in (metrics or {}).items():
        spec = spec or {}
        for kind in ("featurizer", "evaluator"):
            if spec.get(kind):
                out[entry] = f"{kind} {spec[kind]}"
                break
    return out


def record_feature(record: Mapping[str, Any]) -> str:
    """``"featurizer X"`` / ``"evaluator X"`` of a score record (its provenance's upstream);
    ``"no featurizer recorded"`` where it names none."""
    upstream = (record.get("provenance") or {}).get("config", {}).get("upstream", {}) or {}
    for kind in ("featurizer", "evaluator"):
        name = (upstream.get(kind) or {}).get("name")
        if name:
            return f"{kind} {name}"
    return "no featurizer recorded"


def size_range(values: Iterable[Any]) -> str:
    """``32`` or ``30–32`` of some sizes (non-numbers skipped); ``?`` without any."""
    v = set()
    for x in values:
        try:
            f = float(x)
        except (TypeError, ValueError):
            continue
        if f == f:
            v.add(int(f))
    v = sorted(v)
    return "?" if not v else str(v[0]) if len(v) == 1 else f"{v[0]}–{v[-1]}"
