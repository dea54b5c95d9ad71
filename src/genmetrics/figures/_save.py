"""Saving a figure: atomically (a reader never sees half a PNG), then closed."""

from __future__ import annotations

from pathlib import Path

from genmetrics.figures._style import plt
from genmetrics.io import atomic_path

#: the resolution every figure is saved at (pixels per inch)
DPI = 130


def save(fig, path: str | Path) -> None:
    with atomic_path(path, suffix=".tmp.png") as tmp:
        fig.savefig(tmp, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
