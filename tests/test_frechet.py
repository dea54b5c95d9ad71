"""Fréchet distance (Heusel et al. 2017) on embeddings: pytorch-fid's function as the oracle
(tolerance 1e-6 relative; it is the same float in practice), hand-computed Gaussians, and
pytorch-fid's two special paths (the eps retry of a singular product, the imaginary-part
check)."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
import scipy.linalg

from genmetrics import GenmetricsError
from genmetrics.metrics import compute, get
from genmetrics.metrics.frechet import frechet_distance, gaussian_stats

# ------------------------------------------------------------------ the oracle
#
# pytorch-fid 0.3.0 (PyPI wheel pytorch_fid-0.3.0-py3-none-any.whl), pytorch_fid/fid_score.py,
# calculate_frechet_distance, copied verbatim below (docstring shortened). The package is not
# installed: it requires torchvision, and `pip install pytorch-fid==0.3.0` would replace the
# pinned CPU torch with torch 2.14 + CUDA. Its module imports torchvision at the top, so the
# function is copied rather than imported.
#
# `linalg` is scipy.linalg except for one shim: SciPy 1.16 deprecated sqrtm's `disp` (gone in
# 1.18); with disp=False it returned (root, error estimate), which the shim keeps.


def _sqrtm(a, disp=True):
    root = scipy.linalg.sqrtm(a)  # looked up at call time: the tests below may replace it
    return root if disp else (root, None)


linalg = types.SimpleNamespace(sqrtm=_sqrtm)


# fmt: off
def calculate_frechet_distance(mu1, sigma1, mu2, sigma2, eps=1e-6):
    """Numpy implementation of the Frechet Distance.
    The Frechet distance between two multivariate Gaussians X_1 ~ N(mu_1, C_1)
    and X_2 ~ N(mu_2, C_2) is
            d^2 = ||mu_1 - mu_2||^2 + Tr(C_1 + C_2 - 2*sqrt(C_1*C_2)).

    Stable version by Dougal J. Sutherland.
    """

    mu1 = np.atleast_1d(mu1)
    mu2 = np.atleast_1d(mu2)

    sigma1 = np.atleast_2d(sigma1)
    sigma2 = np.atleast_2d(sigma2)

    assert mu1.shape == mu2.shape, \
        'Training and test mean vectors have different lengths'
    assert sigma1.shape == sigma2.shape, \
        'Training and test covariances have different dimensions'

    diff = mu1 - mu2

    # Product might be almost singular
    covmean, _ = linalg.sqrtm(sigma1.dot(sigma2), disp=False)
    if not np.isfinite(covmean).all():
        msg = ('fid calculation produces singular product; '  # noqa: UP031
               'adding %s to diagonal of cov estimates') % eps
        print(msg)
        offset = np.eye(sigma1.shape[0]) * eps
        covmean = linalg.sqrtm((sigma1 + offset).dot(sigma2 + offset))

    # Numerical error might give slight imaginary component
    if np.iscomplexobj(covmean):
        if not np.allclose(np.diagonal(covmean).imag, 0, atol=1e-3):
            m = np.max(np.abs(covmean.imag))
            raise ValueError('Imaginary component {}'.format(m))  # noqa: UP032
        covmean = covmean.real

    tr_covmean = np.trace(covmean)

    return (diff.dot(diff) + np.trace(sigma1)
            + np.trace(sigma2) - 2 * tr_covmean)
# fmt: on


def _pytorch_fid(act1: np.ndarray, act2: np.ndarray) -> float:
    """pytorch-fid's statistics (calculate_activation_statistics: np.mean over rows,
    np.cov(rowvar=False), i.e. ddof = 1) and distance."""
    a1, a2 = np.asarray(act1, np.float64), np.asarray(act2, np.float64)
    mu1, sigma1 = np.mean(a1, axis=0), np.cov(a1, rowvar=False)
    mu2, sigma2 = np.mean(a2, axis=0), np.cov(a2, rowvar=False)
    return float(calculate_frechet_distance(mu1, sigma1, mu2, sigma2))


def _frechet(candidate, reference, **params):
    return compute("frechet", np.asarray(candidate), np.asarray(reference), params)


# ------------------------------------------------------------------ against pytorch-fid


@pytest.mark.parametrize(
    ("n_cand", "n_ref", "d", "seed"),
    [
        (300, 250, 8, 0),  # n > d: full-rank covariances
        (120, 200, 16, 1),
        (12, 9, 20, 2),  # n < d: singular covariances (rank 11 and 8)
        (40, 40, 1, 3),  # one dimension
    ],
)
def test_matches_pytorch_fid(n_cand, n_ref, d, seed):
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(d, d))
    cand = (rng.normal(size=(n_cand, d)) @ mix + 0.3).astype(np.float32)  # embeddings' dtype
    ref = rng.gamma(2.0, 1.0, size=(n_ref, d)) @ mix.T
    ours = _frechet(cand, ref)
    theirs = _pytorch_fid(cand, ref)
    assert ours.values["frechet"] == pytest.approx(theirs, rel=1e-6)
    assert ours.values["frechet_mean"] + ours.values["frechet_cov"] == pytest.approx(
        theirs, rel=1e-6
    )
    assert ours.extras["eps_offset"] is False
    assert ours.extras["rank_deficient"] is (min(n_cand, n_ref) <= d)
    assert ours.n == {"reference": n_ref, "candidate": n_cand}


def test_statistics_are_pytorch_fids_ddof_1():
    x = np.array([[0.0, 1.0], [2.0, 5.0], [4.0, 0.0]])
    mu, sigma = gaussian_stats(x)
    assert mu.tolist() == [2.0, 2.0]
    # ddof = 1: var of (0, 2, 4) = 8 / 2, var of (1, 5, 0) = 14 / 2, cov = (-2*-1 + 0 + 2*-2) / 2
    assert sigma.tolist() == [[4.0, -1.0], [-1.0, 7.0]]


# ------------------------------------------------------------------ hand-computed


def test_one_dimensional_gaussians_by_hand():
    """1-D: FD = (mu1 - mu2)^2 + (s1 - s2)^2 with the sample standard deviations (ddof 1)."""
    cand = [[1.0], [3.0], [5.0]]  # mean 3, variance (4 + 0 + 4) / 2 = 4: s = 2
    ref = [[-1.0], [1.0]]  # mean 0, variance (1 + 1) / 1 = 2: s = sqrt 2
    r = _frechet(cand, ref)
    want = (3 - 0) ** 2 + (2 - math.sqrt(2)) ** 2  # = 15 - 4 sqrt 2
    assert r.values["frechet"] == pytest.approx(want, rel=1e-12)
    assert r.values["frechet_mean"] == 9.0
    assert r.values["frechet_cov"] == pytest.approx((2 - math.sqrt(2)) ** 2, rel=1e-12)
    # symmetric in its two sets
    assert _frechet(ref, cand).values["frechet"] == pytest.approx(want, rel=1e-12)


def test_diagonal_covariances_add_per_dimension_by_hand():
    """Independent coordinates with diagonal sample covariances: the sum of the 1-D cases."""
    cand = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])  # var 2/3, 8/3; mean 0
    ref = np.array([[3.0, 1.0], [1.0, 1.0], [2.0, 4.0], [2.0, -2.0]])  # var 2/3, 6; mean (2, 1)
    want = (2**2 + 1**2) + 0.0 + (math.sqrt(8 / 3) - math.sqrt(6)) ** 2
    assert _frechet(cand, ref).values["frechet"] == pytest.approx(want, rel=1e-12)


def test_a_shift_costs_its_squared_length_and_a_copy_nothing():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(400, 6)) @ rng.normal(size=(6, 6))
    shift = np.array([0.5, -1.0, 0.0, 2.0, 0.25, 0.0])
    r = _frechet(x + shift, x)
    assert r.values["frechet"] == pytest.approx(shift @ shift, rel=1e-8)
    assert r.values["frechet_cov"] == pytest.approx(0.0, abs=1e-8)
    assert _frechet(x, x).values["frechet"] == pytest.approx(0.0, abs=1e-8)


# ------------------------------------------------------------------ pytorch-fid's special paths


def _fail_first_call(monkeypatch, make_bad):
    """scipy.linalg.sqrtm whose first call (the plain product) returns ``make_bad(root)``."""
    real = scipy.linalg.sqrtm
    calls = []

    def sqrtm(a, *args, **kwargs):
        calls.append(1)
        root = real(a)
        return make_bad(root) if len(calls) == 1 else root

    monkeypatch.setattr(scipy.linalg, "sqrtm", sqrtm)
    return calls


def test_a_singular_product_is_retried_with_eps_as_pytorch_fid(monkeypatch):
    rng = np.random.default_rng(7)
    cand, ref = rng.normal(size=(30, 5)), rng.normal(size=(25, 5)) * 2
    plain = _frechet(cand, ref, eps=1e-3).values["frechet"]
    calls = _fail_first_call(monkeypatch, lambda r: np.full_like(r, np.nan))
    ours = _frechet(cand, ref, eps=1e-3)
    assert len(calls) == 2 and ours.extras["eps_offset"] is True
    calls.clear()
    mu1, s1 = np.mean(cand, axis=0), np.cov(cand, rowvar=False)
    mu2, s2 = np.mean(ref, axis=0), np.cov(ref, rowvar=False)
    theirs = calculate_frechet_distance(mu1, s1, mu2, s2, eps=1e-3)
    assert len(calls) == 2
    assert ours.values["frechet"] == pytest.approx(theirs, rel=1e-6)
    # the retry used the offset product (eps = 1e-3 moves the value), not the plain one
    assert ours.values["frechet"] != pytest.approx(plain, rel=1e-6)


def test_imaginary_parts_dropped_below_1e3_refused_above(monkeypatch):
    rng = np.random.default_rng(8)
    cand, ref = rng.normal(size=(30, 4)), rng.normal(size=(30, 4)) + 1
    mu1, s1 = np.mean(cand, axis=0), np.cov(cand, rowvar=False)
    mu2, s2 = np.mean(ref, axis=0), np.cov(ref, rowvar=False)

    real = scipy.linalg.sqrtm

    def with_imag(size):
        monkeypatch.setattr(scipy.linalg, "sqrtm", lambda a, *args, **kw: real(a) + size * 1j)

    with_imag(5e-4)  # noise: dropped by both
    ours = _frechet(cand, ref)
    assert ours.values["frechet"] == pytest.approx(
        float(calculate_frechet_distance(mu1, s1, mu2, s2)), rel=1e-6
    )
    assert ours.extras["imag_max"] == pytest.approx(5e-4)
    with_imag(1e-2)  # more than 1e-3 on the diagonal: both refuse
    with pytest.raises(ValueError, match="Imaginary component"):
        calculate_frechet_distance(mu1, s1, mu2, s2)
    with pytest.raises(GenmetricsError, match=r"frechet: .*imaginary part of 0\.01"):
        _frechet(cand, ref)


def test_bad_inputs_are_named():
    with pytest.raises(GenmetricsError, match="2 dimensions but candidate has 3"):
        _frechet(np.zeros((4, 3)), np.ones((4, 2)))
    with pytest.raises(GenmetricsError, match="at least 2 embeddings"):
        _frechet(np.zeros((1, 3)), np.ones((4, 3)))
    with pytest.raises(GenmetricsError, match="dimension"):
        frechet_distance(np.zeros(2), np.eye(2), np.zeros(3), np.eye(3))
    with pytest.raises(GenmetricsError, match=r"\.eps: must be"):
        _frechet(np.zeros((4, 3)), np.ones((4, 3)), eps=0)


def test_registration():
    m = get("frechet")
    assert (m.input, m.reference, m.family) == ("embeddings", "required", "quality/diversity")
    assert m.values == {"frechet": "lower", "frechet_mean": "lower", "frechet_cov": "lower"}
    assert m.headline == ("frechet",) and m.defaults == {"eps": 1e-6}
    assert "Heusel" in m.citation and "pytorch-fid 0.3.0" in m.upstream
