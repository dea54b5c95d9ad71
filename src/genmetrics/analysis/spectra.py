"""What the FACE spectra figure shows (Yang et al. 2023; Liu et al. 2025), from the ``face``
score records: per dataset, the mean aligned surprisal spectrum of the human texts and of
each model, smoothed, with a 95% band for the mean; and what SO ranks: with pairing by prompt
SO is computed per text (against its prompt's human text) and then averaged, so the figure
shows each source's per-text SO values beside the mean curves (:class:`SoValues`), never a
ranking read off the mean curves; drawn by
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
class SoValues:
    """What one source's SO is the mean of: ``values``, each text's SO against its prompt's
    human text (pairing ``prompt``; the texts with a defined SO), or the one SO of the two
    mean spectra (pairing ``set``); ``so``: the score (the record's ``so``)."""

    label: str
    values: np.ndarray
    so: float
    pairing: str


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
    so: list[SoValues] = field(default_factory=list)
    feature: str = ""  # "evaluator X" (the records' provenance)


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
        so_values: list[SoValues] = []
        for rec in recs:
            s = rec["extras"]["spectrum"]
            n_c = rec["n"].get("candidate", 1) - rec["n"].get("dropped_candidate", 0)
            curves.append(_curve(rec["source"], s["candidate_mean"], s["candidate_sd"], n_c))
            so_values.append(_so_values(rec))
        panels.append(
            SpectraPanel(
                dataset=ds,
                freq=np.asarray(sp["freq"]),
                curves=curves,
                positive=all(c.mean.min() > 0 for c in curves),
                entry=first.get("entry", "face"),
                params=first.get("params", {}),
                so=sorted(so_values, key=lambda v: -v.so),
                feature=_feature(first),
            )
        )
    return panels


def _so_values(rec: Mapping[str, Any]) -> SoValues:
    """:class:`SoValues` of a face record: its per-text SO (``extras.per_candidate.so``,
    undefined ones left out) with pairing by prompt, else its one SO."""
    so = float(rec["values"]["so"])
    per = ((rec.get("extras") or {}).get("per_candidate") or {}).get("so")
    if per is not None:
        v = np.array([x for x in per if x is not None], dtype=float)
        return SoValues(rec["source"], v[np.isfinite(v)], so, "prompt")
    return SoValues(rec["source"], np.array([so]), so, "set")


def _feature(rec: Mapping[str, Any]) -> str:
    """``evaluator X`` of a record (its provenance's upstream), empty where none is named."""
    upstream = (rec.get("provenance") or {}).get("config", {}).get("upstream", {}) or {}
    name = (upstream.get("evaluator") or {}).get("name")
    return f"evaluator {name}" if name else ""
