"""Kernel Inception Distance (Bińkowski et al. 2018) on text embeddings: the unbiased MMD²
between candidate and reference embeddings under the cubic polynomial kernel, averaged over
random subsets, as torch-fidelity 0.4.0 computes it (``torch_fidelity/metric_kid.py``:
``kid_features_to_metric``, ``kernel_poly``, ``mmd2`` with ``mmd_est="unbiased"``).

    k(x, y) = (x·y / d + 1)^3
    MMD²_u = Σ_{i≠j} k(x_i, x_j) / (m(m-1)) + Σ_{i≠j} k(y_i, y_j) / (m(m-1))
             - 2 Σ_{i,j} k(x_i, y_j) / m²

on subsets X of the candidate and Y of the reference, m rows each. The subsets are drawn as
torch-fidelity draws them: ``rng = np.random.RandomState(seed)``, then per subset
``rng.choice(n_candidate, m, replace=False)`` and ``rng.choice(n_reference, m,
replace=False)``, in that order (the candidate is torch-fidelity's ``input1``). ``kid`` is the
mean over ``subsets`` and ``kid_std`` their standard deviation (``np.std``, ddof = 0), as
torch-fidelity's ``kernel_inception_distance_mean`` / ``_std``; the defaults are
torch-fidelity's (100 subsets of 1000, seed 2020).

Where we differ: a subset size above the smaller set is capped at that set's size, as
clean-fid's ``kernel_distance`` caps it (``m = min(n_1, n_2, max_subset_size)``; torch-fidelity
refuses it), and ``n["subset_size"]`` records the m used; with both sets at least
``subset_size`` the numbers are torch-fidelity's. Kernels are computed in float64
(torch-fidelity computes in the features' dtype, float32 for Inception features). Sets small
enough (:data:`FULL_KERNEL_MAX`) have their kernel matrices computed once, each subset's cut
from them: the same entries, summed in another order.

MMD²_u is an unbiased estimate of a non-negative quantity: values slightly below 0 mean the
two sets cannot be told apart at this size. Its registered scale (``≳ 0``) says so and has no
range, so its interval over prompts is not cut at 0 (:mod:`genmetrics.scoring.intervals`): on two
halves of one set the estimate is negative, and an interval cut at 0 would exclude it.
"""

from __future__ import annotations

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._inputs import check_dims, distribution_metric
from genmetrics.metrics.registry import LOWER, MetricResult
from genmetrics.params import Interval

__all__ = ["kid", "mmd2_unbiased", "polynomial_kernel"]


def polynomial_kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """k(x, y) = (x·y / d + 1)^3 for every row pair (KID's kernel: degree 3, gamma 1/d,
    coef0 1), in float64."""
    d = x.shape[1]
    return (x @ y.T / d + 1.0) ** 3


#: kernel entries (float64) up to which the three whole-set kernel matrices are computed once
#: and each subset's are cut from them (64 MiB; about 1,670 rows per set): the same numbers
#: as computing each subset's kernels, without a matrix product per subset
FULL_KERNEL_MAX = 1 << 23


def _mmd2_from_kernels(k_xx: np.ndarray, k_xy: np.ndarray, k_yy: np.ndarray) -> float:
    m = k_xx.shape[0]
    off_xx = k_xx.sum() - np.trace(k_xx)
    off_yy = k_yy.sum() - np.trace(k_yy)
    return float((off_xx + off_yy) / (m * (m - 1)) - 2 * k_xy.sum() / (m * m))


def mmd2_unbiased(x: np.ndarray, y: np.ndarray) -> float:
    """Unbiased MMD² (diagonals of K_XX and K_YY left out, all of K_XY kept) of two sets of
    m rows each under :func:`polynomial_kernel`."""
    m = x.shape[0]
    if y.shape[0] != m or m < 2:
        raise GenmetricsError(f"kid: two subsets of m >= 2 rows each needed, got {m}, {len(y)}")
    return _mmd2_from_kernels(
        polynomial_kernel(x, x), polynomial_kernel(x, y), polynomial_kernel(y, y)
    )


@distribution_metric(
    "kid",
    values={"kid": LOWER, "kid_std": None},
    family="quality/diversity",
    headline=("kid",),
    # MMD² ≥ 0, but its unbiased estimate falls below 0 where the sets cannot be told apart:
    # "≳ 0" has no range, so its interval is not cut at 0 (it would miss such an estimate)
    scale={"kid": "≳ 0", "kid_std": "≥ 0"},
    params={
        "subsets": (Interval(int, 1, None), "random subsets the MMD² is averaged over"),
        "subset_size": (
            Interval(int, 2, None),
            "rows per subset and set; capped at the smaller set (clean-fid's min(n1, n2, size))",
        ),
        "seed": (Interval(int, 0, 2**32 - 1), "seed of np.random.RandomState drawing the subsets"),
    },
    upstream="torch-fidelity 0.4.0 kid_features_to_metric (poly kernel, unbiased MMD²)",
    citation="Bińkowski et al. (2018)",
)
def kid(
    *,
    reference: np.ndarray,
    candidate: np.ndarray,
    subsets: int = 100,
    subset_size: int = 1000,
    seed: int = 2020,
) -> MetricResult:
    """Kernel Inception Distance: the unbiased MMD² under k(x, y) = (x·y / d + 1)^3 between
    ``subset_size`` candidate and reference embeddings, averaged over ``subsets`` random
    subsets drawn from ``np.random.RandomState(seed)`` as torch-fidelity draws them (mean
    ``kid`` and std ``kid_std`` over subsets); lower = closer.
    """
    check_dims(reference, candidate)
    cand = np.asarray(candidate, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.float64)
    n1, n2 = len(cand), len(ref)
    m = min(subset_size, n1, n2)
    if m < 2:
        raise GenmetricsError(
            f"kid: each set needs at least 2 embeddings, got {n1} candidate(s) and "
            f"{n2} reference(s)"
        )
    rng = np.random.RandomState(seed)
    mmds = np.zeros(subsets)
    whole = None
    if n1 * n1 + n2 * n2 + n1 * n2 <= FULL_KERNEL_MAX:
        whole = (
            polynomial_kernel(cand, cand),
            polynomial_kernel(cand, ref),
            polynomial_kernel(ref, ref),
        )
    for i in range(subsets):
        ic = rng.choice(n1, m, replace=False)
        ir = rng.choice(n2, m, replace=False)
        if whole is None:
            mmds[i] = mmd2_unbiased(cand[ic], ref[ir])
        else:
            k_cc, k_cr, k_rr = whole
            mmds[i] = _mmd2_from_kernels(
                k_cc[np.ix_(ic, ic)], k_cr[np.ix_(ic, ir)], k_rr[np.ix_(ir, ir)]
            )
    return MetricResult(
        values={"kid": float(np.mean(mmds)), "kid_std": float(np.std(mmds))},
        n={"reference": n2, "candidate": n1, "subset_size": m, "subsets": subsets},
    )
