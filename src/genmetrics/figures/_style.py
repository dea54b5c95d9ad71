"""The shared matplotlib setup of the figures: the non-interactive backend and the palette."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["OKABE_ITO", "matplotlib", "panel_grid", "plt"]

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
    first axes says ``empty``. ``width``/``height``: inches per panel."""
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
    return fig, axes
