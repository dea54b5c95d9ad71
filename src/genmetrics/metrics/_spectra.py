"""Surprisal spectra and the spectral distances of FACE (Yang et al., NeurIPS 2023) and
FACE-2 / FACEScore (Liu et al., "Evaluating Text Generation Quality Using Spectral Distances
of Surprisal", Findings EMNLP 2025): the numerical core of the ``face`` metric.

Spectrum (FACE ``run_fft.py``, FACEScore ``fft_utils.py``): ``X = fftshift(fft(x))``,
``f = fftshift(fftfreq(N))``, keep ``[N // 2:]`` (frequencies 0, 1/N, ... < 0.5; no window,
no 1/N scaling); value ``norm`` = |X| or ``real`` = Re X. Optional per-sequence preprocessing:
``log`` = ln(x + 1), then ``zscore`` = (x - mean) / (population std + 1e-6) (FACE's
``logzs`` is both). Beyond the published tools (FACE-2 names spectral leakage as future work):
a ``hann`` window before the FFT, or a Welch periodogram (``scipy.signal.welch``).

Alignment onto 1,000 points of [0, 0.5] (linear interpolation, linear extrapolation, as
``interp1d(fill_value="extrapolate")``): ``face`` on each spectrum's true frequencies;
``facescore`` on its index (``linspace(0, 0.5, len(spectrum))``). Both are a linear map that
depends only on the sequence length, so sequences are grouped by length and each group is
aligned with one matrix product.

Distances (FACEScore ``metrics.py`` unless said): SO = Σ min(|a|,|b|) / Σ max(|a|,|b|)
(FACE: the same with trapezoid integrals over the grid); CORR = Pearson; SPEAR = Spearman;
SAM = arccos(<a/|a|, b/|b|>) / π with the cosine **clipped to [-1, 1]** (the official code
gives NaN for identical spectra); EMD = Σ |cdf_a - cdf_b| / len, cdf = cumsum / total;
KL = ``scipy.stats.entropy(b, a)`` with zeros of ``a`` replaced by 1e-10; JS =
``scipy.spatial.distance.jensenshannon(a, b)`` (natural log). With ``a`` the human spectrum,
FACE-2's paper writes KL the other way, ``kl_human_model`` = KL(a ‖ b) (its Eq. 5; zeros of
``b`` replaced the same way), and its "JS" as ``js_eq6`` = ½KL(a ‖ b) + ½KL(b ‖ a) (Eq. 6, a
symmetrised KL); ``jsd`` is the Jensen–Shannon divergence itself (= JS²). EMD, KL and JS treat spectra as
distributions: signed (``real``) spectra are taken in absolute value, a stated departure (the
official code silently computes with negative "probabilities").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.devices import available_cpus

GRID_POINTS = 1000
VALUES = ("norm", "real")
ALIGN = ("face", "facescore")
METHODS = ("fft", "welch")
WINDOWS = ("none", "hann")
DISTANCES = ("so", "corr", "spear", "sam", "emd", "kl", "js", "kl_human_model", "js_eq6", "jsd")
#: which way is better for each distance (similarities up, distances down)
HIGHER_IS_BETTER = {"so": True, "corr": True, "spear": True}
#: spectra of sequences shorter than this have one bin and cannot be aligned
MIN_LENGTH = 3


def _check(value: str, method: str, window: str) -> None:
    if value not in VALUES or method not in METHODS or window not in WINDOWS:
        raise GenmetricsError(
            f"spectra: value in {VALUES}, method in {METHODS}, window in {WINDOWS}; got "
            f"{value!r}, {method!r}, {window!r}"
        )
    if method == "welch" and value == "real":
        raise GenmetricsError(
            "spectra: method=welch gives a power spectrum (non-negative); value=real needs "
            "method=fft"
        )


def _prepare(x: np.ndarray, log: bool, zscore: bool, ddof: int = 0) -> np.ndarray:
    """Per-row preprocessing of a (rows, length) block: z = (x - mean) / (std + 1e-6), the
    std with ``ddof`` (0: population, as numpy and both codes; the papers do not say)."""
    if log:
        x = np.log(x + 1)
    if zscore:
        x = (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, ddof=ddof, keepdims=True) + 1e-6)
    return x


def _block_spectra(
    x: np.ndarray,
    value: str = "norm",
    log: bool = False,
    zscore: bool = False,
    method: str = "fft",
    window: str = "none",
    segment: int = 64,
    ddof: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies [m], spectra [rows, m]) of a block of equal-length sequences."""
    x = _prepare(np.asarray(x, dtype=np.float64), log, zscore, ddof)
    n = x.shape[1]
    if method == "welch":
        from scipy.signal import welch

        win = "hann" if window == "hann" else "boxcar"
        return welch(x, window=win, nperseg=min(segment, n), axis=1)
    if window == "hann":
        from scipy.signal import get_window

        x = x * get_window("hann", n)
    freq = np.fft.fftshift(np.fft.fftfreq(n))[n // 2 :]
    # fftshift(fft(x))[n//2:] holds frequencies 0 .. < 0.5: the first n - n//2 bins of rfft
    spec = np.fft.rfft(x, axis=1)[:, : n - n // 2]
    return freq, (np.abs(spec) if value == "norm" else spec.real)


def spectrum(
    x: Sequence[float],
    value: str = "norm",
    log: bool = False,
    zscore: bool = False,
    method: str = "fft",
    window: str = "none",
    segment: int = 64,
    ddof: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies, values) of one surprisal sequence, as FACE's FFTProcessor."""
    _check(value, method, window)
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise GenmetricsError("spectrum: a non-empty 1-D sequence is needed")
    if not np.isfinite(a).all():
        raise GenmetricsError("spectrum: the sequence holds NaN or inf")
    freq, spec = _block_spectra(a[None, :], value, log, zscore, method, window, segment, ddof)
    return freq, spec[0]


def interp_matrix(x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """W [len(grid), len(x)] with ``W @ y`` = ``interp1d(x, y, fill_value="extrapolate")(grid)``
    (linear inside, the end segments extended outside): two non-zeros per row."""
    j = np.clip(np.searchsorted(x, grid, side="right") - 1, 0, x.size - 2)
    t = (grid - x[j]) / (x[j + 1] - x[j])
    w = np.zeros((grid.size, x.size))
    rows = np.arange(grid.size)
    w[rows, j] = 1 - t
    w[rows, j + 1] = t
    return w


def _grid_x(freq: np.ndarray, how: str) -> np.ndarray:
    if how not in ALIGN:
        raise GenmetricsError(f"align: one of {ALIGN}, got {how!r}")
    return freq if how == "face" else np.linspace(0, 0.5, freq.size)


def align(freq: np.ndarray, values: np.ndarray, how: str = "facescore") -> np.ndarray:
    """One spectrum on ``GRID_POINTS`` points of [0, 0.5] (linear, extrapolated)."""
    x = _grid_x(np.asarray(freq), how)
    if values.size < 2:
        raise GenmetricsError(f"align: a spectrum of {values.size} bin(s) cannot be interpolated")
    return interp_matrix(x, np.linspace(0, 0.5, GRID_POINTS)) @ np.asarray(values, np.float64)


def aligned_spectra(
    seqs: Sequence[np.ndarray],
    value: str = "norm",
    log: bool = False,
    zscore: bool = False,
    how: str = "facescore",
    method: str = "fft",
    window: str = "none",
    segment: int = 64,
    ddof: int = 0,
) -> np.ndarray:
    """[len(seqs), GRID_POINTS] aligned spectra, computed per group of equal lengths (one
    batched FFT and one interpolation matrix per length). Every sequence needs
    ``MIN_LENGTH`` values."""
    _check(value, method, window)
    out = np.empty((len(seqs), GRID_POINTS))
    grid = np.linspace(0, 0.5, GRID_POINTS)
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    if lengths.size and lengths.min() < MIN_LENGTH:
        i = int(np.argmin(lengths))
        raise GenmetricsError(f"spectra: sequence {i} has {lengths[i]} value(s), < {MIN_LENGTH}")
    for n in np.unique(lengths):
        group = np.flatnonzero(lengths == n)
        weights = None
        for k in range(0, group.size, 1024):  # row blocks keep the temporaries small
            idx = group[k : k + 1024]
            block = np.stack([np.asarray(seqs[i], dtype=np.float64) for i in idx])
            freq, spec = _block_spectra(block, value, log, zscore, method, window, segment, ddof)
            if weights is None:  # one interpolation matrix per length
                weights = interp_matrix(_grid_x(freq, how), grid).T
            out[idx] = np.ascontiguousarray(spec) @ weights  # BLAS
    return out


def _rowwise_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = _rowdot(a, b) / np.sqrt(_rowdot(a, a) * _rowdot(b, b))
    return np.clip(r, -1.0, 1.0)


def _ranks(a: np.ndarray) -> np.ndarray:
    """Row-wise ranks, ties averaged (``scipy.stats.rankdata``); one argsort per row, and
    ``rankdata`` only for the rows that hold ties."""
    order = np.argsort(a, axis=1)
    ranks = np.empty(a.shape)
    np.put_along_axis(ranks, order, np.arange(1, a.shape[1] + 1, dtype=np.float64), axis=1)
    tied = (np.diff(np.take_along_axis(a, order, axis=1), axis=1) == 0).any(axis=1)
    if tied.any():
        from scipy.stats import rankdata

        ranks[tied] = rankdata(a[tied], axis=1)
    return ranks


def _safe_log(x: np.ndarray) -> np.ndarray:
    """ln x where x > 0, else 0 (so that 0 · ln 0 = 0, as ``scipy.special.rel_entr``)."""
    return np.log(np.where(x > 0, x, 1.0))


#: rows per block in :func:`batch_distances` (keeps the temporaries small)
BLOCK = 256


def batch_distances(a: np.ndarray, b: np.ndarray, so: str = "facescore") -> dict[str, np.ndarray]:
    """Every distance between rows of two [n, G] blocks of aligned spectra (row i vs row i);
    ``so="face"``: trapezoid SO. Values as :func:`distances`, vectorised in blocks of rows
    that run on the process's CPUs in threads (the values do not depend on the count)."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    starts = range(0, len(a), BLOCK)
    workers = min(len(starts), available_cpus())
    if workers > 1:  # numpy releases the GIL in sorts and ufuncs: blocks run in parallel
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as ex:
            parts = list(
                ex.map(lambda i: _block_distances(a[i : i + BLOCK], b[i : i + BLOCK], so), starts)
            )
    else:
        parts = [_block_distances(a[i : i + BLOCK], b[i : i + BLOCK], so) for i in starts]
    if not parts:
        return {k: np.zeros(0) for k in DISTANCES}
    return {k: np.concatenate([p[k] for p in parts]) for k in DISTANCES}


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


def _block_distances(a: np.ndarray, b: np.ndarray, so: str) -> dict[str, np.ndarray]:
    with np.errstate(invalid="ignore", divide="ignore"):  # a flat spectrum gives NaN, counted
        return _block_distances_raw(a, b, so)


def _block_distances_raw(a: np.ndarray, b: np.ndarray, so: str) -> dict[str, np.ndarray]:
    pa, pb = np.abs(a), np.abs(b)
    sa, sb = pa.sum(axis=1), pb.sum(axis=1)
    lo = np.minimum(pa, pb)
    if so == "face":
        grid = np.linspace(0, 0.5, a.shape[1])
        so_value = np.trapezoid(lo, grid, axis=1) / np.trapezoid(np.maximum(pa, pb), grid, axis=1)
    else:
        s_lo = lo.sum(axis=1)
        so_value = s_lo / (sa + sb - s_lo)  # Σ max = Σ |a| + Σ |b| - Σ min
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = _rowdot(a, b) / np.sqrt(_rowdot(a, a) * _rowdot(b, b))
    p, q = pa / sa[:, None], pb / sb[:, None]  # the spectra as distributions
    m = (p + q) / 2
    # rel_entr(x, y) = x (ln x - ln y), with 0 ln 0 = 0: one np.log per array, not per pair
    lp, lq, lm = _safe_log(p), _safe_log(q), _safe_log(m)
    # KL = scipy.stats.entropy(|b|, |a| with zeros replaced by 1e-10), as FACEScore; the
    # paper's direction KL(a ‖ b) replaces the zeros of its own denominator |b| the same way
    lp_kl, lq_kl = _floored_log(pa, lp), _floored_log(pb, lq)
    kl_ba = _rowdot(q, lq - lp_kl)  # KL(b ‖ a): model ‖ human with a = the human spectra
    kl_ab = _rowdot(p, lp - lq_kl)  # KL(a ‖ b): human ‖ model, FACE-2 Eq. 5
    jsd = np.maximum((_rowdot(p, lp - lm) + _rowdot(q, lq - lm)) / 2, 0.0)
    return {
        "so": so_value,
        "corr": _rowwise_pearson(a, b),
        "spear": _rowwise_pearson(_ranks(a), _ranks(b)),
        "sam": np.arccos(np.clip(cos, -1.0, 1.0)) / np.pi,
        # cdf_a - cdf_b = cumsum(p - q)
        "emd": np.abs(np.cumsum(p - q, axis=1)).sum(axis=1) / a.shape[1],
        "kl": kl_ba,
        # scipy.spatial.distance.jensenshannon(a, b): sqrt of the mean KL to the midpoint
        "js": np.sqrt(jsd),
        "kl_human_model": kl_ab,
        "js_eq6": (kl_ab + kl_ba) / 2,  # FACE-2 Eq. 6 as printed: a symmetrised KL
        "jsd": jsd,  # the Jensen–Shannon divergence itself (nats), = js²
    }


def _floored_log(x: np.ndarray, log_normalised: np.ndarray) -> np.ndarray:
    """ln of ``x`` normalised per row after replacing its zeros by 1e-10 (FACEScore's guard
    for the KL denominator); ``log_normalised`` (ln x / Σx, 0 where x = 0) when x has none."""
    zero = x == 0
    if not zero.any():
        return log_normalised
    fixed = np.where(zero, 1e-10, x)
    return np.log(fixed / fixed.sum(axis=1, keepdims=True))


def distances(a: np.ndarray, b: np.ndarray, so: str = "facescore") -> dict[str, float]:
    """Every distance between two aligned spectra (``so="face"``: trapezoid SO)."""
    return {k: float(v[0]) for k, v in batch_distances(a, b, so).items()}


def best_over_references(values: dict[str, np.ndarray], groups: np.ndarray, n: int) -> dict:
    """Per candidate (0..n-1), the best value over its references (max for SO/CORR/SPEAR, min
    for the distances, as the FACE-2 MT-Bench script): ``groups[k]`` = the candidate of pair
    ``k``; a candidate without a pair gets -inf/inf."""
    out = {}
    for key, v in values.items():
        v = np.where(np.isnan(v), -np.inf if HIGHER_IS_BETTER.get(key, False) else np.inf, v)
        if HIGHER_IS_BETTER.get(key, False):
            best = np.full(n, -np.inf)
            np.maximum.at(best, groups, v)
        else:
            best = np.full(n, np.inf)
            np.minimum.at(best, groups, v)
        out[key] = best
    return out
