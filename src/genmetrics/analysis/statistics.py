"""Correlation kernels, bootstrap resampling and percentile intervals, written once.

Used by the metric-to-metric correlation table (:mod:`genmetrics.analysis.correlation`), the
correlation of metrics with human judgments (:mod:`genmetrics.agreement.correlation`), the
pairwise-preference agreement (:mod:`genmetrics.agreement.preference`) and the scaling
analysis (:mod:`genmetrics.studies.face2_scaling.valid_cells`).

Correlations (methods :data:`METHODS`; Kendall is τ-b = Σ_{i<j} s^x_ij s^y_ij /
sqrt(Σ (s^x_ij)² Σ (s^y_ij)²) with s_ij = sign(v_i − v_j); Spearman is Pearson of average
ranks), vectorised:

* :func:`pairwise_correlation` — every pair of columns of one matrix with missing values
  (NaN), each pair over the rows where both are present, as ``pandas.DataFrame.corr``
  computes it;
* :func:`cross_correlation` — every column of ``x`` with every column of ``y`` on complete
  data, batched over leading axes, as ``scipy.stats`` computes it; for the rank methods the
  values are first rounded to 12 significant digits (:func:`snap`), so that values equal up
  to floating-point rounding tie;
* :func:`kendall_columns` — τ-b of every column pair through ``scipy.stats.kendalltau``
  (O(n log n): for many points, where :func:`cross_correlation`'s O(n²) pairs do not fit).

Bootstrap: :func:`bootstrap_indices` (resamples with replacement from a seeded
``numpy.random.Generator``), :func:`stratified_indices` (one resample within each stratum),
:func:`bootstrap_pairwise_correlation` (the replicates of :func:`pairwise_correlation`),
:func:`percentile_interval` (the percentile interval of replicates, NaN replicates left out),
:func:`seed_bootstrap` (the seed level of a hierarchical bootstrap over prompts, then seeds).
Also :func:`zscore_within` (z-scores within strata) and :func:`nan_mean`.

Small samples, for the figures and their tables: :data:`MIN_CORRELATION_POINTS` (the fewest
points a correlation is reported on), :func:`fisher_interval` (analytic interval of a
correlation), :func:`t_interval` (of a mean over seeds) and :func:`degenerate_interval` (an
"interval" of zero width, such as [1, 1] from a bootstrap of a perfect rank correlation,
which the figures do not print as an interval).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

METHODS = ("pearson", "spearman", "kendall")

#: fewest points (sources) a correlation is reported on; below it figures say "too few".
#: With n points a rank correlation takes few values, and even a perfect one (ρ = ±1, two of
#: the n! orderings) has the exact two-sided permutation p-value 2/n!: 0.33 for n = 3, 0.083
#: for n = 4, 0.017 for n = 5. Five is the fewest points at which any rank correlation can be
#: told from chance at the 5% level; with fewer, every value looks like a finding and is noise.
MIN_CORRELATION_POINTS = 5

#: interval widths at or below this are no interval: every resample gave the same value
DEGENERATE_WIDTH = 1e-9


def _stats():
    """``scipy.stats``, imported on first use: it takes about 1 s, and every score job
    imports this module (for its intervals) whether or not it needs ranks or quantiles."""
    from scipy import stats

    return stats


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {method!r}")


# ---------------------------------------------------------------------------- helpers


def snap(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to 12 significant digits, so that values equal up to floating-point
    rounding (two systems' means of the same ratings summed in another order) tie in ranks
    and signs, as exact equal values would."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(x == 0, 1.0, 10.0 ** np.floor(np.log10(np.abs(x))))
    scale = np.where(np.isfinite(scale), scale, 1.0)
    return np.round(x / scale, 11) * scale


def average_ranks(x: np.ndarray, axis: int) -> np.ndarray:
    """Average ranks (ties share the mean rank) along ``axis`` of the snapped values."""
    return _stats().rankdata(snap(x), axis=axis, method="average")


def nan_mean(per: np.ndarray) -> np.ndarray:
    """Mean over axis 0 ignoring NaN; NaN where every entry is NaN (no warning)."""
    cnt = (~np.isnan(per)).sum(axis=0)
    total = np.where(np.isnan(per), 0.0, per).sum(axis=0)
    return np.where(cnt > 0, total / np.maximum(cnt, 1), np.nan)


def zscore_within(x: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """Each column of ``x`` z-scored within each stratum (ddof=1, NaN = missing); a column
    constant or observed once in a stratum is NaN there."""
    out = np.full_like(x, np.nan, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in dict.fromkeys(strata):
            rows = strata == s
            sub = x[rows]
            mean = np.nanmean(sub, axis=0)
            sd = np.nanstd(sub, axis=0, ddof=1)
            varies = np.nanmax(sub, axis=0) > np.nanmin(sub, axis=0)
            z = (sub - mean) / np.where(varies, sd, np.nan)
            out[rows] = z
    return out


# ---------------------------------------------------------------------------- pairwise (NaN-aware)


def pairwise_correlation(x: np.ndarray, method: str) -> np.ndarray:
    """Pairwise-complete correlation matrix of the columns of ``x`` (NaN = missing), as
    ``pandas.DataFrame.corr(method)`` computes it, vectorised for the bootstrap: Pearson on
    the values, Spearman = Pearson on average ranks within each pair's complete rows,
    Kendall tau-b. NaN where a column is constant over the pair's rows (or < 2 rows)."""
    _check_method(method)
    x = np.asarray(x, dtype=float)
    present = ~np.isnan(x)
    if method == "pearson":
        return _pearson_pairwise(x, present)
    if method == "spearman":
        if present.all():
            return _pearson_pairwise(_stats().rankdata(x, axis=0), present)
        return _spearman_pairwise(x, present)
    return _kendall_pairwise(x, present)


