"""Kernel Inception Distance (Bińkowski et al. 2018) on embeddings: torch-fidelity's KID as
the oracle (the same subsets from the same seed; tolerance 1e-10 relative: float64 sums in
another order), clean-fid's where every subset is a whole set, and a hand-computed case."""

from __future__ import annotations

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute, get
from genmetrics.metrics.kid import mmd2_unbiased, polynomial_kernel

# ------------------------------------------------------------------ the oracles
#
# torch-fidelity 0.4.0 (PyPI wheel torch_fidelity-0.4.0-py3-none-any.whl = toshas/torch-fidelity
# 5e211a9), torch_fidelity/metric_kid.py: mmd2 verbatim (its vassert an assert); kernel_poly
# and kid_features_to_metric with get_kwarg(name, kwargs) replaced by parameters holding
# torch_fidelity/defaults.py's values (kid_subsets 100, kid_subset_size 1000,
# kid_kernel_poly_degree 3, kid_kernel_poly_gamma None, kid_kernel_poly_coef0 1, rng_seed
# 2020), and the torch parts of the latter taken out (the torch.is_tensor asserts,
# .cpu().numpy(), tqdm, vprint; kernel_mmd inlined with kernel "poly"). The package is not
# installed: `pip install torch-fidelity==0.4.0` requires torchvision and would replace the
# pinned CPU torch with torch 2.14 + CUDA.


# fmt: off
def mmd2(K_XX, K_XY, K_YY, unit_diagonal=False, mmd_est="unbiased"):
    assert mmd_est in ("biased", "unbiased", "u-statistic"), "Invalid value of mmd_est"

    m = K_XX.shape[0]
    assert K_XX.shape == (m, m)
    assert K_XY.shape == (m, m)
    assert K_YY.shape == (m, m)

    # Get the various sums of kernels that we'll use
    # Kts drop the diagonal, but we don't need to compute them explicitly
    if unit_diagonal:
        diag_X = diag_Y = 1
        sum_diag_X = sum_diag_Y = m
    else:
        diag_X = np.diagonal(K_XX)
        diag_Y = np.diagonal(K_YY)

        sum_diag_X = diag_X.sum()
        sum_diag_Y = diag_Y.sum()

    Kt_XX_sums = K_XX.sum(axis=1) - diag_X
    Kt_YY_sums = K_YY.sum(axis=1) - diag_Y
    K_XY_sums_0 = K_XY.sum(axis=0)

    Kt_XX_sum = Kt_XX_sums.sum()
    Kt_YY_sum = Kt_YY_sums.sum()
    K_XY_sum = K_XY_sums_0.sum()

    if mmd_est == "biased":
        mmd2 = (Kt_XX_sum + sum_diag_X) / (m * m) \
             + (Kt_YY_sum + sum_diag_Y) / (m * m) \
             - 2 * K_XY_sum / (m * m)
    else:
        mmd2 = (Kt_XX_sum + Kt_YY_sum) / (m * (m - 1))
        if mmd_est == "unbiased":
            mmd2 -= 2 * K_XY_sum / (m * m)
        else:
            mmd2 -= 2 * (K_XY_sum - np.trace(K_XY)) / (m * (m - 1))

    return mmd2


def kernel_poly(X, Y, degree=3, gamma=None, coef0=1):
    if gamma is None:
        gamma = 1.0 / X.shape[1]
    K = (np.matmul(X, Y.T) * gamma + coef0) ** degree
    return K


def kid_features_to_metric(features_1, features_2, kid_subsets=100, kid_subset_size=1000,
                           rng_seed=2020):
    n_samples_1, n_samples_2 = len(features_1), len(features_2)
    assert n_samples_1 >= kid_subset_size and n_samples_2 >= kid_subset_size

    mmds = np.zeros(kid_subsets)
    rng = np.random.RandomState(rng_seed)

    for i in range(kid_subsets):
        f1 = features_1[rng.choice(n_samples_1, kid_subset_size, replace=False)]
        f2 = features_2[rng.choice(n_samples_2, kid_subset_size, replace=False)]
        o = mmd2(kernel_poly(f1, f1), kernel_poly(f1, f2), kernel_poly(f2, f2))  # kernel_mmd
        mmds[i] = o

    return {
        "kernel_inception_distance_mean": float(np.mean(mmds)),
        "kernel_inception_distance_std": float(np.std(mmds)),
    }


