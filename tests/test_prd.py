"""prd: PR-curve invariants, hand-computed cases, pr-4-llm and prd_score conventions."""

from __future__ import annotations

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute, get
from genmetrics.metrics._quantize import faiss_available
from genmetrics.metrics.prd import (
    f_beta,
    pr4llm_slopes,
    pr_curve,
    prd_from_histograms,
    sajjadi_slopes,
)


def test_identical_histograms_give_one():
    h = np.array([0.1, 0.2, 0.3, 0.4])
    for variant in ("pr4llm", "sajjadi"):
        out = prd_from_histograms(h, h, variant=variant)
        assert out["f8"] == pytest.approx(1.0, abs=1e-6)
        assert out["f1_8"] == pytest.approx(1.0, abs=1e-6)
        assert out["alpha"].max() == pytest.approx(1.0) and out["beta"].max() == pytest.approx(1.0)


def test_disjoint_histograms_give_zero():
    p = np.array([0.5, 0.5, 0.0, 0.0])
    q = np.array([0.0, 0.0, 0.3, 0.7])
    for variant in ("pr4llm", "sajjadi"):
        out = prd_from_histograms(p, q, variant=variant)
        assert out["f8"] == 0.0 and out["f1_8"] == 0.0
        assert not out["alpha"].any() and not out["beta"].any()


def test_hand_computed_mode_dropping():
    """Reference p = (1/2, 1/2), candidate q = (1, 0): q drops one mode of p.

    α(λ) = min(λ/2, 1), β(λ) = min(1/2, 1/λ): precision reaches 1, recall 1/2.
    F_{1/8} peaks at λ = 2: (65/64 · 1/2) / (1/64 + 1/2) = 32.5/33;
    F_8 peaks at λ = 2 as well: 65 · 1/2 / (64 + 1/2) = 32.5/64.5.
    """
    p = np.array([0.5, 0.5])
    q = np.array([1.0, 0.0])
    out = prd_from_histograms(p, q, variant="pr4llm")
    lam = pr4llm_slopes()
    alpha = np.minimum(lam / 2, 1.0)
    beta = np.minimum(0.5, 1 / lam)
    np.testing.assert_allclose(out["alpha"], alpha, rtol=1e-14)
    np.testing.assert_allclose(out["beta"], beta, rtol=1e-14)
    assert out["f1_8"] == pytest.approx(32.5 / 33, abs=2e-3)  # grid does not hit λ = 2
    assert out["f8"] == pytest.approx(32.5 / 64.5, abs=2e-3)
    assert out["f1_8"] <= 32.5 / 33 and out["f8"] <= 32.5 / 64.5
    # swapping roles swaps precision and recall
    swapped = prd_from_histograms(q, p, variant="pr4llm")
    assert swapped["f8"] == pytest.approx(out["f1_8"], abs=1e-3)
    assert swapped["f1_8"] == pytest.approx(out["f8"], abs=1e-3)


def test_slope_grids():
    lam = pr4llm_slopes()
    assert lam.shape == (999,)
    assert lam[499] == pytest.approx(1.0)  # θ = 500 -> tan(π/4)
    np.testing.assert_allclose(lam, np.tan(np.arange(1, 1000) * np.pi / 2000))
    s = sajjadi_slopes()
    assert s.shape == (1001,)
    assert s[0] == pytest.approx(np.tan(1e-10)) and s[500] == pytest.approx(1.0)


