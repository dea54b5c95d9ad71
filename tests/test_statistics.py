"""The shared statistics (genmetrics.analysis.statistics) against scipy/numpy: correlation
kernels with ties, missing values and constant columns, z-scores within strata, seeded
resampling and percentile intervals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from genmetrics.analysis.statistics import (
    METHODS,
    bootstrap_indices,
    bootstrap_pairwise_correlation,
    cross_correlation,
    kendall_columns,
    nan_mean,
    pairwise_correlation,
    percentile_interval,
    snap,
    stratified_indices,
    zscore_within,
)

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def scipy_r(method: str, a: np.ndarray, b: np.ndarray) -> float:
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return np.nan
    return float(SCIPY[method](a, b).statistic)


@pytest.mark.parametrize("method", METHODS)
def test_pairwise_correlation_equals_scipy_on_pairwise_complete_rows(method):
    """Ties (integer values), missing values and a constant column: every pair over the rows
    where both are present, NaN where a side is constant there."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        n = int(rng.integers(4, 14))
        x = rng.integers(0, 4, size=(n, 4)).astype(float)
        if trial % 2:
            x[:, :2] += rng.normal(size=(n, 2))
        x[rng.random((n, 4)) < 0.25] = np.nan
        x[:, 3] = 1.5
        got = pairwise_correlation(x, method)
        assert got.shape == (4, 4)
        for a in range(4):
            for b in range(4):
                if a == b:
                    continue
                both = ~np.isnan(x[:, a]) & ~np.isnan(x[:, b])
                want = scipy_r(method, x[both, a], x[both, b])
                np.testing.assert_allclose(got[a, b], want, atol=1e-10, err_msg=f"{trial} {a}{b}")


def test_pairwise_correlation_rejects_an_unknown_method():
    with pytest.raises(ValueError, match="pearson, spearman, kendall"):
        pairwise_correlation(np.zeros((3, 2)), "tau")


@pytest.mark.parametrize("method", METHODS)
def test_cross_correlation_equals_scipy_batched_with_ties(method):
    """(batch, n, K) × (batch, n, C) along the n axis: every column pair of every batch as
    scipy computes it; a constant side is NaN."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 3, size=(5, 8, 3)).astype(float)
    x[..., 0] += rng.normal(size=(5, 8))
    y = rng.integers(0, 4, size=(5, 8, 2)).astype(float)
    y[2, :, 1] = 4.0  # constant in one batch
    got = cross_correlation(method, x, y, axis=1)
    assert got.shape == (5, 3, 2)
    for b in range(5):
        for k in range(3):
            for c in range(2):
                want = scipy_r(method, x[b, :, k], y[b, :, c])
                np.testing.assert_allclose(got[b, k, c], want, atol=1e-12)
    assert np.isnan(got[2, :, 1]).all()


@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_rank_methods_tie_values_equal_up_to_rounding(method):
    """Means of the same ratings summed in another order differ in the last bits: the rank
    methods tie them (snap), as they would tie exactly equal values."""
    a = np.array([0.1 + 0.2, 0.3, 0.5, 0.7])
    assert a[0] != a[1] and snap(a)[0] == snap(a)[1]
    b = np.array([1.0, 2.0, 3.0, 4.0])
    got = cross_correlation(method, a[:, None], b[:, None], axis=0)[0, 0]
    want = SCIPY[method](np.array([0.3, 0.3, 0.5, 0.7]), b).statistic
    assert got == pytest.approx(want, abs=1e-12)


def test_kendall_columns_equals_the_vectorised_kernel():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, size=(40, 3)).astype(float)
    y = np.column_stack([x[:, 0] + rng.integers(0, 3, 40), np.full(40, 2.0)])
    got = kendall_columns(x, y)
    want = cross_correlation("kendall", x, y, axis=0)
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert np.isnan(got[:, 1]).all()


def test_zscore_within_equals_scipy_per_stratum():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(9, 3))
    x[1, 0] = np.nan
    x[6:, 2] = 3.0  # constant in stratum "b"
    strata = np.array(list("aaaaaabbb"))
    z = zscore_within(x, strata)
    for s in "ab":
        rows = strata == s
        for c in range(3):
            if np.nanmax(x[rows, c]) == np.nanmin(x[rows, c]):
                assert np.isnan(z[rows, c]).all()
            else:
                want = stats.zscore(x[rows, c], ddof=1, nan_policy="omit")
                np.testing.assert_allclose(z[rows, c], want, atol=1e-12)


def test_nan_mean_ignores_nan_and_is_nan_when_all_are():
    per = np.array([[1.0, np.nan], [3.0, np.nan], [np.nan, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = nan_mean(per)
    assert out[0] == 2.0 and np.isnan(out[1])


def test_bootstrap_indices_are_seeded_draws_with_replacement():
    a = bootstrap_indices(np.random.default_rng(3), 7, 50)
    b = bootstrap_indices(np.random.default_rng(3), 7, 50)
    assert a.shape == (50, 7) and (a == b).all() and a.min() >= 0 and a.max() < 7
    np.testing.assert_array_equal(a, np.random.default_rng(3).integers(0, 7, size=(50, 7)))
    one = bootstrap_indices(np.random.default_rng(3), 7)
    np.testing.assert_array_equal(one, a[0])


def test_stratified_indices_stay_within_their_groups():
    groups = [np.array([0, 1, 2]), np.array([5, 6])]
    idx = stratified_indices(np.random.default_rng(0), groups)
    assert len(idx) == 5 and set(idx[:3]) <= {0, 1, 2} and set(idx[3:]) <= {5, 6}


def test_bootstrap_pairwise_correlation_replicates_resampled_rows():
    """Replicate b is pairwise_correlation of the rows drawn b-th from default_rng(seed);
    stratified: drawn within strata, then z-scored within strata."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=(10, 3))
    x[2, 1] = np.nan
    strata = np.array([0] * 5 + [1] * 5)
    reps = bootstrap_pairwise_correlation(x, strata, ["pearson", "kendall"], 4, [1, 2])
    draw = np.random.default_rng([1, 2])
    groups = [np.arange(5), np.arange(5, 10)]
    for b in range(4):
        idx = stratified_indices(draw, groups)
        xb = zscore_within(x[idx], strata[idx])
        for m in ("pearson", "kendall"):
            np.testing.assert_array_equal(reps[m][b], pairwise_correlation(xb, m))
    assert bootstrap_pairwise_correlation(x, None, ["pearson"], 0, 0) == {}
    assert bootstrap_pairwise_correlation(x[:1], None, ["pearson"], 5, 0) == {}


def test_percentile_interval_leaves_nan_out_and_is_nan_when_all_are():
    rng = np.random.default_rng(4)
    reps = rng.normal(size=(200, 2))
    reps[::3, 0] = np.nan
    reps[:, 1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = percentile_interval(reps, 0.9)
    kept = reps[~np.isnan(reps[:, 0]), 0]
    assert low[0] == np.quantile(kept, 0.05) and high[0] == np.quantile(kept, 0.95)
    assert np.isnan(low[1]) and np.isnan(high[1])
    lo, hi = percentile_interval(kept, 0.9)  # 1-d: scalars
    assert np.ndim(lo) == 0 and (lo, hi) == (low[0], high[0])
