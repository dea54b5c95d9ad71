"""MAUVE's quantisation pieces (issue 28): the scikit-learn-free PCA against scikit-learn bit for
bit, the torch k-means against faiss (its init exactly, MAUVE within 0.01) and against float64
brute force (its labels), the device stated in the record."""

from __future__ import annotations

import numpy as np
import pytest
from test_mauve import features  # the Gaussian mixtures of the MAUVE tests

from genmetrics import devices
from genmetrics.metrics import compute
from genmetrics.metrics._quantize import (
    PCA_SOLVERS,
    faiss_available,
    l2_normalize,
    l2_pca,
    pca_fit,
    pca_solver_for,
)

torch = pytest.importorskip("torch")
from genmetrics.metrics._kmeans_torch import (  # noqa: E402
    _Data,
    kmeans_torch,
    nearest_among,
    nearest_float64,
    rand_perm_head,
    split_empty,
)


def spectrum_data(n: int, d: int, seed: int, dtype=np.float64) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)) * np.arange(1, d + 1) ** -0.5 + 0.05 * seed).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n,d", [(1100, 48), (600, 96), (60, 80)])
def test_pca_is_scikit_learn_bit_for_bit(n, d, dtype):
    """l2_normalize = sklearn normalize; pca_fit = PCA(n_components=None, svd_solver=s) for
    every solver; l2_pca(solver=auto) = mauve-text's cluster_feats projection."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import normalize

    p, q = spectrum_data(n // 2, d, 1, dtype), spectrum_data(n - n // 2, d, 2, dtype)
    x = normalize(np.vstack([q, p]), norm="l2", axis=1)
    ours = l2_normalize(np.vstack([q, p]))
    assert ours.dtype == x.dtype and np.array_equal(ours, x)
    for solver in PCA_SOLVERS:
        ref = PCA(n_components=None, svd_solver=solver).fit(x)
        mean, comps, ratio = pca_fit(x, solver)
        assert np.array_equal(mean, ref.mean_)
        assert np.array_equal(comps, ref.components_), solver
        assert np.array_equal(ratio, ref.explained_variance_ratio_), solver
    ref = PCA(n_components=None, whiten=False, random_state=1).fit(x)
    assert ref._fit_svd_solver == pca_solver_for(n, d)
    idx = int(np.argmax(np.cumsum(ref.explained_variance_ratio_) >= 0.9))
    expected = ref.transform(x)[:, : idx + 1].astype(np.float32)
    p_red, q_red = l2_pca(p, q, 0.9, seed=0)
    assert np.array_equal(np.vstack([q_red, p_red]), expected)


def test_pca_solver_policy():
    assert pca_solver_for(4000, 768) == "full"  # 2,000 a side: mauve-text runs the SVD
    assert pca_solver_for(7680, 768) == "covariance_eigh"  # from 3,840 a side: eigh
    assert pca_solver_for(20000, 1024) == "full"  # d > 1000
    assert pca_solver_for(10, 10, "covariance_eigh") == "covariance_eigh"


@pytest.mark.skipif(not faiss_available(), reason="compares with faiss")
def test_init_is_faiss_rand_perm():
    """faiss.Kmeans with niter=0 keeps its initial centroids: rows rand_perm(n, seed + 1)[:k]."""
    import faiss

    x = np.random.default_rng(0).normal(size=(700, 8)).astype(np.float32)
    for seed in (27, 0, 4242, 27 + 2 * 15486557):
        km = faiss.Kmeans(8, 40, niter=0, nredo=1, seed=seed, min_points_per_centroid=1)
        km.train(x)
        assert np.array_equal(km.centroids, x[rand_perm_head(700, 40, seed + 1)]), seed


def test_rand_perm_is_a_permutation_prefix():
    head = rand_perm_head(50, 50, 3)
    assert sorted(head.tolist()) == list(range(50))
    assert np.array_equal(rand_perm_head(50, 7, 3), head[:7])


def test_assign_is_float64_argmin_with_ties():
    """Labels equal the float64 brute-force argmin (first index on exact ties), also for points
    equidistant from two centroids (every point of this lattice ties)."""
    rng = np.random.default_rng(1)
    grid = np.stack(np.meshgrid(np.arange(-4, 5), np.arange(-4, 5)), -1).reshape(-1, 2)
    x = np.hstack([grid, rng.normal(size=(len(grid), 30)) * 1e-4]).astype(np.float32)
    centroids = np.zeros((4, 32))
    centroids[:, :2] = [[-0.5, -0.5], [0.5, -0.5], [-0.5, 0.5], [0.5, 0.5]]
    data = _Data(x, "cpu")
    labels = data.assign(centroids).numpy()
    brute = np.argmin(((x.astype(np.float64)[:, None] - centroids[None]) ** 2).sum(2), axis=1)
    assert np.array_equal(labels, brute)
    y = rng.normal(size=(500, 20)).astype(np.float32)
    c = rng.normal(size=(30, 20))
    brute = np.argmin(((y.astype(np.float64)[:, None] - c[None]) ** 2).sum(2), axis=1)
    assert np.array_equal(_Data(y, "cpu").assign(c).numpy(), brute)


def test_nearest_among_candidates_is_the_full_argmin():
    """The near-tie recheck over candidate pairs only (every row keeps its true nearest and
    some others, grouped by row) gives nearest_float64's labels, the first index on a tie."""
    rng = np.random.default_rng(5)
    c = rng.normal(size=(40, 6))
    c[7] = c[3]  # an exact tie: 3 must win over 7
    x = np.vstack([rng.normal(size=(200, 6)), c[[3, 3, 12]] + 1e-3])
    full = nearest_float64(x, c)
    assert full[200] == 3
    rows, cols = [], []
    for r, best in enumerate(full):
        others = rng.choice(40, size=int(rng.integers(0, 6)), replace=False)
        keep = sorted({int(best), *map(int, others)} | ({7} if best == 3 else set()))
        rows += [r] * len(keep)
        cols += keep
    got = nearest_among(x, c, np.array(rows), np.array(cols), block=37)
    assert np.array_equal(got, full)