def test_curve_matches_prd_score_formulas():
    """compute_prd (prd_score): precision = Σ min(ref·λ, eval), recall = precision / λ."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(20))
    q = rng.dirichlet(np.ones(20) * 0.5)
    slopes = sajjadi_slopes()
    prec_ref = np.minimum(p[None] * slopes[:, None], q[None]).sum(axis=1)
    rec_ref = prec_ref / slopes
    a, b = pr_curve(p, q, slopes, recall_as_ratio=True)
    np.testing.assert_allclose(a, np.clip(prec_ref, 0, 1), rtol=1e-13)
    np.testing.assert_allclose(b, np.clip(rec_ref, 0, 1), rtol=1e-13)
    f8 = np.max((1 + 64) * a * b / (64 * a + b + 1e-10))
    assert prd_from_histograms(p, q, variant="sajjadi")["f8"] == pytest.approx(f8, rel=1e-12)
    assert f_beta(np.array([0.5]), np.array([0.5]), 8)[0] == pytest.approx(0.5, abs=1e-9)


def features(seed: int, n: int, d: int = 24, n_modes: int = 6, shift: float = 0.0):
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(99).normal(size=(6, d)) * 4
    lab = rng.integers(0, n_modes, size=n)
    return centers[lab] + rng.normal(size=(n, d)) + shift


@pytest.mark.skipif(not faiss_available(), reason="needs faiss for pr-4-llm's clustering")
def test_pr4llm_equals_mauve_quantisation_plus_curve():
    """Default variant = mauve-text's histograms (seed 1235) fed to pr-4-llm's pr_curves."""
    mauve_text = pytest.importorskip("mauve")
    p = features(1, 400)
    q = features(2, 400, n_modes=3)
    ref = mauve_text.compute_mauve(p_features=p, q_features=q, seed=1235)
    res = compute("prd", q, p)
    np.testing.assert_allclose(res.extras["p_hist"], ref.p_hist, atol=1e-12)
    np.testing.assert_allclose(res.extras["q_hist"], ref.q_hist, atol=1e-12)
    # pr-4-llm pr_curves, written out: theta = 1..999, concatenate/min/sum
    alpha, beta = [], []
    pc, qc = ref.p_hist.reshape(-1, 1), ref.q_hist.reshape(-1, 1)
    for theta in range(1, 1000):
        t = np.tan(theta * np.pi / 2 / 1000)
        alpha.append(np.min(np.concatenate((t * pc, qc), axis=1), axis=1).sum())
        beta.append(np.min(np.concatenate((pc, qc / t), axis=1), axis=1).sum())
    alpha, beta = np.clip(alpha, 0, 1), np.clip(beta, 0, 1)
    np.testing.assert_allclose(res.extras["alpha"], alpha, rtol=1e-12)
    np.testing.assert_allclose(res.extras["beta"], beta, rtol=1e-12)
    assert res.values["f1_8"] == pytest.approx(np.max(f_beta(alpha, beta, 1 / 8)), rel=1e-12)
    assert res.values["f8"] == pytest.approx(np.max(f_beta(alpha, beta, 8)), rel=1e-12)
    # q covers 3 of 6 modes: precision-like high, recall-like clearly lower
    assert res.values["f1_8"] > 0.9
    assert res.values["f8"] < res.values["f1_8"] - 0.3


def test_sajjadi_variant_orders_mode_dropping():
    p = features(1, 300)
    q_full = features(3, 300)
    q_half = features(4, 300, n_modes=3)
    full = compute("prd", q_full, p, {"variant": "sajjadi", "num_runs": 3})
    half = compute("prd", q_half, p, {"variant": "sajjadi", "num_runs": 3})
    assert full.extras["num_buckets"] == 20 and full.extras["alpha"].shape == (1001,)
    assert full.values["f8"] > half.values["f8"] + 0.2  # recall drops with the modes
    assert half.values["f1_8"] > 0.8  # what q produces is still in p
    again = compute("prd", q_half, p, {"variant": "sajjadi", "num_runs": 3})
    assert again.values == half.values  # seeded


def test_sajjadi_enforces_balance():
    p = features(1, 100)
    q = features(2, 80)
    with pytest.raises(GenmetricsError, match="equal set sizes"):
        compute("prd", q, p, {"variant": "sajjadi"})
    out = compute("prd", q, p, {"variant": "sajjadi", "enforce_balance": False, "num_runs": 1})
    assert 0 <= out.values["f8"] <= 1


def test_registered_and_errors():
    m = get("prd")
    assert {"f8", "f1_8"} <= set(m.values)
    p = features(1, 50)
    with pytest.raises(GenmetricsError, match="variant"):
        compute("prd", p, p, {"variant": "kynkaanniemi"})
    with pytest.raises(GenmetricsError, match="dimensions"):
        compute("prd", p[:, :3], p)
    with pytest.raises(GenmetricsError, match="histograms"):
        prd_from_histograms(np.zeros(3), np.ones(3))
    with pytest.raises(GenmetricsError, match="same length"):
        pr_curve(np.ones(3) / 3, np.ones(2) / 2, pr4llm_slopes())