# clean-fid 0.1.35 (PyPI; = GaParmar/clean-fid e88c4d6), cleanfid/fid.py, kernel_distance,
# verbatim (its module imports torch and torchvision at the top).
def kernel_distance(feats1, feats2, num_subsets=100, max_subset_size=1000):
    n = feats1.shape[1]
    m = min(min(feats1.shape[0], feats2.shape[0]), max_subset_size)
    t = 0
    for _subset_idx in range(num_subsets):
        x = feats2[np.random.choice(feats2.shape[0], m, replace=False)]
        y = feats1[np.random.choice(feats1.shape[0], m, replace=False)]
        a = (x @ x.T / n + 1) ** 3 + (y @ y.T / n + 1) ** 3
        b = (x @ y.T / n + 1) ** 3
        t += (a.sum() - np.diag(a).sum()) / (m - 1) - b.sum() * 2 / m
    kid = t / num_subsets / m
    return float(kid)
# fmt: on


def _kid(candidate, reference, **params):
    return compute("kid", np.asarray(candidate), np.asarray(reference), params)


def _sets(seed: int, n_cand: int, n_ref: int, d: int, shift: float = 0.3):
    rng = np.random.default_rng(seed)
    cand = rng.normal(size=(n_cand, d)) + shift
    ref = rng.standard_t(5, size=(n_ref, d))
    return cand, ref


# ------------------------------------------------------------------ against torch-fidelity


@pytest.mark.parametrize(
    ("n_cand", "n_ref", "d", "subsets", "size", "seed"),
    [
        (120, 90, 16, 100, 50, 2020),  # torch-fidelity's seed and subsets
        (60, 200, 7, 25, 60, 0),  # subset = the whole candidate set
        (300, 300, 32, 10, 2, 123),  # the smallest subsets
    ],
)
def test_matches_torch_fidelity(n_cand, n_ref, d, subsets, size, seed):
    cand, ref = _sets(seed, n_cand, n_ref, d)
    ours = _kid(cand, ref, subsets=subsets, subset_size=size, seed=seed)
    theirs = kid_features_to_metric(cand, ref, subsets, size, seed)
    assert ours.values["kid"] == pytest.approx(theirs["kernel_inception_distance_mean"], rel=1e-10)
    assert ours.values["kid_std"] == pytest.approx(
        theirs["kernel_inception_distance_std"], rel=1e-10, abs=1e-12
    )
    assert ours.n["subset_size"] == size and ours.n["subsets"] == subsets


def test_subsets_cut_from_whole_set_kernels_or_computed_alone_agree(monkeypatch):
    """Above FULL_KERNEL_MAX each subset's kernels are computed alone: the same numbers."""
    from genmetrics.metrics import kid as module

    cand, ref = _sets(12, 70, 50, 9)
    theirs = kid_features_to_metric(cand, ref, 30, 40, 5)["kernel_inception_distance_mean"]
    cut = _kid(cand, ref, subsets=30, subset_size=40, seed=5).values
    monkeypatch.setattr(module, "FULL_KERNEL_MAX", 0)
    alone = _kid(cand, ref, subsets=30, subset_size=40, seed=5).values
    assert cut["kid"] == pytest.approx(theirs, rel=1e-10)
    assert alone["kid"] == pytest.approx(theirs, rel=1e-10)
    assert alone["kid_std"] == pytest.approx(cut["kid_std"], rel=1e-10)


def test_defaults_are_torch_fidelitys():
    assert get("kid").defaults == {"subsets": 100, "subset_size": 1000, "seed": 2020}
    cand, ref = _sets(4, 1000, 1001, 3)
    ours = _kid(cand, ref, subsets=2)  # default size and seed
    theirs = kid_features_to_metric(cand, ref, kid_subsets=2)
    assert ours.values["kid"] == pytest.approx(theirs["kernel_inception_distance_mean"], rel=1e-10)


def test_kernel_and_estimator_equal_torch_fidelity_pieces():
    x, y = _sets(9, 20, 20, 5)
    assert np.allclose(polynomial_kernel(x, y), kernel_poly(x, y), rtol=1e-13, atol=0)
    want = mmd2(kernel_poly(x, x), kernel_poly(x, y), kernel_poly(y, y))
    assert mmd2_unbiased(x, y) == pytest.approx(want, rel=1e-12)


