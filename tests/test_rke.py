"""RKE mode count (``rke``): hand-computed cases, the authors' ``rke-score`` 0.0.7 package (an
oracle: ``pip install --no-deps rke-score==0.0.7``) and the order-2 Vendi Score of the same
Gaussian kernel (``vendi-score`` 0.0.3)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import _kernels, compute
from genmetrics.metrics.rke import gaussian_sq_kernel_mean
from genmetrics.metrics.vendi import score_kernel


def _gaussian_kernel(x: np.ndarray, sigma: float) -> np.ndarray:
    """k(x, y) = exp(−‖x − y‖² / (2σ²)), every pair, written out."""
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * sigma**2))


def test_two_points_at_a_known_distance():
    """Two points σ·√(ln 2) apart: k = exp(−ln 2 / 2), k² = 1/2; Σ_{i,j} k² = 1 + 1 + ½ + ½ = 3
    over n² = 4 pairs, so RKE = 4/3."""
    sigma = 0.7
    x = np.array([[0.0, 0.0], [sigma * math.sqrt(math.log(2)), 0.0]])
    got = compute("rke", x, params={"sigma": sigma, "normalize": False})
    assert got.values["rke"] == pytest.approx(4 / 3, rel=1e-12)


def test_duplicates_and_far_points():
    """x1 = x2, x3 far (k ≈ 0): k² = [[1, 1, 0], [1, 1, 0], [0, 0, 1]], Σ = 5, RKE = 9/5."""
    x = np.array([[0.0], [0.0], [100.0]])
    got = compute("rke", x, params={"sigma": 1.0, "normalize": False})
    assert got.values["rke"] == pytest.approx(9 / 5, rel=1e-12)


def test_well_separated_equal_clusters_give_the_number_of_modes():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(5, 8)) * 100.0  # pairwise distances ≫ σ
    x = np.repeat(centres, 30, axis=0) + rng.normal(scale=1e-3, size=(150, 8))  # tight, equal
    got = compute("rke", x, params={"sigma": 1.0, "normalize": False})
    assert got.values["rke"] == pytest.approx(5.0, rel=1e-4)
    # unequal sizes 60/30/30/20/10: 1 / Σ p_c², the order-2 count of the size distribution
    sizes = [60, 30, 30, 20, 10]
    y = np.concatenate([np.repeat(c[None], s, 0) for c, s in zip(centres, sizes, strict=True)])
    p = np.array(sizes) / 150
    got = compute("rke", y, params={"sigma": 1.0, "normalize": False})
    # ‖x − y‖² = ‖x‖² + ‖y‖² − 2x·y of norms about 300 is exact to about 1e-11, not 0
    assert got.values["rke"] == pytest.approx(1 / (p**2).sum(), rel=1e-9)


def test_equals_the_authors_package():
    rke_score = pytest.importorskip("rke_score", reason="pip install --no-deps rke-score==0.0.7")
    x = np.random.default_rng(1).normal(size=(40, 5))
    for sigma in (0.5, 2.0, 4.0):
        # compute_rke_mc_frobenius_norm: (1/n²) Σ_{i,j} k², every ordered pair, per bandwidth
        theirs = rke_score.RKE(kernel_bandwidth=sigma).compute_rke_mc_frobenius_norm(x)[sigma]
        got = compute("rke", x, params={"sigma": sigma, "normalize": False}).values["rke"]
        assert got == pytest.approx(1 / theirs, rel=1e-12)


@pytest.mark.parametrize("normalize", [False, True])
def test_equals_the_order_2_vendi_score_of_the_same_kernel(normalize):
    vendi = pytest.importorskip("vendi_score.vendi", reason="pip install --no-deps vendi-score")
    x = np.random.default_rng(2).normal(size=(60, 4)) * 0.6
    sigma = 0.8
    u = x / np.linalg.norm(x, axis=1, keepdims=True) if normalize else x
    k = _gaussian_kernel(u, sigma)
    got = compute("rke", x, params={"sigma": sigma, "normalize": normalize}).values["rke"]
    assert got == pytest.approx(score_kernel(k, 2), rel=1e-10)  # 1 / Σ λ_i², λ of K/n
    assert got == pytest.approx(1 / np.sum((k / len(k)) ** 2), rel=1e-12)  # 1 / ‖K/n‖_F²
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the package's scipy.sparse.csr deprecation
        assert got == pytest.approx(vendi.score_K(k, q=2), rel=1e-10)


def test_normalize_scales_rows_to_unit_norm():
    x = np.random.default_rng(3).normal(size=(25, 6))
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    scaled = x * np.random.default_rng(4).uniform(0.1, 50, size=(25, 1))
    a = compute("rke", scaled).values["rke"]  # normalize=true by default
    b = compute("rke", u, params={"normalize": False}).values["rke"]
    assert a == pytest.approx(b, rel=1e-12)
    assert compute("rke", scaled, params={"normalize": False}).values["rke"] != pytest.approx(b)


def test_blocks_give_the_one_shot_sum(monkeypatch):
    x = np.random.default_rng(5).normal(size=(37, 3))
    want = np.mean(_gaussian_kernel(x, 1.3) ** 2)
    monkeypatch.setattr(_kernels, "BLOCK_ELEMENTS", 37 * 4)  # blocks of 4 rows, the last of 1
    assert len(list(_kernels.row_blocks(37))) == 10
    assert gaussian_sq_kernel_mean(x, 1.3) == pytest.approx(want, rel=1e-12)


def test_sigma_must_be_positive():
    for bad in (0, -1.0):
        with pytest.raises(GenmetricsError, match=r"rke params\.sigma: must be a number > 0"):
            compute("rke", np.eye(3), params={"sigma": bad})


def test_extreme_bandwidths_give_the_limits_not_nan_or_an_error():
    """σ → 0: k = 1 for equal rows only, so RKE = n² / (n + 2·pairs of equal rows); σ → ∞:
    every k = 1, RKE = 1. σ² is never formed, so σ = 1e300 (σ² overflows) and σ = 1e-300
    (σ² underflows to 0, 0/0 on the diagonal) give those limits; a diagonal distance rounded
    above 0 no longer drops a diagonal term (σ = 1e-160 gave 39 of 30 rows)."""
    x = np.random.default_rng(0).normal(size=(30, 8))
    x[5] = x[3]  # one pair of equal rows: Σ k² = 30 + 2
    for normalize in (True, False):
        for sigma in (5e-324, 1e-300, 1e-160, 1e-8):
            got = compute("rke", x, params={"sigma": sigma, "normalize": normalize})
            assert got.values["rke"] == pytest.approx(30**2 / 32, rel=1e-12), sigma
        for sigma in (1e8, 1e200, 1e300, 1.7e308):
            got = compute("rke", x, params={"sigma": sigma, "normalize": normalize})
            assert got.values["rke"] == pytest.approx(1.0, rel=1e-12), sigma
