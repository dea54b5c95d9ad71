"""Saving a figure: atomically (a reader never sees half a PNG), then closed; a figure whose
data had nothing to draw says so in the PNG itself (a text chunk, :data:`EMPTY_KEY`), so that
the reports can leave it out (:func:`empty_reason`)."""

from __future__ import annotations

from pathlib import Path

from genmetrics.figures._style import plt
from genmetrics.io import atomic_path

#: the resolution every figure is saved at (pixels per inch)
DPI = 130
#: the PNG text key of a figure with nothing drawn; its value says why
EMPTY_KEY = "genmetrics-empty"


def mark_empty(fig, reason: str) -> None:
    """Mark ``fig`` as drawing nothing (its data were empty): :func:`save` writes ``reason``
    into the PNG under :data:`EMPTY_KEY`."""
    fig.genmetrics_empty = reason


def save(fig, path: str | Path) -> None:
    reason = getattr(fig, "genmetrics_empty", None)
    metadata = {EMPTY_KEY: reason} if reason else None
    with atomic_path(path, suffix=".tmp.png") as tmp:
        fig.savefig(tmp, dpi=DPI, bbox_inches="tight", metadata=metadata)
    plt.close(fig)


def empty_reason(path: str | Path) -> str | None:
    """Why the figure ``path`` draws nothing (its :data:`EMPTY_KEY` text), or None: it
    draws something (any PNG without the key, whoever wrote it)."""
    from PIL import Image

    with Image.open(path) as im:
        return (getattr(im, "text", None) or {}).get(EMPTY_KEY)
