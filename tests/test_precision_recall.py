"""precision_recall: agreement with prdc, hand-computed cases, ties, degenerate inputs, approx."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from conftest import torch_threads_after_numba

from genmetrics import GenmetricsError
from genmetrics.metrics import compute, get
from genmetrics.metrics._quantize import faiss_available, l2_pca
from genmetrics.metrics.precision_recall import (
    KnnRadii,
    knn_radii_sq,
    prdc_approx,
    prdc_dense,
    prdc_exact,
    prdc_for_ks,
    precision_recall,
)

prdc = pytest.importorskip("prdc")
KEYS = ("precision", "recall", "density", "coverage")


def ref_prdc(p: np.ndarray, q: np.ndarray, k: int) -> dict[str, float]:
    with contextlib.redirect_stdout(io.StringIO()):  # prdc prints the set sizes
        out = prdc.compute_prdc(real_features=p, fake_features=q, nearest_k=k)
    return {key: float(out[key]) for key in KEYS}


def brute_force(p: np.ndarray, q: np.ndarray, k: int, strict: bool) -> dict[str, float]:
    """Full-matrix float64 definition (squared distances), for ties and the <= variant."""
    less = np.less if strict else np.less_equal

    def sq(a, b):
        return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)

    rp = np.sort(sq(p, p), axis=1)[:, k]
    rq = np.sort(sq(q, q), axis=1)[:, k]
    dpq = sq(p, q)
    in_p = less(dpq, rp[:, None])
    return {
        "precision": float(in_p.any(axis=0).mean()),
        "recall": float(less(dpq, rq[None, :]).any(axis=1).mean()),
        "density": float(in_p.sum(axis=0).mean() / k),
        "coverage": float(in_p.any(axis=1).mean()),
    }


def mixture(rng, n, d, shift=0.0, scale=1.0):
    centers = rng.normal(size=(6, d)) * 2
    lab = rng.integers(0, 6, size=n)
    return centers[lab] + rng.normal(size=(n, d)) * scale + shift


@pytest.mark.parametrize(
    "n_p,n_q,d,k,seed",
    [(300, 300, 16, 4, 0), (257, 181, 5, 1, 1), (120, 333, 40, 7, 2), (64, 64, 2, 3, 3)],
)
def test_matches_prdc_exactly(n_p, n_q, d, k, seed):
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(n_p, d))
    q = rng.normal(size=(n_q, d)) * 1.2 + 0.3
    ref = ref_prdc(p, q, k)
    res = compute("precision_recall", q, p, {"k": k, "pca": False, "method": "exact"})
    for key in KEYS:
        assert res.values[key] == pytest.approx(ref[key], abs=1e-9), key
    assert res.n == {"reference": n_p, "candidate": n_q}
    # the values are not trivial
    assert 0.05 < res.values["precision"] < 1 and 0.05 < res.values["coverage"] < 1


def test_small_blocks_and_float32_match_prdc():
    """Many small blocks (chunk_size) and float32 input still give prdc's numbers."""
    rng = np.random.default_rng(7)
    p = mixture(rng, 400, 24).astype(np.float32)
    q = mixture(rng, 350, 24, shift=0.2, scale=1.3).astype(np.float32)
    ref = ref_prdc(p, q, 4)
    for threads in (1, 3):  # per-block partial results merge identically
        out = prdc_exact(p, q, [4], chunk_size=997, n_threads=threads)[4]
        for key in KEYS:
            assert out[key] == pytest.approx(ref[key], abs=1e-9), (threads, key)


