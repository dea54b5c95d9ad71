"""Surprisal spectra and the spectral distances of FACE (Yang et al., NeurIPS 2023) and
FACE-2 / FACEScore (Liu et al., "Evaluating Text Generation Quality Using Spectral Distances
of Surprisal", Findings EMNLP 2025): the numerical core of the ``face`` metric.

Spectrum (FACE ``run_fft.py``, FACEScore ``fft_utils.py``): ``X = fftshift(fft(x))``,
``f = fftshift(fftfreq(N))``, keep ``[N // 2:]`` (frequencies 0, 1/N, ... < 0.5; no window,
no 1/N scaling); value ``norm`` = |X| or ``real`` = Re X. Optional per-sequence preprocessing:
``zscore`` = (x - mean) / (population std + 1e-6), ``logzs`` = z-score of ln(x + 1).

Alignment onto 1,000 points of [0, 0.5] (linear interpolation, linear extrapolation):
``face`` on each spectrum's true frequencies; ``facescore`` on its index
(``linspace(0, 0.5, len(spectrum))``).

Distances (FACEScore ``metrics.py`` unless said): SO = Σ min(|a|,|b|) / Σ max(|a|,|b|)
(FACE: the same with trapezoid integrals over the grid); CORR = Pearson; SPEAR = Spearman;
SAM = arccos(<a/|a|, b/|b|>) / π with the cosine **clipped to [-1, 1]** (the official code
gives NaN for identical spectra); EMD = Σ |cdf_a - cdf_b| / len, cdf = cumsum / total;
KL = ``scipy.stats.entropy(b, a)`` with zeros of ``a`` replaced by 1e-10; JS =
``scipy.spatial.distance.jensenshannon(a, b)`` (natural log). EMD, KL and JS treat spectra as
distributions: signed (``real``) spectra are taken in absolute value, a stated departure (the
official code silently computes with negative "probabilities").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError

GRID_POINTS = 1000
VALUES = ("norm", "real")
PREPROCESS = ("none", "zscore", "logzs")
ALIGN = ("face", "facescore")
DISTANCES = ("so", "corr", "spear", "sam", "emd", "kl", "js")
#: spectra of sequences shorter than this have one bin and cannot be aligned
MIN_LENGTH = 3


def spectrum(
    x: Sequence[float], value: str = "norm", preprocess: str = "none"
) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies, values) of one surprisal sequence, as FACE's FFTProcessor."""
    if value not in VALUES or preprocess not in PREPROCESS:
        raise GenmetricsError(f"spectrum: value in {VALUES}, preprocess in {PREPROCESS}")
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise GenmetricsError("spectrum: a non-empty 1-D sequence is needed")
    if not np.isfinite(a).all():
        raise GenmetricsError("spectrum: the sequence holds NaN or inf")
    if preprocess == "logzs":
        a = np.log(a + 1)
    if preprocess in ("zscore", "logzs"):
        a = (a - a.mean()) / (a.std() + 1e-6)
    n = a.size
    freq = np.fft.fftshift(np.fft.fftfreq(n))[n // 2 :]
    spec = np.fft.fftshift(np.fft.fft(a))[n // 2 :]
    return freq, (np.abs(spec) if value == "norm" else spec.real)


def align(freq: np.ndarray, values: np.ndarray, how: str = "facescore") -> np.ndarray:
    """One spectrum on ``GRID_POINTS`` points of [0, 0.5] (linear, extrapolated)."""
    if how not in ALIGN:
        raise GenmetricsError(f"align: one of {ALIGN}, got {how!r}")
    if values.size < 2:
        raise GenmetricsError(f"align: a spectrum of {values.size} bin(s) cannot be interpolated")
    x = freq if how == "face" else np.linspace(0, 0.5, values.size)
    grid = np.linspace(0, 0.5, GRID_POINTS)
    out = np.interp(grid, x, values)
    # np.interp holds the end values; extrapolate linearly like interp1d(fill_value="extrapolate")
    for mask, (i, j) in ((grid < x[0], (0, 1)), (grid > x[-1], (-2, -1))):
        slope = (values[j] - values[i]) / (x[j] - x[i])
        out[mask] = values[i] + slope * (grid[mask] - x[i])
    return out


def distances(a: np.ndarray, b: np.ndarray, so: str = "facescore") -> dict[str, float]:
    """Every distance between two aligned spectra (``so="face"``: trapezoid SO)."""
    from scipy.spatial.distance import jensenshannon
    from scipy.stats import entropy, pearsonr, spearmanr

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    lo, hi = np.minimum(np.abs(a), np.abs(b)), np.maximum(np.abs(a), np.abs(b))
    if so == "face":
        grid = np.linspace(0, 0.5, a.size)
        so_value = float(np.trapezoid(lo, grid) / np.trapezoid(hi, grid))
    else:
        so_value = float(lo.sum() / hi.sum())
    cos = float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
    pa, pb = np.abs(a), np.abs(b)
    cdf_a, cdf_b = np.cumsum(pa) / pa.sum(), np.cumsum(pb) / pb.sum()
    return {
        "so": so_value,
        "corr": float(pearsonr(a, b)[0]),
        "spear": float(spearmanr(a, b)[0]),
        "sam": float(np.arccos(np.clip(cos, -1.0, 1.0)) / np.pi),
        "emd": float(np.abs(cdf_a - cdf_b).sum() / a.size),
        "kl": float(entropy(pb, np.where(pa == 0, 1e-10, pa))),
        "js": float(jensenshannon(pa, pb)),
    }
