"""Approximate k-NN precision/recall/density/coverage (ivf, faiss IVF-Flat or pynndescent).

Used by ``precision_recall`` only with ``method="approx"`` or a user-set
``approx_threshold``; ``auto`` is exact by default.

``ivf`` (the default backend, :func:`prdc_ivf`, numpy only): one seeded k-means partition of
P ∪ Q into √(n_p + n_q) lists; each list is compared with the lists it probes (itself and its
nearest by centroid, 1/32 of them, at least 4) by float32 GEMM blocks with the exact engine's
rounding bound and float64 rechecks, so the only error is the pairs in lists that do not
probe each other (radii too large, balls missed: both directions). Memory O(N·k) beyond the
inputs (a float32 input is not copied). Probing every list gives the exact values (tested).
benchmarks/bench_knn_approx.py --row N measures time, peak memory and error at N per side.

``faiss`` / ``pynndescent``: approximate nearest-neighbour searches (faiss IVF-Flat,
pynndescent NN-descent graphs) give the radii; "is q inside some P-ball" becomes a nearest-neighbour query after lifting every
centre p to [p, √(R² − r_p²)] (and q to [q, 0]); every returned pair is re-checked with
exact float64 distances. The values are **neither lower nor upper bounds**:

* radii: r̂_k(x) is the k-th smallest distance among the candidates the search returned, a
  subset of the set, so r̂ >= r: a missed neighbour makes a ball *larger*, which raises
  precision, recall, density and coverage;
* membership: a ball the lifted search misses is not counted, which lowers precision, recall
  and density (coverage: a missed nearest q lowers it);
* density: a q found inside every ball returned (hubs) is counted exactly against all centres
  (:func:`count_in_balls`), so no truncation bias is added.

Which error wins depends on the data. benchmarks/bench_knn_approx.py, 2 cores, k = 4, MiniLM
sentence/token embeddings (human vs model texts) and 768-d Gaussians, N = 2k-100k per side:

* faiss misses balls in the lifted search on real features: the balls holding a q are often
  far hubs with large radii, in IVF lists its probe does not visit. Precision and recall come
  out 0.01-0.04 low after PCA 0.9 for sentences, 0.12-0.13 low for token or 768-d sentence
  features, up to 0.5 low on raw features. On isotropic Gaussians it inflates radii instead
  (768-d, PCA 0.9, 50k: precision +0.021, density +0.09, the user-reported jump). Time:
  0.64-0.72x the exact engine at 50k per side after PCA (0.32x at 100k), 0.9-2.3x on raw
  features.
* pynndescent is within 0.007 on P/R/C and 0.015 on density after PCA, but 10-54x slower
  than exact (plus ~45 s numba JIT per process).

``APPROX_MEASURED`` holds the largest |approx − exact| per backend and preprocessing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.devices import openmp_threads_kept
from genmetrics.metrics._inputs import as_ks, check_pair, check_points
from genmetrics.metrics._knn_exact import exact_sqdist
from genmetrics.metrics._knn_ivf import ivf_shape, prdc_ivf
from genmetrics.metrics._quantize import prefer_faiss

__all__ = [
    "SUBSAMPLE_N",
    "APPROX_BACKENDS",
    "APPROX_MEASURED",
    "APPROX_NOTE",
    "count_in_balls",
    "ivf_shape",
    "prdc_ivf",
    "subsample_check",
    "prdc_approx",
    "resolve_approx_backend",
]

# pynndescent settings of the approximate path: graph degree, query breadth (the nearest of
# _QUERY_K returned neighbours is right ~99.9 % of the time on 20k x 32-d mixtures, against
# ~80 % for a 1-NN query) and search epsilon.
_GRAPH_NEIGHBORS = 30
_QUERY_K = 10
_EPSILON = 0.3
_IVF_MIN_PROBE = 16  # faiss IVF: lists probed at least ...
_IVF_PROBE_DIV = 32  # ... or one list in _IVF_PROBE_DIV (exact rechecks absorb the misses)


APPROX_BACKENDS = ("auto", "ivf", "faiss", "pynndescent")

#: largest |approx − exact| per value that benchmarks/bench_knn_approx.py measured (k = 4;
#: "pca": after L2 + PCA 0.9, the default; "raw": features as given). Observations, not bounds.
APPROX_MEASURED = {
    "faiss": {
        "pca": {"precision": 0.1307, "recall": 0.1344, "density": 0.3263, "coverage": 0.0183},
        "raw": {"precision": 0.5088, "recall": 0.4546, "density": 1.2071, "coverage": 0.0146},
    },
    "pynndescent": {
        "pca": {"precision": 0.0050, "recall": 0.0069, "density": 0.0151, "coverage": 0.0024},
        "raw": {"precision": 0.0025, "recall": 0.0115, "density": 0.0252, "coverage": 0.0120},
    },
}
APPROX_NOTE = (
    "largest |approx - exact| measured by benchmarks/bench_knn_approx.py (MiniLM sentence and "
    "token embeddings of human vs model texts, 768-d Gaussians; N 2k-100k per side; k=4); "
    "an observation, not a bound: errors go both ways"
)


class _PynndescentIndex:
    """NN-descent graph (Dong et al. 2011) of a set, searchable after ``prepare``."""

    def __init__(self, x: np.ndarray, k_graph: int, seed: int) -> None:
        from pynndescent import NNDescent

        self.n = len(x)
        with openmp_threads_kept():  # numba's omp layer would leave torch on its threads
            self.index = NNDescent(
                x,
                n_neighbors=min(self.n - 1, max(k_graph, _GRAPH_NEIGHBORS)),
                metric="euclidean",
                random_state=seed,
                low_memory=True,
            )
        self._prepared = False

    def self_knn(self, k: int) -> np.ndarray:
        return self.index.neighbor_graph[0][:, :k]

    def query(self, y: np.ndarray, k: int) -> np.ndarray:
        with openmp_threads_kept():
            if not self._prepared:
                self.index.prepare()
                self._prepared = True
            idx, _ = self.index.query(y, k=min(k, self.n), epsilon=_EPSILON)
        return idx


class _FaissIVFIndex:
    """faiss IVF-Flat index: ~2√N k-means lists (seeded, 10 iterations), probing
    max(16, nlist/32) lists per query."""

    def __init__(self, x: np.ndarray, k_graph: int, seed: int) -> None:
        import faiss

        self.x = x
        self.n, d = x.shape
        nlist = int(max(1, min(round(2 * np.sqrt(self.n)), self.n // 8)))
        self.index = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, nlist)
        self.index.cp.seed = int(seed)
        self.index.cp.niter = 10
        self.index.cp.min_points_per_centroid = 1  # silence the small-sample warning
        self.index.train(x)
        self.index.add(x)
        self.index.nprobe = int(min(nlist, max(_IVF_MIN_PROBE, nlist // _IVF_PROBE_DIV)))

    def self_knn(self, k: int) -> np.ndarray:
        return self.query(self.x, k)

    def query(self, y: np.ndarray, k: int) -> np.ndarray:
        _, idx = self.index.search(np.ascontiguousarray(y, dtype=np.float32), min(k, self.n))
        return idx


def resolve_approx_backend(backend: str) -> str:
    """``auto`` → ivf (genmetrics' own, numpy only); ``faiss`` must be installed."""
    if backend not in APPROX_BACKENDS:
        raise GenmetricsError(f"approx_backend must be one of {APPROX_BACKENDS}, got {backend!r}")
    if backend in ("auto", "ivf"):
        return "ivf"
    return prefer_faiss(backend, "pynndescent", "approx_backend")


def count_in_balls(
    x: np.ndarray, centres: np.ndarray, r2: np.ndarray, *, strict: bool = True
) -> np.ndarray:
    """Exact #{j : ||x_i − c_j||² < r2_j} (``<=`` unless ``strict``) for every row x_i.

    float64 GEMM blocks of ~2²² distances; pairs within the rounding bound of a radius are
    recomputed as Σ(a − b)² (:func:`exact_sqdist`), so the counts are those of the definition.
    """
    less = np.less if strict else np.less_equal
    cn = np.einsum("ij,ij->i", centres, centres)
    c = 3.0 * (centres.shape[1] + 8.0) * 2.0**-53  # as _knn_exact._tol_factor, in float64
    rows = max(1, (1 << 22) // max(len(centres), 1))
    out = np.zeros(len(x), dtype=np.int64)
    for s in range(0, len(x), rows):
        xb = x[s : s + rows]
        xn = np.einsum("ij,ij->i", xb, xb)
        d2 = xn[:, None] + cn[None, :] - 2.0 * (xb @ centres.T)
        tol = c * (xn[:, None] + cn[None, :])
        sure = d2 < r2[None, :] - tol  # inside under < and <=
        ri, cj = np.nonzero(np.abs(d2 - r2[None, :]) <= tol)
        inside = less(exact_sqdist(xb, centres, ri, cj), r2[cj])
        out[s : s + rows] = sure.sum(axis=1) + np.bincount(ri[inside], minlength=len(xb))
    return out


def _augment(x: np.ndarray, r: np.ndarray | None, big: float) -> np.ndarray:
    """Append √(big² − r²) (or 0 when ``r`` is None) as an extra coordinate (float32).

    For a ball centre p with radius r_p and a point q: ||[p, √(R²−r_p²)] − [q, 0]||² =
    ||p − q||² − r_p² + R², so q lies in the ball iff its lifted distance is < R, and the
    nearest lifted centre is the ball q is deepest in.
    """
    extra = np.zeros(len(x)) if r is None else np.sqrt(np.maximum(big**2 - r**2, 0.0))
    return np.hstack([x, extra[:, None]]).astype(np.float32)


def prdc_approx(
    reference: np.ndarray,
    candidate: np.ndarray,
    ks: Sequence[int] | int = 4,
    *,
    strict: bool = True,
    seed: int = 0,
    n_neighbors: int | None = None,
    backend: str = "auto",
) -> dict[int, dict[str, float]]:
    """Approximate P/R/D/C from approximate nearest-neighbour searches (not a bound).

    ``backend``: ``faiss`` (IVF-Flat, when installed; ``auto`` picks it) or ``pynndescent``
    (NN-descent graphs). Radii: (k+1) nearest neighbours of each point in its own set, as
    found by the search (too large where it missed one). Ball membership: the lifting trick of
    :func:`_augment` turns "q is inside some P-ball" into a nearest-neighbour query over the
    ``n_neighbors`` deepest balls (default max(4k, 20)); rows inside all of them are counted
    exactly (:func:`count_in_balls`). Every pair is re-evaluated with exact float64 distances
    and the same ``<``/``<=`` rule as the exact path. Coverage: nearest q of each p. Errors
    go both ways (module docstring; ``APPROX_MEASURED``).
    """
    ks = as_ks(ks)
    p, q = check_pair(reference, candidate)
    kmax = max(ks)
    check_points({"reference": len(p), "candidate": len(q)}, kmax, 2, " for the approximate method")
    backend = resolve_approx_backend(backend)
    if backend == "ivf":
        return prdc_ivf(p, q, ks, strict=strict, seed=seed, n_probe=n_neighbors)
    make = _FaissIVFIndex if backend == "faiss" else _PynndescentIndex
    pd_ = np.ascontiguousarray(p, dtype=np.float64)
    qd = np.ascontiguousarray(q, dtype=np.float64)
    pf = pd_.astype(np.float32)
    qf = qd.astype(np.float32)
    less = np.less if strict else np.less_equal

    def exact_rows(a: np.ndarray, b: np.ndarray, nb: np.ndarray) -> np.ndarray:
        """Exact squared distances a[i] – b[nb[i, j]] shaped like ``nb`` (inf where nb < 0)."""
        ok = nb >= 0
        rows = np.repeat(np.arange(nb.shape[0]), nb.shape[1])[ok.ravel()]
        out = np.full(nb.shape, np.inf)
        out[ok] = exact_sqdist(a, b, rows, nb[ok])
        return out

    def radii(xd: np.ndarray, xf: np.ndarray, rs: int):
        index = make(xf, kmax + 2, rs)
        idx = index.self_knn(max(kmax + 2, _QUERY_K))
        sq = exact_rows(xd, xd, idx)
        # the search lists each point itself (distance 0); where a duplicate took its place,
        # add the self distance explicitly
        has_self = (idx == np.arange(len(xd))[:, None]).any(axis=1)
        sq = np.where(
            has_self[:, None], sq, np.concatenate([np.zeros((len(xd), 1)), sq[:, :-1]], 1)
        )
        sq = np.sort(sq, axis=1)
        return index, {k: sq[:, k] for k in ks}

    _, rp = radii(pd_, pf, seed)
    iq, rq = radii(qd, qf, seed + 1)
    near_q = exact_rows(pd_, qd, iq.query(pf, _QUERY_K)).min(axis=1)  # nearest q of each p
    res = {}
    for k in ks:
        m_nb = int(n_neighbors or max(4 * k, 20))
        # P-balls queried by candidates: precision and density
        big = float(np.sqrt(rp[k].max())) * (1 + 1e-3) + 1e-9
        aug = make(_augment(pf, np.sqrt(rp[k]), big), kmax + 2, seed + 2)
        nb = aug.query(_augment(qf, None, big), max(m_nb, _QUERY_K))
        inside_q = less(exact_rows(qd, pd_, nb), rp[k][nb])  # [n_q, m]; missing (-1): inf
        count_q = inside_q.sum(axis=1)
        # a q inside every ball returned may lie in more (hubs): count those rows exactly
        sat = np.flatnonzero(count_q >= min(nb.shape[1], len(pd_)))
        if sat.size:
            count_q[sat] = count_in_balls(qd[sat], pd_, rp[k], strict=strict)
        # Q-balls queried by references: recall
        big = float(np.sqrt(rq[k].max())) * (1 + 1e-3) + 1e-9
        aug = make(_augment(qf, np.sqrt(rq[k]), big), kmax + 2, seed + 3)
        nb = aug.query(_augment(pf, None, big), _QUERY_K)
        inside_p = less(exact_rows(pd_, qd, nb), rq[k][nb])
        res[k] = {
            "precision": float(inside_q.any(axis=1).mean()),
            "recall": float(inside_p.any(axis=1).mean()),
            "density": float(count_q.mean() / k),
            "coverage": float(less(near_q, rp[k]).mean()),
        }
    return res


SUBSAMPLE_N = 3000


def subsample_check(
    p: np.ndarray,
    q: np.ndarray,
    k: int,
    *,
    strict: bool,
    seed: int,
    backend: str,
    n_neighbors: int | None = None,
    m: int = SUBSAMPLE_N,
) -> dict:
    """The error of an approximate run, measured: exact and approximate P/R/D/C on m points
    per side drawn without replacement (``numpy.random.default_rng(seed)``, P first), and
    |approx − exact|. For ``ivf`` the subsample probes the same share of its lists as the
    full run (the error depends on that share, not on N alone): s = max(2, round(share ·
    √(2m))) lists probed of round(s / share) lists; faiss and pynndescent run with their
    defaults. An estimate for the full sets, not a bound."""
    from genmetrics.metrics._knn_exact import prdc_exact

    rng = np.random.default_rng(seed)
    m_p, m_q = min(m, len(p)), min(m, len(q))
    ip = np.sort(rng.choice(len(p), m_p, replace=False))
    iq = np.sort(rng.choice(len(q), m_q, replace=False))
    ps, qs = p[ip], q[iq]
    exact = prdc_exact(ps, qs, [k], strict=strict)[k]
    info: dict = {"n_per_side": [m_p, m_q], "seed": seed, "backend": backend}
    if backend == "ivf":
        n_lists, n_probe = ivf_shape(len(p), len(q), n_neighbors)
        share = n_probe / n_lists
        sub_probe = max(2, round(share * ivf_shape(m_p, m_q)[0]))
        sub_lists, sub_probe = ivf_shape(m_p, m_q, sub_probe, n_lists=round(sub_probe / share))
        approx = prdc_ivf(
            ps, qs, [k], strict=strict, seed=seed, n_probe=sub_probe, n_lists=sub_lists
        )[k]
        info["lists_probed"] = {"full": [n_probe, n_lists], "subsample": [sub_probe, sub_lists]}
    else:
        approx = prdc_approx(ps, qs, [k], strict=strict, seed=seed, backend=backend)[k]
    info["exact"] = exact
    info["approx"] = approx
    info["abs_error"] = {key: abs(approx[key] - exact[key]) for key in exact}
    return info
