"""What the FACE spectra figure shows (Yang et al. 2023; Liu et al. 2025), from the ``face``
score records: per dataset, the mean aligned surprisal spectrum of the human texts and of
each model, smoothed, with a 95% band for the mean; drawn by
:func:`genmetrics.figures.spectra.surprisal_spectra`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def smooth(y: np.ndarray, width: int = 25) -> np.ndarray:
    """Centred moving average (edges reflected), for readable spectra."""
    pad = width // 2
    padded = np.pad(y, pad, mode="reflect")
    return np.convolve(padded, np.ones(width) / width, mode="valid")


@dataclass(frozen=True)
class SpectrumCurve:
    """One mean spectrum: ``mean`` as computed, ``smoothed`` (:func:`smooth`), and the
    smoothed 95% band of the mean, ``low`` … ``high`` (± 1.96 SD / √n, normal
    approximation); ``n``: the texts averaged (the label ends with it)."""

    label: str
    mean: np.ndarray
    smoothed: np.ndarray
    low: np.ndarray
    high: np.ndarray
    reference: bool = False
    n: int = 0


@dataclass(frozen=True)
class SpectraPanel:
    """One dataset: the frequencies, the human curve first then one per model (by source),
    whether every mean is positive (``value=norm``: a log scale fits), and the entry's
    name and params."""

    dataset: str
    freq: np.ndarray
    curves: list[SpectrumCurve]
    positive: bool
    entry: str = "face"
    params: Mapping[str, Any] = field(default_factory=dict)


def _curve(label: str, mean: Any, sd: Any, n: int, reference: bool = False) -> SpectrumCurve:
    mean = np.asarray(mean, dtype=float)
    half = 1.96 * np.asarray(sd, dtype=float) / np.sqrt(max(n, 1))
    return SpectrumCurve(
        f"{label}, n={n}",
        mean,
        smooth(mean),
        smooth(mean - half),
        smooth(mean + half),
        reference,
        n,
    )


def spectra_panels(records: Sequence[Mapping[str, Any]]) -> list[SpectraPanel]:
    """One panel per dataset (sorted) of the records that carry a spectrum."""
    by_ds: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        if "spectrum" in (rec.get("extras") or {}):
            by_ds.setdefault(rec["dataset"], []).append(rec)
    panels = []
    for ds, recs in sorted(by_ds.items()):
        recs = sorted(recs, key=lambda r: r["source"])
        first = recs[0]
        sp = first["extras"]["spectrum"]
        n_ref = first["n"].get("reference", 1) - first["n"].get("dropped_reference", 0)
        curves = [
            _curve("human (reference)", sp["reference_mean"], sp["reference_sd"], n_ref, True)
        ]
        for rec in recs:
            s = rec["extras"]["spectrum"]
            n_c = rec["n"].get("candidate", 1) - rec["n"].get("dropped_candidate", 0)
            label = f"{rec['source']}  SO={rec['values']['so']:.3f}"
            curves.append(_curve(label, s["candidate_mean"], s["candidate_sd"], n_c))
        panels.append(
            SpectraPanel(
                dataset=ds,
                freq=np.asarray(sp["freq"]),
                curves=curves,
                positive=all(c.mean.min() > 0 for c in curves),
                entry=first.get("entry", "face"),
                params=first.get("params", {}),
            )
        )
    return panels