def _pearson_pairwise(x: np.ndarray, present: np.ndarray) -> np.ndarray:
    w = present.astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mu = np.nan_to_num(np.nanmean(x, axis=0))
    xc = np.where(present, x - mu, 0.0)
    n = w.T @ w  # [a, b]: rows where both are present
    sx = xc.T @ w  # [a, b]: sum of a over those rows
    sxx = (xc**2).T @ w
    sxy = xc.T @ xc
    return _pearson_from_sums(n, sx, sx.T, sxx, sxx.T, sxy)


def _pearson_from_sums(n, su, sv, suu, svv, suv) -> np.ndarray:
    """Pearson r from pairwise sums; NaN where either side has no spread."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = suv - su * sv / n
        vu = suu - su**2 / n
        vv = svv - sv**2 / n
        r = cov / np.sqrt(vu * vv)
    bad = (n < 2) | (vu <= 1e-10 * suu) | (vv <= 1e-10 * svv)
    return np.clip(np.where(bad, np.nan, r), -1.0, 1.0)


def _spearman_pairwise(x: np.ndarray, present: np.ndarray) -> np.ndarray:
    w = present.astype(float)
    x0 = np.where(present, x, 0.0)
    both = w[:, None, :] * w[None, :, :]  # (i, j, a): rows i and j both have a
    step = (1 + np.sign(x0[:, None, :] - x0[None, :, :])) / 2 * both
    # average rank of row i in column a among the rows where a and b are both present:
    # 0.5 + #{j: x_j < x_i} + #{j: x_j == x_i} / 2 (j = i included)
    rank = 0.5 + np.einsum("ija,jb->abi", step, w)
    other = rank.transpose(1, 0, 2)  # [a, b, i]: rank of row i in column b, same rows
    keep = w.T[:, None, :] * w.T[None, :, :]  # [a, b, i]
    n = keep.sum(-1)
    su, sv = (keep * rank).sum(-1), (keep * other).sum(-1)
    suu, svv = (keep * rank**2).sum(-1), (keep * other**2).sum(-1)
    suv = (keep * rank * other).sum(-1)
    return _pearson_from_sums(n, su, sv, suu, svv, suv)


def _kendall_pairwise(x: np.ndarray, present: np.ndarray) -> np.ndarray:
    w = present.astype(float)
    x0 = np.where(present, x, 0.0)
    both = w[:, None, :] * w[None, :, :]  # (i, j, a)
    sign = np.sign(x0[:, None, :] - x0[None, :, :]) * both
    concord = np.einsum("ija,ijb->ab", sign, sign)  # 2 × (concordant − discordant pairs)
    untied = np.einsum("ija,ijb->ab", sign**2, both)  # 2 × pairs untied in a, both present
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = concord / np.sqrt(untied * untied.T)
    bad = (untied == 0) | (untied.T == 0)
    return np.clip(np.where(bad, np.nan, tau), -1.0, 1.0)


# ---------------------------------------------------------------------------- cross (complete)


def cross_correlation(method: str, x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """Correlation of every column of ``x`` (…, n, K) with every column of ``y`` (…, n, C)
    along ``axis`` (the n points; no missing values): shape (…, K, C); NaN where a side is
    constant. Spearman and Kendall on :func:`snap`-ped values."""
    _check_method(method)
    if method == "pearson":
        return _pearson_cross(x, y, axis)
    if method == "spearman":
        return _pearson_cross(average_ranks(x, axis), average_ranks(y, axis), axis)
    return _kendall_cross(x, y, axis)


def _pearson_cross(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    x = np.moveaxis(x, axis, -2)
    y = np.moveaxis(y, axis, -2)
    xc = x - x.mean(axis=-2, keepdims=True)
    yc = y - y.mean(axis=-2, keepdims=True)
    num = np.einsum("...nk,...nc->...kc", xc, yc)
    sx = np.sqrt((xc**2).sum(axis=-2))
    sy = np.sqrt((yc**2).sum(axis=-2))
    # a side is constant when its spread is rounding noise of its own scale
    flat_x = sx <= 1e-12 * np.abs(x).max(axis=-2) * np.sqrt(x.shape[-2])
    flat_y = sy <= 1e-12 * np.abs(y).max(axis=-2) * np.sqrt(y.shape[-2])
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / (sx[..., :, None] * sy[..., None, :])
    r[flat_x[..., :, None] | flat_y[..., None, :] | ~np.isfinite(r)] = np.nan
    return np.clip(r, -1.0, 1.0)


def _kendall_cross(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """τ-b over O(n²) pairs: for small n."""
    x = snap(np.moveaxis(x, axis, -2))
    y = snap(np.moveaxis(y, axis, -2))
    sx = np.sign(x[..., :, None, :] - x[..., None, :, :])  # (…, n, n, K)
    sy = np.sign(y[..., :, None, :] - y[..., None, :, :])
    num = np.einsum("...ijk,...ijc->...kc", sx, sy)
    den = np.sqrt(
        np.einsum("...ijk->...k", sx**2)[..., :, None]
        * np.einsum("...ijc->...c", sy**2)[..., None, :]
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def kendall_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """τ-b of every column of ``x`` (n, K) with every column of ``y`` (n, C) on
    :func:`snap`-ped values, through ``scipy.stats.kendalltau`` (for many points): (K, C),
    NaN where a side is constant."""
    out = np.full((x.shape[1], y.shape[1]), np.nan)
    x, y = snap(x), snap(y)
    for k in range(x.shape[1]):
        for c in range(y.shape[1]):
            if np.ptp(x[:, k]) > 0 and np.ptp(y[:, c]) > 0:
                out[k, c] = _stats().kendalltau(x[:, k], y[:, c]).statistic
    return out


# ---------------------------------------------------------------------------- bootstrap


def bootstrap_indices(rng: np.random.Generator, n: int, n_boot: int | None = None) -> np.ndarray:
    """Row indices of resamples of ``n`` rows with replacement: ``rng.integers(0, n)`` of
    shape (n_boot, n), or one resample (n,) when ``n_boot`` is None."""
    return rng.integers(0, n, size=n if n_boot is None else (n_boot, n))


def stratified_indices(rng: np.random.Generator, groups: Sequence[np.ndarray]) -> np.ndarray:
    """One resample within each group of row indices (with replacement, the group's size),
    concatenated in the groups' order."""
    return np.concatenate([rng.choice(g, size=len(g), replace=True) for g in groups])


def bootstrap_pairwise_correlation(
    x: np.ndarray, strata: np.ndarray | None, methods: Sequence[str], n_boot: int, seed
) -> dict[str, np.ndarray]:
    """``n_boot`` :func:`pairwise_correlation` matrices per method over rows of ``x``
    resampled with ``numpy.random.default_rng(seed)`` (within strata, then z-scored within
    strata by :func:`zscore_within`, when ``strata`` is given); shape (n_boot, K, K), NaN
    where undefined. Empty with ``n_boot <= 0`` or fewer than 2 rows."""
    n = len(x)
    if n_boot <= 0 or n < 2:
        return {}
    rng = np.random.default_rng(seed)
    groups = (
        [np.arange(n)]
        if strata is None
        else [np.flatnonzero(strata == s) for s in dict.fromkeys(strata)]
    )
    out = {m: np.empty((n_boot, x.shape[1], x.shape[1])) for m in methods}
    for b in range(n_boot):
        idx = stratified_indices(rng, groups)
        xb = x[idx] if strata is None else zscore_within(x[idx], strata[idx])
        for m in methods:
            out[m][b] = pairwise_correlation(xb, m)
    return out


def percentile_interval(
    replicates: np.ndarray, level: float, axis: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval at ``level``: the (1 − level)/2 and (1 + level)/2
    quantiles of ``replicates`` along ``axis`` (linear interpolation), NaN replicates left
    out; NaN where every replicate is NaN (no warning). Scalars for a 1-d input."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells
        low, high = np.nanquantile(replicates, [(1 - level) / 2, (1 + level) / 2], axis=axis)
    return low, high


def replicate_bounds(
    reps: np.ndarray | None, level: float, n_boot: int, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, used) of bootstrap replicates ``reps`` (replicates along axis 0, NaN where a
    draw gave no value): the percentile interval (:func:`percentile_interval`) where at least
    half of the ``n_boot`` draws gave a value, else NaN; ``used`` counts them. No replicates
    (``None``): NaN bounds of ``shape``, ``used`` 0."""
    if reps is None:
        return np.full(shape, np.nan), np.full(shape, np.nan), np.zeros(shape, int)
    used = (~np.isnan(reps)).sum(axis=0)
    low, high = percentile_interval(reps, level)
    enough = used >= max(1, n_boot / 2)
    return np.where(enough, low, np.nan), np.where(enough, high, np.nan), used


def seed_bootstrap(
    replicates: np.ndarray, level: float, seed: int
) -> tuple[np.ndarray, float, float]:
    """The second level of a hierarchical bootstrap: ``replicates`` (S seeds × B) are each
    seed's replicates over prompts (replicate b of every seed from the same prompt draw); per
    b, S seeds drawn with replacement (``numpy.random.default_rng(seed)``) and the mean of
    their replicate-b values. Returns those B means and their :func:`percentile_interval` at
    ``level``; one seed: its own replicates (the interval over prompts alone). A NaN
    replicate (a failed resample) makes its mean NaN, left out of the interval."""
    r = np.atleast_2d(np.asarray(replicates, dtype=float))
    n_seeds, n_boot = r.shape
    if n_seeds == 1:
        out = r[0]
    else:
        idx = np.random.default_rng(seed).integers(0, n_seeds, size=(n_boot, n_seeds))
        out = r[idx, np.arange(n_boot)[:, None]].mean(axis=1)
    low, high = percentile_interval(out, level)
    return out, float(low), float(high)


# ---------------------------------------------------------------------------- small samples


def degenerate_interval(low, high) -> np.ndarray:
    """True where ``[low, high]`` is finite but of (numerically) zero width
    (≤ :data:`DEGENERATE_WIDTH`): no interval, e.g. the percentile bootstrap of a perfect
    rank correlation, where every resample gives ±1 again. NaN bounds are False (no
    interval at all is said otherwise)."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(low) & np.isfinite(high) & (np.abs(high - low) <= DEGENERATE_WIDTH)


def fisher_interval(r, n, level: float = 0.95, method: str = "pearson"):
    """Analytic interval of a correlation ``r`` over ``n`` points by Fisher's transform:
    tanh(atanh(r) ± q·se), q the standard normal's (1 + level)/2 quantile, se = 1/√(n − 3)
    for Pearson and √((1 + r²/2)/(n − 3)) for Spearman (Bonett & Wright 2000, Psychometrika
    65: 23–28). NaN where n ≤ 3 or r is not finite; for |r| = 1 the interval is [r, r]
    (degenerate: :func:`degenerate_interval`). Arrays broadcast; scalars give floats."""
    if method not in ("pearson", "spearman"):
        raise ValueError(f"method: expected 'pearson' or 'spearman', got {method!r}")
    r = np.asarray(r, dtype=float)
    n = np.asarray(n, dtype=float)
    q = _stats().norm.ppf((1 + level) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 1.0 if method == "pearson" else np.sqrt(1 + r**2 / 2)
        se = scale / np.sqrt(n - 3)
        z = np.arctanh(np.clip(r, -1.0, 1.0))
        low, high = np.tanh(z - q * se), np.tanh(z + q * se)
    bad = ~np.isfinite(r) | ~(n > 3)
    low, high = np.where(bad, np.nan, low), np.where(bad, np.nan, high)
    edge = np.abs(r) == 1  # atanh(±1) = ±inf: both bounds are r
    low, high = np.where(edge & ~bad, r, low), np.where(edge & ~bad, r, high)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def t_interval(mean, std, n, level: float = 0.95):
    """Student-t interval of a mean over ``n`` values with sample standard deviation ``std``
    (ddof=1): mean ± t_{(1 + level)/2, n − 1} · std/√n. NaN with fewer than two values.
    Arrays broadcast; scalars give floats."""
    mean, std = np.asarray(mean, dtype=float), np.asarray(std, dtype=float)
    n = np.asarray(n, dtype=float)
    ok = n >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        half = _stats().t.ppf((1 + level) / 2, np.where(ok, n - 1, 1.0)) * std / np.sqrt(n)
    half = np.where(ok, half, np.nan)
    low, high = mean - half, mean + half
    if low.ndim == 0:
        return float(low), float(high)
    return low, high
