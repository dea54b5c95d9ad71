"""mauve: agreement with mauve-text 0.4.0 on identical features, curve/FI algebra, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute, get
from genmetrics.metrics._quantize import faiss_available
from genmetrics.metrics.mauve import (
    divergence_curve,
    frontier_integral,
    mauve_from_counts,
    mauve_from_curve,
)

mauve_text = pytest.importorskip("mauve")
VALUES = ("mauve", "frontier_integral", "mauve_star", "frontier_integral_star")


def features(seed: int, n: int, d: int = 48, shift: float = 0.0, n_modes: int = 8):
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(100).normal(size=(8, d)) * 3
    lab = rng.integers(0, n_modes, size=n)
    return centers[lab] + rng.normal(size=(n, d)) + shift


@pytest.fixture(scope="module")
def pq():
    p = features(1, 600)
    q = features(2, 500, shift=0.15, n_modes=6)  # misses two modes, slightly shifted
    return p, q


@pytest.mark.skipif(not faiss_available(), reason="bit-level agreement needs faiss")
def test_matches_mauve_text_with_faiss(pq):
    p, q = pq
    ref = mauve_text.compute_mauve(p_features=p, q_features=q)
    res = compute("mauve", q, p)
    for name in VALUES:
        assert res.values[name] == pytest.approx(getattr(ref, name), abs=1e-9), name
    np.testing.assert_allclose(res.extras["p_hist"], ref.p_hist, atol=1e-12)
    np.testing.assert_allclose(res.extras["q_hist"], ref.q_hist, atol=1e-12)
    np.testing.assert_allclose(res.extras["divergence_curve"], ref.divergence_curve, atol=1e-12)
    assert res.extras["num_buckets"] == ref.num_buckets == 50
    assert 0.05 < res.values["mauve"] < 0.95  # a real, non-degenerate comparison


@pytest.mark.skipif(not faiss_available(), reason="bit-level agreement needs faiss")
def test_matches_mauve_text_non_default_params(pq):
    p, q = pq
    ref = mauve_text.compute_mauve(
        p_features=p,
        q_features=q,
        num_buckets=17,
        kmeans_explained_var=0.8,
        kmeans_num_redo=2,
        kmeans_max_iter=50,
        mauve_scaling_factor=3,
        divergence_curve_discretization_size=40,
        seed=7,
    )
    res = compute(
        "mauve",
        q,
        p,
        {
            "num_buckets": 17,
            "pca": 0.8,
            "kmeans_num_redo": 2,
            "kmeans_max_iter": 50,
            "scaling": 3,
            "divergence_curve_discretization_size": 40,
            "seed": 7,
        },
    )
    for name in VALUES:
        assert res.values[name] == pytest.approx(getattr(ref, name), abs=1e-9), name


@pytest.mark.skipif(not faiss_available(), reason="bit-level agreement needs faiss")
def test_pca_solvers_against_mauve_text():
    """Below scikit-learn's covariance threshold (n < 10 d) mauve-text runs the full SVD:
    pca_solver=auto reproduces it bit for bit, the default covariance_eigh to 0.01 (these
    histograms were identical)."""
    p = features(5, 300, d=96)
    q = features(6, 300, d=96, shift=0.2, n_modes=5)
    ref = mauve_text.compute_mauve(p_features=p, q_features=q)
    exact = compute("mauve", q, p, {"pca_solver": "auto"})
    fast = compute("mauve", q, p)
    for name in VALUES:
        assert exact.values[name] == pytest.approx(getattr(ref, name), abs=1e-9), name
        assert fast.values[name] == pytest.approx(getattr(ref, name), abs=0.01), name
    np.testing.assert_array_equal(exact.extras["p_hist"], ref.p_hist)
    assert 0.05 < ref.mauve < 0.95


def test_sklearn_kmeans_close_to_mauve_text(pq):
    """Without faiss (sklearn k-means) values stay within 0.01-0.02 of mauve-text."""
    p, q = pq
    ref = mauve_text.compute_mauve(p_features=p, q_features=q)
    res = compute("mauve", q, p, {"kmeans": "sklearn"})
    assert res.values["mauve"] == pytest.approx(ref.mauve, abs=0.02)
    assert res.values["frontier_integral"] == pytest.approx(ref.frontier_integral, abs=0.02)


def test_ordering_closer_candidate_scores_higher():
    p = features(1, 500)
    near = features(3, 500)
    far = features(4, 500, shift=0.6, n_modes=4)
    m_near = compute("mauve", near, p).values
    m_far = compute("mauve", far, p).values
    assert m_near["mauve"] > m_far["mauve"] + 0.2
    assert m_near["frontier_integral"] < m_far["frontier_integral"]


def test_curve_and_frontier_integral_by_hand():
    # disjoint supports: every KL is infinite except at the ends -> MAUVE 0 ... by the end points
    p = np.array([0.5, 0.5, 0.0, 0.0])
    q = np.array([0.0, 0.0, 0.5, 0.5])
    out = mauve_from_counts(p * 10, q * 10)
    assert out["frontier_integral"] == pytest.approx(1.0)  # 2 * (sum p/4 + sum q/4)
    # curve points: for any mixture w the KLs are log(1/(1-w)) and log(1/w) (finite)
    w = np.linspace(1e-6, 1 - 1e-6, 25)
    curve = divergence_curve(p, q)
    np.testing.assert_allclose(curve[1:-1, 0], np.exp(-5 * np.log(1 / (1 - w))), rtol=1e-12)
    np.testing.assert_allclose(curve[1:-1, 1], np.exp(-5 * np.log(1 / w)), rtol=1e-12)
    # identical histograms: frontier integral 0; MAUVE follows the reference's tie handling
    # in the sorted curve (1.0 here; metrics-reference E.4 reports 0.75 for other inputs)
    from mauve.compute_mauve import get_divergence_curve_for_multinomials
    from sklearn.metrics import auc

    for h in (np.array([3, 1, 2]), np.array([1, 1, 1, 1, 7]), np.array([2, 3, 5, 7, 11, 13])):
        same = mauve_from_counts(h, h)
        assert same["frontier_integral"] == 0.0
        x, y = get_divergence_curve_for_multinomials(
            h / h.sum(), h / h.sum(), np.linspace(1e-6, 1 - 1e-6, 25), 5
        ).T
        i1, i2 = np.argsort(x), np.argsort(y)
        ref = 0.5 * (auc(x[i1], y[i1]) + auc(y[i2], x[i2]))
        assert same["mauve"] == ref

    # one hand-computed frontier-integral term: p=(0.2, 0.8), q=(0.6, 0.4)
    def term(a, b):
        return 0.25 * (a + b) - 0.5 * a * b * (math.log(a) - math.log(b)) / (a - b)

    expected = 2 * (term(0.2, 0.6) + term(0.8, 0.4))
    assert frontier_integral(np.array([0.2, 0.8]), np.array([0.6, 0.4])) == pytest.approx(expected)


def test_curve_functions_match_mauve_text():
    from mauve.compute_mauve import get_divergence_curve_for_multinomials, get_fronter_integral

    rng = np.random.default_rng(0)
    for _ in range(5):
        p = rng.dirichlet(np.ones(30) * 0.3)
        q = rng.dirichlet(np.ones(30) * 0.3)
        p[rng.integers(0, 30, 3)] = 0
        p /= p.sum()
        w = np.linspace(1e-6, 1 - 1e-6, 25)
        ref_curve = get_divergence_curve_for_multinomials(p, q, w, 5)
        ours = divergence_curve(p, q)
        np.testing.assert_array_equal(ours, ref_curve)
        assert frontier_integral(p, q) == pytest.approx(get_fronter_integral(p, q), abs=1e-12)
        assert 0 <= mauve_from_curve(ours) <= 1


def test_registered_defaults():
    m = get("mauve")
    assert tuple(m.values) == VALUES
    expected = {
        "num_buckets": "auto",
        "pca": 0.9,
        "scaling": 5,
        "seed": 25,
        "kmeans_num_redo": 5,
        "kmeans_max_iter": 500,
        "divergence_curve_discretization_size": 25,
        "pca_solver": "covariance_eigh",
    }
    for k, v in expected.items():
        assert m.defaults[k] == v


@pytest.mark.parametrize(
    "params,msg",
    [
        ({"num_buckets": 1}, "num_buckets"),
        ({"num_buckets": 10_000}, "exceeds"),
        ({"num_buckets": "many"}, "num_buckets"),
        ({"scaling": 0}, "scaling"),
        ({"kmeans": "hdbscan"}, "kmeans"),
        ({"pca": -0.1}, "pca"),
    ],
)
def test_bad_params(pq, params, msg):
    p, q = pq
    with pytest.raises(GenmetricsError, match=msg):
        compute("mauve", q[:100], p[:100], params)


def test_bad_features():
    rng = np.random.default_rng(0)
    p = rng.normal(size=(50, 4))
    with pytest.raises(GenmetricsError, match="dimensions"):
        compute("mauve", p[:, :3], p)
    bad = p.copy()
    bad[0, 0] = np.nan
    with pytest.raises(GenmetricsError, match="NaN"):
        compute("mauve", p, bad)
    with pytest.raises(GenmetricsError, match="2-D"):
        compute("mauve", p, p[0])


def test_identical_histograms_give_what_mauve_text_gives_not_one():
    """The module docstring's artefact, against mauve-text's own functions: with p = q the
    interior curve points all tie at (1, 1); exact zeros give 0.75, rounding ~1.0."""
    from mauve.compute_mauve import compute_area_under_curve, get_divergence_curve_for_multinomials

    w = np.linspace(1e-6, 1 - 1e-6, 25)
    for counts, want in (([1.0, 1.0, 2.0], 0.75), ([1.0] * 5, 1.0)):
        p = np.asarray(counts) / sum(counts)
        x, y = get_divergence_curve_for_multinomials(p, p, w, 5).T
        i1, i2 = np.argsort(x), np.argsort(y)
        theirs = 0.5 * (
            compute_area_under_curve(x[i1], y[i1]) + compute_area_under_curve(y[i2], x[i2])
        )
        ours = mauve_from_counts(np.asarray(counts), np.asarray(counts))["mauve"]
        assert ours == theirs == pytest.approx(want)