def test_threads_blocks_and_several_k_agree_with_brute_force():
    """One worker pool for the whole call (the radii blocks of P and Q interleaved, sets of
    different sizes), small blocks and several k from one candidate mask: the same values for
    1, 2 and 3 threads, equal to the float64 definition, with exact duplicates in P and copies
    of P points in Q (ties at distance 0)."""
    rng = np.random.default_rng(21)
    p = mixture(rng, 230, 6)
    q = mixture(rng, 170, 6, shift=0.3)
    p[200:210] = p[3]  # ten copies: r_k(p_3) = 0 for k <= 10
    q[100:104] = p[5]
    q[104:106] = p[3]  # at distance 0 from eleven balls of radius 0
    ks = [1, 3, 6]
    for strict in (True, False):
        runs = [
            prdc_exact(p, q, ks, strict=strict, chunk_size=1000, n_threads=t) for t in (1, 2, 3)
        ]
        assert runs[0] == runs[1] == runs[2]
        for k in ks:
            ref = brute_force(p, q, k, strict)
            for key in KEYS:
                assert runs[0][k][key] == pytest.approx(ref[key], abs=1e-12), (strict, k, key)
    # the ties are real: under <= the two copies of p_3 lie in the eleven balls of radius 0
    # (and the copies of p_5 on the boundary of the balls whose 1st neighbour is p_5)
    loose, strict_ = (prdc_exact(p, q, [1], strict=s, n_threads=2)[1] for s in (False, True))
    assert loose["density"] - strict_["density"] >= 2 * 11 / 170


def test_several_k_in_one_pass_match_prdc():
    rng = np.random.default_rng(11)
    p = mixture(rng, 200, 8)
    q = mixture(rng, 220, 8, scale=0.7)
    out = prdc_exact(p, q, [1, 3, 10])
    for k in (1, 3, 10):
        ref = ref_prdc(p, q, k)
        for key in KEYS:
            assert out[k][key] == pytest.approx(ref[key], abs=1e-9), (k, key)


@pytest.mark.parametrize("chunk_size,threads", [(1 << 21, None), (150 * 9, 1), (150 * 9, 3)])
def test_radii_exclude_self(chunk_size, threads):
    """Single block, and ~17 symmetric blocks (serial and threaded), with duplicate rows."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(150, 6))
    x[100:104] = x[7]  # five copies of one point
    full = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    np.fill_diagonal(full, np.inf)
    r = KnnRadii(x, [1, 3, 5], chunk_size=chunk_size, n_threads=threads)
    for k in (1, 3, 5):
        expected = np.sort(full, axis=1)[:, k - 1]  # k-th neighbour, self excluded
        np.testing.assert_allclose(np.sqrt(r.all_exact(k)), expected, rtol=1e-12, atol=0)
        # the approximate radii lie within the advertised bound of the exact ones
        assert np.all(np.abs(r.approx[k] - expected**2) <= r.tol)
    assert r.all_exact(3)[7] == 0.0  # 4 exact duplicates -> 3rd neighbour at distance 0
    np.testing.assert_array_equal(knn_radii_sq(x, [3])[3], r.all_exact(3))


def test_hand_computed_1d():
    # P = {0, 1, 2, 3, 10}, Q = {0.5, 2.5, 20}, k = 1
    # P radii 1,1,1,1,7; Q radii 2,2,17.5.
    # precision: 0.5 in ball(0), 2.5 in ball(2), 20 in none           -> 2/3
    # density: 0.5 in balls of 0 and 1, 2.5 in balls of 2 and 3      -> (2+2+0)/3
    # recall: 0,1,2,3 within 2 of 0.5/2.5; 10 within 17.5 of 20      -> 1
    # coverage: min distance < radius for 0,1,2,3; 10: 7.5 >= 7      -> 4/5
    p = np.array([[0.0], [1.0], [2.0], [3.0], [10.0]])
    q = np.array([[0.5], [2.5], [20.0]])
    res = compute("precision_recall", q, p, {"k": 1, "pca": False})
    assert res.values == pytest.approx(
        {"precision": 2 / 3, "recall": 1.0, "density": 4 / 3, "coverage": 0.8}, abs=1e-12
    )


def test_ties_strict_vs_inclusive():
    """Integer grid points with duplicates: exact ties; strict = prdc, <= = Kynkäänniemi."""
    rng = np.random.default_rng(5)
    p = rng.integers(0, 4, size=(120, 3)).astype(np.float64)  # 64 cells -> many duplicates
    q = rng.integers(0, 5, size=(100, 3)).astype(np.float64)
    k = 3
    strict = compute("precision_recall", q, p, {"k": k, "pca": False, "strict": True})
    loose = compute("precision_recall", q, p, {"k": k, "pca": False, "strict": False})
    ref = ref_prdc(p, q, k)
    for key in KEYS:
        assert strict.values[key] == pytest.approx(ref[key], abs=1e-12), key
        assert strict.values[key] == pytest.approx(brute_force(p, q, k, True)[key], abs=1e-12)
        assert loose.values[key] == pytest.approx(brute_force(p, q, k, False)[key], abs=1e-12)
    # ties matter here: <= counts the boundary points
    assert loose.values["density"] > strict.values["density"]
    assert loose.values["recall"] >= strict.values["recall"]


def test_no_ties_strict_equals_inclusive():
    rng = np.random.default_rng(8)
    p, q = rng.normal(size=(150, 5)), rng.normal(size=(140, 5))
    a = prdc_exact(p, q, [4], strict=True)[4]
    b = prdc_exact(p, q, [4], strict=False)[4]
    assert a == b


def test_all_duplicates_zero_radii():
    """k+1 copies of one point: radius 0, strict balls are empty, <= balls hold the copies."""
    p = np.ones((6, 4))
    q = np.ones((5, 4))
    s = prdc_exact(p, q, [2], strict=True)[2]
    assert s == {"precision": 0.0, "recall": 0.0, "density": 0.0, "coverage": 0.0}
    loose = prdc_exact(p, q, [2], strict=False)[2]
    assert loose == {"precision": 1.0, "recall": 1.0, "density": 6 / 2, "coverage": 1.0}


def test_duplicate_candidate_of_reference():
    """A candidate equal to a reference point lies inside that point's ball (distance 0)."""
    rng = np.random.default_rng(2)
    p = rng.normal(size=(50, 3))
    q = np.vstack([p[:1], rng.normal(size=(9, 3)) + 50.0])  # one copy, the rest far away
    out = prdc_exact(p, q, [3])[3]
    assert out["precision"] == pytest.approx(0.1)
    # p_0's ball holds its copy; so do the balls of points having p_0 among their 3-NN
    d = np.sqrt(((p[:, None] - p[None]) ** 2).sum(-1))
    r = np.sort(d, axis=1)[:, 3]
    assert out["coverage"] == pytest.approx(np.mean(d[:, 0] < r))
    assert out["density"] == pytest.approx(np.sum(d[:, 0] < r) / 3 / 10)
    assert out == pytest.approx(brute_force(p, q, 3, True), abs=1e-12)