def test_centroids_are_exact_means():
    """Fixed-point sums: the mean of 1/3, 1/3 + 2^-20, … is the exactly rounded float64 mean,
    whatever the order of the rows."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 5)).astype(np.float32)
    labels = rng.integers(0, 4, size=300)
    data = _Data(x, "cpu")
    c, counts = data.centroids(torch.from_numpy(labels), 4)
    from fractions import Fraction

    for j in range(4):
        rows = x[labels == j].astype(np.float64)
        exact = [float(sum(Fraction(v) for v in rows[:, col]) / len(rows)) for col in range(5)]
        np.testing.assert_allclose(c[j], exact, rtol=0, atol=2.0**-data.exp)
    order = rng.permutation(300)
    c2, _ = _Data(x[order], "cpu").centroids(torch.from_numpy(labels[order]), 4)
    assert np.array_equal(c, c2)
    assert counts.tolist() == np.bincount(labels, minlength=4).tolist()


def test_split_empty_by_hand():
    """One empty cluster: its centroid becomes a perturbed copy of a donor, ×(1 ± 2^-10)."""
    c = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [4.0, 5.0, 6.0]])
    counts = np.array([50, 0, 50])
    donor_before = c.copy()
    assert split_empty(c, counts, 100) == 1
    e = 1 / 1024
    donors = [j for j in (0, 2) if np.allclose(c[1], donor_before[j] * [1 + e, 1 - e, 1 + e])]
    assert len(donors) == 1
    j = donors[0]
    np.testing.assert_array_equal(c[j], donor_before[j] * [1 - e, 1 + e, 1 - e])


@pytest.fixture(scope="module")
def pq():
    return features(1, 600), features(2, 500, shift=0.15, n_modes=6)


@pytest.mark.skipif(not faiss_available(), reason="compares with faiss")
def test_torch_kmeans_mauve_equals_faiss_to_001(pq, monkeypatch):
    """The torch k-means (device=cpu) against faiss: MAUVE and FI within 0.01 (on these inputs
    the histograms were identical, NOTES-mauve.md); the record says which k-means ran."""
    monkeypatch.setattr(devices, "array_device", lambda: "cpu")  # also on a machine with a GPU
    p, q = pq
    ref = compute("mauve", q, p, {"kmeans": "faiss"})
    res = compute("mauve", q, p, {"kmeans": "torch"})
    for name in ("mauve", "frontier_integral", "mauve_star", "frontier_integral_star"):
        assert res.values[name] == pytest.approx(ref.values[name], abs=0.01), name
    assert res.extras["kmeans"] == "torch" and res.extras["device"] == "cpu"
    assert ref.extras["kmeans"] == "faiss" and ref.extras["device"] == "cpu"


def test_torch_kmeans_deterministic_and_subsampled():
    x = features(3, 900, d=12)
    a = kmeans_torch(x, 20, seed=5, nredo=2, niter=50)
    assert np.array_equal(a, kmeans_torch(x, 20, seed=5, nredo=2, niter=50))
    assert len(np.unique(a)) == 20
    # n > 256 k: trained on faiss' subsample, every row labelled
    b = kmeans_torch(x, 3, seed=5, nredo=1, niter=50)
    assert b.shape == (900,) and set(np.unique(b)) <= {0, 1, 2}


def test_auto_picks_by_device(pq, monkeypatch):
    """kmeans=auto: faiss on the CPU; torch where array_device() is cuda (simulated here: the
    torch code then runs with the device it is given). The params keep kmeans=auto."""
    from genmetrics.metrics import mauve as mauve_module

    p, q = pq
    monkeypatch.setattr(devices, "array_device", lambda: "cpu")
    assert mauve_module.kmeans_backend("auto")[1] == "cpu"
    assert mauve_module.kmeans_backend("torch") == ("torch", "cpu")
    monkeypatch.setattr(devices, "array_device", lambda: "cuda")
    assert mauve_module.kmeans_backend("auto") == ("torch", "cuda")
    assert mauve_module.kmeans_backend("faiss") == ("faiss", "cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_cuda_labels_equal_cpu_labels(pq):
    p, q = pq
    x = np.vstack([q, p]).astype(np.float32)
    cpu = kmeans_torch(x, 50, seed=27, nredo=5, niter=500, device="cpu")
    gpu = kmeans_torch(x, 50, seed=27, nredo=5, niter=500, device="cuda")
    assert np.array_equal(cpu, gpu)


@pytest.mark.skipif(not faiss_available(), reason="compares with faiss")
@pytest.mark.parametrize("workers", [1, 2])
def test_faiss_restarts_side_by_side_are_faiss_kmeans(workers):
    """faiss_kmeans_labels (one thread per restart, restarts side by side) = faiss.Kmeans with
    nredo restarts then index.search, label for label, also where it falls back (n > 256 k)."""
    import faiss

    from genmetrics.metrics._quantize import faiss_kmeans_labels

    rng = np.random.default_rng(4)
    for n, d, k, seed, nredo, niter in [
        (1100, 20, 50, 27, 5, 500),
        (800, 64, 80, 3, 3, 40),
        (2000, 8, 5, 27, 2, 100),  # n > 256 k: faiss subsamples, the plain call
    ]:
        x = (rng.normal(size=(n, d)) * np.arange(1, d + 1) ** -0.3).astype(np.float32)
        km = faiss.Kmeans(d, k, niter=niter, nredo=nredo, seed=seed, min_points_per_centroid=1)
        km.train(x)
        expected = km.index.search(x, 1)[1].reshape(-1)
        ours = faiss_kmeans_labels(x, k, seed, nredo, niter, workers=workers)
        assert np.array_equal(ours, expected), (n, d, k)