def test_a_subset_size_above_a_set_is_capped_as_clean_fid():
    """m = min(n1, n2, subset_size): with equal sets no larger than it, every subset is a
    whole set, and clean-fid (drawing from np.random, in its own order) gives the same."""
    cand, ref = _sets(11, 40, 40, 6)
    ours = _kid(cand, ref, subsets=5)  # subset_size 1000 → 40
    assert ours.n["subset_size"] == 40
    np.random.seed(0)
    assert ours.values["kid"] == pytest.approx(kernel_distance(cand, ref, 5), rel=1e-10)
    assert ours.values["kid_std"] == pytest.approx(0.0, abs=1e-12)  # the same subset 5 times
    uneven = _kid(cand[:25], ref, subsets=5)
    assert uneven.n["subset_size"] == 25


# ------------------------------------------------------------------ hand-computed


def test_two_points_in_one_dimension_by_hand():
    """X = {1, 2} (candidate), Y = {0, 1}, k(x, y) = (xy + 1)^3 (d = 1):
    K_XX off the diagonal: 2 k(1, 2) = 2 * 27; K_YY: 2 k(0, 1) = 2;
    K_XY: k(1, 0) + k(1, 1) + k(2, 0) + k(2, 1) = 1 + 8 + 1 + 27 = 37;
    MMD² = (54 + 2) / (2 * 1) - 2 * 37 / 4 = 9.5, whichever order the subsets take."""
    r = _kid([[1.0], [2.0]], [[0.0], [1.0]], subsets=4)
    assert r.values == {"kid": 9.5, "kid_std": 0.0}


def test_seeded_and_it_tells_a_shift_from_a_resample():
    cand, ref = _sets(3, 200, 200, 8, shift=0.0)
    a = _kid(cand, ref, subsets=20, subset_size=50, seed=1)
    assert _kid(cand, ref, subsets=20, subset_size=50, seed=1).values == a.values
    assert _kid(cand, ref, subsets=20, subset_size=50, seed=2).values != a.values
    far = _kid(cand + 1.0, ref, subsets=20, subset_size=50, seed=1).values["kid"]
    same = _kid(ref[:100], ref[100:], subsets=20, subset_size=50, seed=1).values["kid"]
    assert far > 10 * abs(same) and far > 0


def test_bad_inputs_are_named():
    with pytest.raises(GenmetricsError, match="2 dimensions but candidate has 3"):
        _kid(np.zeros((4, 3)), np.ones((4, 2)))
    with pytest.raises(GenmetricsError, match="at least 2 embeddings"):
        _kid(np.zeros((1, 3)), np.ones((4, 3)))
    with pytest.raises(GenmetricsError, match=r"\.subset_size: must be"):
        _kid(np.zeros((4, 3)), np.ones((4, 3)), subset_size=1)
    with pytest.raises(GenmetricsError, match=r"\.seed: must be"):
        _kid(np.zeros((4, 3)), np.ones((4, 3)), seed=2**32)


def test_registration():
    m = get("kid")
    assert (m.input, m.reference, m.family) == ("embeddings", "required", "quality/diversity")
    assert m.values == {"kid": "lower", "kid_std": None} and m.headline == ("kid",)
    assert "Bińkowski" in m.citation and "torch-fidelity 0.4.0" in m.upstream


def test_the_interval_of_a_negative_estimate_holds_it():
    """Two halves of one set cannot be told apart: the unbiased MMD² is below 0, and its
    interval over prompts (half-samples, recentred) holds it; cut at 0 as the range of MMD²
    it would be [0, ...] and miss it. Registered on the scale ``≳ 0``, which has no range."""
    from genmetrics.scoring import score_loaded
    from genmetrics.scoring.intervals import DEFAULTS

    x = np.random.default_rng(4).normal(size=(80, 8))
    ids = [f"p{i:02d}" for i in range(40)]
    cand_rows = [{"id": f"g{i}", "prompt_id": p} for i, p in enumerate(ids)]
    ref_rows = [{"id": f"h{i}", "prompt_id": p} for i, p in enumerate(ids)]  # kept whole
    settings = {**DEFAULTS, "resamples": 100, "asked": False}
    rec = score_loaded("kid", x[:40], cand_rows, x[40:], ref_rows, interval=settings)
    point, iv = rec["values"]["kid"], rec["interval"]
    assert point < 0
    assert iv["lower"]["kid"] < 0 and iv["lower"]["kid"] <= point <= iv["upper"]["kid"]
    assert get("kid").scale("kid") == "≳ 0" and get("kid").scale("kid_std") == "≥ 0"
