"""The shared matplotlib setup of the figures: the non-interactive backend and the palette."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["OKABE_ITO", "matplotlib", "plt"]

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