def test_pca_matches_pr4llm_preprocessing():
    """pca=0.9 = pr-4-llm PCA_: L2-normalise [q; p], PCA(0.9), float32 — then prdc on it."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import normalize

    rng = np.random.default_rng(4)
    p = mixture(rng, 150, 30)
    q = mixture(rng, 160, 30, shift=0.5)
    data = normalize(np.vstack([q, p]), norm="l2", axis=1)
    pca = PCA(n_components=None, whiten=False, random_state=1).fit(data)
    idx = np.argmax(np.cumsum(pca.explained_variance_ratio_) >= 0.9)
    red = pca.transform(data)[:, : idx + 1].astype(np.float32)
    q_ref, p_ref = red[:160], red[160:]
    p_ours, q_ours = l2_pca(p, q, 0.9, seed=0)
    np.testing.assert_array_equal(p_ours, p_ref)
    np.testing.assert_array_equal(q_ours, q_ref)
    assert 1 < p_ours.shape[1] < 30
    res = compute("precision_recall", q, p, {"k": 4})  # default pca 0.9
    ref = ref_prdc(p_ref, q_ref, 4)
    for key in KEYS:
        assert res.values[key] == pytest.approx(ref[key], abs=1e-9), key


def test_registered_params_and_direct_call():
    m = get("precision_recall")
    assert tuple(m.values) == ("precision", "recall", "density", "coverage")
    for name, default in {"k": 4, "pca": 0.9, "strict": True, "method": "auto", "seed": 0}.items():
        assert m.defaults[name] == default
    rng = np.random.default_rng(0)
    p, q = rng.normal(size=(40, 3)), rng.normal(size=(30, 3))
    direct = precision_recall(reference=p, candidate=q, k=2, pca=False)
    assert direct.values == pytest.approx(ref_prdc(p, q, 2), abs=1e-12)


@pytest.mark.parametrize(
    "p,q,params,msg",
    [
        (np.zeros((4, 3)), np.zeros((10, 3)), {"k": 4}, "at least k\\+1"),
        (np.zeros((10, 3)), np.zeros((10, 4)), {}, "dimensions"),
        (np.zeros((10, 3)), np.zeros((10, 3)), {"k": 0}, "integer >= 1"),
        (np.zeros((10, 3)), np.zeros((10, 3)), {"method": "fast"}, "method"),
        (np.zeros((10, 3)), np.zeros((10, 3)), {"pca": 1.5}, "pca"),
        (np.zeros((10, 3)), np.zeros((10, 3)), {"strict": "maybe"}, "strict"),
    ],
)
def test_bad_inputs_raise(p, q, params, msg):
    rng = np.random.default_rng(0)
    p = p + rng.normal(size=p.shape)
    q = q + rng.normal(size=q.shape)
    with pytest.raises(GenmetricsError, match=msg):
        compute(
            "precision_recall", q, p, {"pca": False, **params} if "pca" not in params else params
        )


def test_nan_and_shape_errors_in_direct_calls():
    rng = np.random.default_rng(0)
    p = rng.normal(size=(20, 3))
    bad = p.copy()
    bad[3, 1] = np.nan
    with pytest.raises(GenmetricsError, match="NaN"):
        prdc_exact(p, bad, 2)
    with pytest.raises(GenmetricsError, match="NaN"):
        compute("precision_recall", bad, p)
    inf = p.copy()
    inf[0, 0] = np.inf
    with pytest.raises(GenmetricsError, match="NaN/inf"):
        prdc_for_ks(inf, p, 4, pca=False)
    with pytest.raises(GenmetricsError, match="strict"):  # the metric's own constraints
        prdc_for_ks(p, p, 4, strict="maybe")
    with pytest.raises(GenmetricsError, match="2-D"):
        prdc_exact(p[:, 0], p, 2)
    with pytest.raises(GenmetricsError, match="^reference: .*NaN"):  # both bad: reference first
        prdc_exact(bad, inf, 2, n_threads=2)
    with pytest.raises(GenmetricsError, match="dimensions"):
        prdc_exact(p, p[:, :2], 2)


@pytest.mark.parametrize("strict", [True, False])
def test_dense_reference_equals_blocked_engine(strict):
    """The dense reference (small inputs) and the blocked engine give the same numbers, ties
    and duplicates included."""
    rng = np.random.default_rng(12)
    p = np.vstack([rng.integers(0, 3, size=(60, 4)), rng.normal(size=(40, 4))])
    q = np.vstack([p[:10], rng.integers(0, 4, size=(50, 4)), rng.normal(size=(30, 4)) * 2])
    ks = [1, 3, 7]
    dense = prdc_dense(p, q, ks, strict=strict)
    blocked = prdc_exact(p, q, ks, strict=strict, chunk_size=999)
    assert dense == blocked
    for k in ks:
        assert dense[k] == pytest.approx(brute_force(p, q, k, strict), abs=1e-12)


def test_only_small_inputs_take_the_dense_path(monkeypatch):
    import genmetrics.metrics.precision_recall as mod

    calls = []
    monkeypatch.setattr(mod, "_array_device", lambda: "cpu")  # the CPU engine, also on a GPU box
    monkeypatch.setattr(mod, "prdc_exact", lambda *a, **kw: calls.append(1) or {4: {}})
    rng = np.random.default_rng(0)
    compute("precision_recall", rng.normal(size=(90, 8)), rng.normal(size=(100, 8)))
    assert calls == []
    prdc_for_ks(rng.normal(size=(600, 8)), rng.normal(size=(600, 8)), 4, pca=False)
    assert calls == [1]


def test_auto_method_uses_exact_below_threshold(monkeypatch):
    import genmetrics.metrics.precision_recall as mod

    called = []
    monkeypatch.setattr(mod, "prdc_approx", lambda *a, **kw: called.append(1) or {4: {}})
    rng = np.random.default_rng(0)
    p, q = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    prdc_for_ks(p, q, [4], pca=False, method="auto", approx_threshold=100)
    assert called == []
    prdc_for_ks(p, q, [4], pca=False, method="auto", approx_threshold=10)
    assert called == [1]


def _shifted_mixture(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    spec = np.arange(1, d + 1) ** -0.5
    centers = rng.normal(size=(30, d)) * spec * 1.5
    w2 = np.r_[np.ones(20) * 2, np.ones(10) * 0.2]
    p = centers[rng.choice(30, n)] + rng.normal(size=(n, d)) * spec
    q = centers[rng.choice(30, n, p=w2 / w2.sum())] + rng.normal(size=(n, d)) * spec * 1.1
    return p, q


@pytest.mark.skipif(not faiss_available(), reason="faiss backend not installed")
def test_approx_faiss_close_to_exact_small():
    p, q = _shifted_mixture(3000, 24, seed=1)
    exact = prdc_exact(p, q, [4])[4]
    approx = prdc_approx(p, q, [4], backend="faiss")[4]
    for key in ("precision", "recall", "coverage"):
        assert approx[key] == pytest.approx(exact[key], abs=0.01), key
    # not a lower bound: missed self-neighbours inflate radii, missed balls lower the values
    assert approx["density"] == pytest.approx(exact["density"], abs=0.02)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["ivf", "faiss", "pynndescent"])
def test_approx_matches_exact_at_20k(backend):
    """Approximate path within 0.01 of the exact path at N = 20k per side.

    pynndescent's first call compiles with numba (~30-60 s), hence ``slow``.
    """
    if backend == "faiss" and not faiss_available():
        pytest.skip("faiss not installed")
    p, q = _shifted_mixture(20000, 32)
    exact = prdc_exact(p, q, [4])[4]
    approx = prdc_approx(p, q, [4], seed=0, backend=backend)[4]
    for key in ("precision", "recall", "coverage"):
        assert approx[key] == pytest.approx(exact[key], abs=0.01), key
    assert approx["density"] == pytest.approx(exact["density"], abs=0.02)
    # the sets really differ (q misses 10 of 30 modes): recall high, precision clearly lower
    assert exact["precision"] < exact["recall"] - 0.1
    # auto switches to approx above the threshold and gives the same numbers
    params = {"pca": False, "approx_threshold": 10000, "approx_backend": backend}
    res = compute("precision_recall", q, p, params)
    assert res.values == pytest.approx(approx, abs=1e-12)


@pytest.mark.parametrize(
    "backend",
    ["ivf", "faiss", pytest.param("pynndescent", marks=pytest.mark.slow)],  # numba JIT
)
def test_approx_ties_and_duplicates(backend):
    if backend == "faiss" and not faiss_available():
        pytest.skip("faiss not installed")
    p = np.vstack([np.ones((8, 3)), np.random.default_rng(0).normal(size=(40, 3)) + 9])
    q = np.vstack([np.ones((4, 3)), np.full((4, 3), 5.0)])
    ref_loose = brute_force(p, q, 2, False)
    ref_strict = brute_force(p, q, 2, True)
    loose = prdc_approx(p, q, [2], strict=False, backend=backend)[2]
    strict = prdc_approx(p, q, [2], strict=True, backend=backend)[2]
    for key in ("precision", "recall", "coverage"):
        assert loose[key] == pytest.approx(ref_loose[key]), key
        assert strict[key] == pytest.approx(ref_strict[key]), key
    assert loose["precision"] == pytest.approx(0.5) and strict["precision"] == 0.0


def test_approx_backend_errors():
    p = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(GenmetricsError, match="approx_backend"):
        compute("precision_recall", p, p, {"method": "approx", "approx_backend": "annoy"})
    with pytest.raises(GenmetricsError, match=r"k\+2"):
        prdc_approx(p[:5], p, [4])


# ------------------------------------------------------------------ engine choice and record


def _embedding_like(n: int, seed: int = 0, d: int = 96) -> tuple[np.ndarray, np.ndarray]:
    """Sentence-embedding-like sets: L2-normalised, 40 topics with a power-law spectrum and
    unequal weights (Q over-weights some topics), 5 % near-duplicates."""
    rng = np.random.default_rng(seed)
    spec = np.arange(1, d + 1) ** -0.7
    centers = rng.normal(size=(40, d)) * spec * 3
    w_p = rng.dirichlet(np.ones(40))
    w_q = rng.dirichlet(np.ones(40))

    def draw(w):
        x = centers[rng.choice(40, n, p=w)] + rng.normal(size=(n, d)) * spec
        dup = rng.choice(n, n // 20, replace=False)
        x[dup] = x[rng.choice(n, dup.size)] + rng.normal(size=(dup.size, d)) * 1e-3
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    return draw(w_p), draw(w_q)


def test_engine_choice():
    from genmetrics.metrics.precision_recall import ENGINES, knn_engine

    assert knn_engine(100, 90, 8) == "exact-dense"
    assert knn_engine(600, 600, 8) == "exact-blocked"
    # auto never switches to the approximate engine by default, whatever the size
    assert get("precision_recall").defaults["approx_threshold"] is None
    assert knn_engine(10**7, 10**7, 768) == "exact-blocked"
    assert knn_engine(10**7, 10**7, 768, method="exact", approx_threshold=10) == "exact-blocked"
    # a user-set threshold: approximate strictly above it
    backend = "ivf"  # auto: genmetrics' own inverted file (numpy only)
    assert knn_engine(1000, 1000, 8, approx_threshold=1000) == "exact-blocked"
    assert knn_engine(1001, 3, 8, approx_threshold=1000) == f"approx-{backend}"
    assert knn_engine(5, 5, 8, method="approx") == f"approx-{backend}"
    assert {"exact-dense", "exact-blocked", f"approx-{backend}"} <= set(ENGINES)
    if faiss_available():
        assert knn_engine(5, 5, 8, method="approx", approx_backend="faiss") == "approx-faiss"


def test_result_and_score_record_state_the_engine():
    """extras["knn"] names the engine that ran and reaches the score record (JSON-safe)."""
    import json

    from genmetrics.scoring.from_files import score_loaded

    rng = np.random.default_rng(0)
    small = rng.normal(size=(60, 5)), rng.normal(size=(50, 5))
    res = compute("precision_recall", small[1], small[0], {"pca": False})
    assert res.extras["knn"] == {
        "engine": "exact-dense",
        "exact": True,
        "max_abs_error": 0.0,
        "device": "cpu",
    }
    big = rng.normal(size=(700, 8)), rng.normal(size=(650, 8))
    rows = [{"id": str(i)} for i in range(650)]
    ref_rows = [{"id": str(i)} for i in range(700)]
    rec = score_loaded("precision_recall", big[1], rows, big[0], ref_rows, {"pca": False})
    assert rec["extras"]["knn"]["engine"] == "exact-blocked"
    assert rec["extras"]["knn"]["exact"] is True
    json.dumps(rec["extras"], allow_nan=False)
    assert rec["values"] == prdc_exact(*big, [4])[4]


@pytest.mark.skipif(not faiss_available(), reason="faiss backend not installed")
def test_auto_above_a_set_threshold_runs_approx_and_says_so():
    """auto at threshold + 1 runs faiss, records it with its measured error, and stays within
    that measured error of the exact values on embedding-like data (default pca=0.9)."""
    from genmetrics.metrics._knn_approx import APPROX_MEASURED

    p, q = _embedding_like(1001, seed=3)
    exact = compute("precision_recall", q, p)
    assert exact.extras["knn"]["engine"] == "exact-blocked"
    at = compute("precision_recall", q, p, {"approx_threshold": 1001})
    assert at.values == exact.values and at.extras == exact.extras  # not above: exact
    res = compute("precision_recall", q, p, {"approx_threshold": 1000, "approx_backend": "faiss"})
    knn = res.extras["knn"]
    assert knn["engine"] == "approx-faiss" and knn["exact"] is False
    assert knn["max_abs_error"] is None  # no bound is claimed
    measured = APPROX_MEASURED["faiss"]["pca"]
    assert knn["measured_abs_error"] == measured
    for key in KEYS:
        assert abs(res.values[key] - exact.values[key]) <= measured[key], key


def test_approx_errors_go_both_ways_by_construction():
    """Missed self-neighbours make radii larger (values up); missed balls make values lower.
    Simulated on exact quantities: inflating radii raises every value, dropping pairs lowers."""
    rng = np.random.default_rng(1)
    p, q = rng.normal(size=(300, 6)), rng.normal(size=(300, 6)) * 1.1
    k = 4
    from scipy.spatial.distance import cdist

    rp = np.sort(cdist(p, p, "sqeuclidean"), axis=1)[:, k]
    r_missed = np.sort(cdist(p, p, "sqeuclidean"), axis=1)[:, k + 1]  # 1 neighbour missed
    d = cdist(p, q, "sqeuclidean")
    exact, inflated = (d < rp[:, None]), (d < r_missed[:, None])
    assert inflated.any(axis=0).mean() > exact.any(axis=0).mean()  # precision up
    assert inflated.sum() > exact.sum()  # density up
    dropped = exact & (rng.random(exact.shape) < 0.7)  # a search that misses 30 % of pairs
    assert dropped.any(axis=0).mean() < exact.any(axis=0).mean()  # precision down


# ------------------------------------------------------------------ ivf backend


def test_ivf_probing_every_list_is_exact():
    """With every list probed the inverted file misses no pair: the values are the exact
    ones (float32 blocks, rounding bound, float64 rechecks), for several k and both rules."""
    from genmetrics.metrics._knn_ivf import prdc_ivf

    p, q = _shifted_mixture(3000, 24, seed=1)
    assert prdc_ivf(p, q, [1, 4], n_probe=10**6) == prdc_exact(p, q, [1, 4])
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, size=(300, 3)).astype(np.float64)  # exact ties, duplicates
    b = rng.integers(0, 5, size=(200, 3)).astype(np.float64)
    for strict in (True, False):
        got = prdc_ivf(a, b, [3], n_probe=10**6, strict=strict, n_threads=2)
        assert got == prdc_exact(a, b, [3], strict=strict)


def test_ivf_close_to_exact_and_deterministic():
    from genmetrics.metrics._knn_ivf import ivf_shape, prdc_ivf

    p, q = _shifted_mixture(3000, 24, seed=1)
    assert ivf_shape(3000, 3000) == (77, 4)  # 4 of 77 lists probed per list
    exact = prdc_exact(p, q, [4])[4]
    approx = prdc_ivf(p, q, [4], seed=3)[4]
    for key in ("precision", "recall", "coverage"):
        assert approx[key] == pytest.approx(exact[key], abs=0.01), key
    assert approx["density"] == pytest.approx(exact["density"], abs=0.03)
    assert prdc_ivf(p, q, [4], seed=3, n_threads=1)[4] == approx  # same seed, same values


def test_approx_record_carries_the_subsample_check():
    """An approximate run states its error measured on a seeded subsample: exact and
    approximate values there, their difference, the size and the seed (JSON-safe)."""
    import json

    from genmetrics.metrics._knn_approx import subsample_check

    p, q = _embedding_like(1500, seed=4)
    params = {"method": "approx", "seed": 7, "pca": False}
    res = compute("precision_recall", q, p, params)
    knn = res.extras["knn"]
    assert knn["engine"] == "approx-ivf" and knn["device"] == "cpu"
    chk = knn["subsample_check"]
    assert chk["seed"] == 7 and chk["n_per_side"] == [1500, 1500]
    assert chk["exact"] == prdc_exact(p, q, [4])[4]  # the whole sets: m >= n
    for key in KEYS:
        assert chk["abs_error"][key] == abs(chk["approx"][key] - chk["exact"][key])
    assert knn["measured_abs_error"] == chk["abs_error"]
    json.dumps(res.extras, allow_nan=False)
    # a smaller subsample: m points per side drawn with the run's seed, same share probed
    small = subsample_check(p, q, 4, strict=True, seed=7, backend="ivf", m=600)
    rng = np.random.default_rng(7)
    ip = np.sort(rng.choice(1500, 600, replace=False))
    iq = np.sort(rng.choice(1500, 600, replace=False))
    assert small["exact"] == prdc_exact(p[ip], q[iq], [4])[4]
    assert small["n_per_side"] == [600, 600]
    assert compute("precision_recall", q, p, params).extras == res.extras  # deterministic


@pytest.mark.slow  # pynndescent compiles with numba first (~30-60 s)
def test_the_pynndescent_backend_leaves_torch_s_threads_as_they_were():
    """pynndescent's numba kernels (omp layer) set OpenMP's thread count, which torch shares;
    a process on one thread keeps one for torch after an NN-descent graph and its query."""
    pytest.importorskip("pynndescent")
    code = (
        "import numpy as np, torch\n"
        "from genmetrics.metrics._knn_approx import _PynndescentIndex\n"
        "x = np.random.default_rng(0).standard_normal((300, 8)).astype(np.float32)\n"
        "_PynndescentIndex(x, 5, 0).query(x[:5], 3)\n"
    )
    assert torch_threads_after_numba(code) == 1
