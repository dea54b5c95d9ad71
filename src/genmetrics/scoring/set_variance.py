"""The variance of a set statistic at n prompts, read off independent samples of two
smaller sizes: the factor by which :mod:`genmetrics.scoring.intervals` rescales the half-sample
replicates of a value that is not a mean.

A mean over texts, pairs or prompts has variance s²/n, so the half draws' spread times
m/(n − m) is its variance at n (the delete-d jackknife). A statistic of the whole set need not
shrink so: a distance between two samples of one distribution (MMD², Fréchet's bias) shrinks
as 1/n², a coupon-collector count (distinct-n) about as 1/n but not around its subsets' mean,
the n-gram Vendi Score's grows with the set (an effective count). Here the variance is
measured where samples are independent — two disjoint halves of the prompts, two disjoint
quarters — and extrapolated to n along Var(T_k) ∝ k^(−α), the rate read off the two sizes
(subsampling with an unknown rate: Bertail, Politis & Romano 1999, JASA 94: 569–579).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

#: the range of the exponent α of Var(T_k) ∝ k^(−α) that :func:`extrapolated_variance` reads
RATES = (-2.0, 2.0)


def extrapolated_variance(v_half: float, v_quarter: float, n: int, m1: int, m2: int) -> float:
    """The variance of a statistic T on n units, from its variances on independent samples of
    m1 (``v_half``) and m2 < m1 (``v_quarter``) units: Var(T_k) ∝ k^(−α) read off the two
    sizes, α = log(v_quarter / v_half) / log(m1 / m2) clamped to :data:`RATES`, and
    Var(T_n) = v_half·(m1/n)^α: subsampling at two sizes with an unknown rate (Bertail,
    Politis & Romano 1999, JASA 94: 569–579). α = 1 is a mean's rate; α = 2 that of a distance
    between two samples of one distribution (a degenerate second-order statistic, e.g. MMD²),
    the fastest of the registered metrics; α = 0 a variance that does not shrink; α = −2 that
    of a count growing in proportion to the set (the n-gram Vendi Score, an effective number
    of distinct texts). NaN where a variance is not a positive number."""
    if not (math.isfinite(v_half) and math.isfinite(v_quarter) and v_half > 0 and v_quarter > 0):
        return math.nan
    alpha = float(np.clip(math.log(v_quarter / v_half) / math.log(m1 / m2), *RATES))
    return v_half * (m1 / n) ** alpha


def set_scale(half: np.ndarray, quarter: np.ndarray, spread: np.ndarray, n: int) -> list[float]:
    """s² per value (column) of a set statistic, the factor of the half draws' deviations: its
    variance at n prompts (:func:`extrapolated_variance` of the mean of (T(S_2j) − T(S_2j+1))²/2
    over the complementary half draws ``half`` and of the same over the quarter draws
    ``quarter``, each unbiased for the variance of T on an independent sample of that many
    prompts) over the half draws' variance ``spread``; NaN where a variance is not a positive
    number (NaN draws, failed ones, are left out)."""
    b = len(half) // 2 * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a value NaN in every draw
        v_half = np.nanmean((half[0:b:2] - half[1:b:2]) ** 2, axis=0) / 2
        v_quarter = np.nanmean((quarter[0:b:2] - quarter[1:b:2]) ** 2, axis=0) / 2
    out = []
    for vh, vq, sp in zip(v_half, v_quarter, spread, strict=True):
        var_n = extrapolated_variance(float(vh), float(vq), n, n // 2, n // 4)
        out.append(var_n / float(sp) if sp > 0 else math.nan)
    return out
