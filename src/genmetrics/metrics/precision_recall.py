"""k-NN precision, recall, density and coverage of a candidate set against a reference set.

P = reference ("real", human texts), Q = candidate ("fake", model texts). For a set X and a
point x in X, the k-NN radius r_k(x) is the distance to its k-th nearest neighbour **excluding
itself** (prdc: the (k+1)-th smallest of the row of distances that includes the self distance 0).
Then (Kynkäänniemi et al. 2019; Naeem et al. 2020; clovaai/prdc 0.2; pr-4-llm ``compute_prdc``):

* precision = mean_{q in Q} 1[∃ p: d(p, q) < r_k(p)]
* recall    = mean_{p in P} 1[∃ q: d(p, q) < r_k(q)]
* density   = (1/k) mean_{q in Q} #{p: d(p, q) < r_k(p)}
* coverage  = mean_{p in P} 1[min_q d(p, q) < r_k(p)]

``strict=True`` uses ``<`` (prdc, pr-4-llm); ``strict=False`` uses ``<=`` (Kynkäänniemi's
original code). They differ only on ties, i.e. duplicate points: a point with k or more exact
duplicates in its own set has radius 0, so under ``<`` its ball is empty and under ``<=`` it
holds exactly its duplicates. Duplicates are kept as they are (no dedupe).

Before the k-NN step, ``pca`` (default 0.9) applies pr-4-llm's ``PCA_``: stack [q; p],
L2-normalise rows, keep the leading PCA components explaining 90 % of the variance, float32.
``pca=false`` uses the features as given (prdc).

Exact path: squared distances ||a||² + ||b||² − 2a·b from float32 GEMM blocks (memory
O(block × N), never N×N; the radii pass computes each symmetric product once), with a
rigorous rounding bound; every pair whose comparison the bound
cannot decide (k-NN candidates, near-boundary pairs) is recomputed in float64 as Σ(a−b)², so
results equal a float64 evaluation (agreement with prdc on float64 input is exact up to
floating ties within ~1e-15 relative). Row blocks run on ``default_threads()`` threads with
single-threaded BLAS each.

Approximate path (``method="approx"``, or ``auto`` above ``approx_threshold`` points per side):
approximate nearest-neighbour searches (``approx_backend``: faiss IVF-Flat when installed,
else pynndescent NN-descent graphs) give the radii; "is q inside some P-ball" becomes a
nearest-neighbour query after lifting every centre p to [p, √(R² − r_p²)] (and q to [q, 0]);
every returned pair is re-checked with exact float64 distances, so only neighbours missed by
the search cause errors. Density counts the balls among the ``approx_neighbors`` deepest
ones (default max(4k, 20)). Measured on 300-d mixtures, N = 50k per side, 2 cores
(benchmarks/bench_distribution.py): exact 29 s; faiss 19 s with P/R/C equal to exact to 1e-4;
pynndescent 85 s (plus ~10-40 s numba JIT on its first call in a process) and 0.02-0.05 low
at d = 300 (within 0.01 at d = 32), so ``auto`` prefers faiss and switches only above 50k.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._quantize import check_pair, l2_pca, parse_pca
from genmetrics.metrics.registry import MetricResult, register

_U32 = 2.0**-24  # unit roundoff of float32
_PAIR_CHUNK = 4096  # pairs per float64 recompute chunk
# pynndescent settings of the approximate path: graph degree, query breadth (the nearest of
# _QUERY_K returned neighbours is right ~99.9 % of the time on 20k x 32-d mixtures, against
# ~80 % for a 1-NN query) and search epsilon.
_GRAPH_NEIGHBORS = 30
_QUERY_K = 10
_EPSILON = 0.3
_IVF_MIN_PROBE = 16  # faiss IVF: lists probed at least ...
_IVF_PROBE_DIV = 32  # ... or one list in _IVF_PROBE_DIV (exact rechecks absorb the misses)


# --------------------------------------------------------------------------- helpers


def _exact_sqdist(a: np.ndarray, b: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """float64 Σ_l (a[ia]_l − b[ib]_l)² for index pairs, in chunks (0 exactly for equal rows)."""
    out = np.empty(ia.size, dtype=np.float64)
    for s in range(0, ia.size, _PAIR_CHUNK):
        diff = a[ia[s : s + _PAIR_CHUNK]] - b[ib[s : s + _PAIR_CHUNK]]
        out[s : s + _PAIR_CHUNK] = np.einsum("ij,ij->i", diff, diff)
    return out


def _tol_factor(d: int) -> float:
    """Bound factor c with |s_approx − s| <= c (||a||² + ||b||²) for the float32 path.

    s_approx is one float32 dot product of length D <= d + 2 of the lifted vectors
    [a, ||a||², 1] · [−2b, 1, ||b||²]: its rounding error is <= γ_D Σ|terms| with
    Σ|terms| <= 2||a|| ||b|| + ||a||² + ||b||² <= 2 (||a||² + ||b||²), i.e. about 2 D u; the
    float32 rounding of the inputs and of the thresholds adds a few u. Taken 1.5x larger.
    """
    return 3.0 * (d + 8.0) * _U32


def _nonzero2d(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the True entries of a C-contiguous 2-D mask (fast path)."""
    flat = np.flatnonzero(mask)
    return np.divmod(flat, mask.shape[1])


def default_threads() -> int:
    """CPU cores this process may use (affinity-aware; ``OMP_NUM_THREADS`` when set, as the
    workflow sets it to the job's threads), capped at 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        n = os.cpu_count() or 1
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        n = min(n, int(env))
    return max(1, min(8, n))


_local = threading.local()


def _scratch(name: str, rows: int, cols: int, dtype: type = np.float32) -> np.ndarray:
    """A [rows, cols] scratch array kept per thread and per name (no re-allocation per block)."""
    store = getattr(_local, "store", None)
    if store is None:
        store = _local.store = {}
    buf = store.get(name)
    if buf is None or buf.size < rows * cols or buf.dtype != dtype:
        buf = store[name] = np.empty(rows * cols, dtype=dtype)
    return buf[: rows * cols].reshape(rows, cols)


def _run_blocks(n_rows: int, n_cols: int, chunk_size: int, n_threads: int | None, fn) -> list:
    """Apply ``fn(start, end, buf)`` to consecutive row blocks, in order.

    With several threads each worker runs single-threaded BLAS on its own blocks, so GEMM and
    the element-wise passes both use every core; results come back in block order.
    """
    b = _block_rows(n_rows, n_cols, chunk_size)
    starts = list(range(0, n_rows, b))
    n_threads = default_threads() if n_threads is None else max(1, int(n_threads))
    if n_threads == 1 or len(starts) == 1:
        try:
            return [fn(s, min(n_rows, s + b), _scratch("h", b, n_cols)) for s in starts]
        finally:
            _local.store = {}  # do not keep scratch memory alive in the calling thread
    from threadpoolctl import threadpool_limits

    def run(s: int):
        return fn(s, min(n_rows, s + b), _scratch("h", b, n_cols))

    with threadpool_limits(limits=1, user_api="blas"):
        with ThreadPoolExecutor(max_workers=min(n_threads, len(starts))) as ex:
            return list(ex.map(run, starts))


def _block_rows(n_rows: int, n_cols: int, chunk_size: int) -> int:
    return int(max(8, min(n_rows, chunk_size // max(n_cols, 1))))


def _row_value_order(rows: np.ndarray, values: np.ndarray, *, fast: bool = False) -> np.ndarray:
    """Permutation sorting (row, value) pairs by row, then value.

    ``fast`` sorts one float64 key row·span + value instead of a two-key lexsort (values
    closer than ~1e-11 of their range may swap): fine for approximate values and upper
    bounds, not used for exact radii.
    """
    if fast and values.size:
        lo = float(values.min())
        span = (float(values.max()) - lo) * 1.0001 + 1e-30
        return np.argsort(rows * span + (values - lo))
    return np.lexsort((values, rows))


def _ragged_sorted(rows: np.ndarray, values: np.ndarray, n_rows: int, *, fast: bool = False):
    """Sorted order of (row, value) pairs and the start offset of each row in it."""
    order = _row_value_order(rows, values, fast=fast)
    starts = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=starts[1:])
    return order, starts


class KnnRadii:
    """Squared k-NN radii of a set, approximate first and exact on demand.

    After one blocked float32 distance pass, ``approx[k][i]`` is within ``tol[i]`` of the
    exact r²_k(i) = (k+1)-th smallest of {||x_i − x_j||² : j} (self included at distance 0,
    as prdc), and ``cand`` holds, per row, every j whose exact squared distance can be
    <= r²_kmax(i). :meth:`exact` recomputes r²_k for given rows in float64 from those
    candidates only, so exact radii cost O(k d) per row actually needed.
    """

    def __init__(
        self,
        x: np.ndarray,
        ks: Sequence[int],
        *,
        chunk_size: int = 1 << 22,
        xf: np.ndarray | None = None,
        n_threads: int | None = None,
    ) -> None:
        xd = np.ascontiguousarray(x, dtype=np.float64)
        n, d = xd.shape
        kmax = max(ks)
        if n < kmax + 1:
            raise GenmetricsError(f"k={kmax} needs at least k+1={kmax + 1} points per set, got {n}")
        self.x, self.ks = xd, list(ks)
        xf = xf if xf is not None else xd.astype(np.float32)
        norms = np.einsum("ij,ij->i", xd, xd)
        norms_f = norms.astype(np.float32)[:, None]
        ones = np.ones((n, 1), np.float32)
        # one GEMM gives t = [x_i, ||x_i||², 1] · [−2x_j, 1, ||x_j||²] ≈ ||x_i − x_j||²
        xa = np.hstack([xf, norms_f, ones])
        ya = np.hstack([xf * np.float32(-2.0), ones, norms_f])
        del norms_f, ones
        c = _tol_factor(d)
        nmax = float(norms.max())
        self.tol = c * (norms + nmax)
        self.approx: dict[int, np.ndarray] = {}
        m = kmax + 1  # the m smallest per row are needed (self included)
        tol2 = 2.0 * self.tol
        # Running upper bound thr[i] of row i's m-th smallest approximate squared distance,
        # kept as the m smallest values seen so far (top[i], sorted) and updated under a lock
        # after every block, so later blocks admit few candidates.
        thr = np.full(n, np.inf)
        top = np.full((n, m), np.inf)
        lock = threading.Lock()

        def group_bound(a: np.ndarray, axis: int) -> np.ndarray:
            """Largest of m group minima along ``axis`` (>= the m-th smallest), inf if < m."""
            size = a.shape[axis]
            if size < m:
                return np.full(a.shape[1 - axis], np.inf)
            bounds = np.linspace(0, size, m + 1).astype(np.int64)[:-1]
            return np.minimum.reduceat(a, bounds, axis=axis).max(axis=axis)

        def merge(rows: np.ndarray, vals: np.ndarray) -> None:
            """Fold candidate values into the per-row m smallest and tighten thr (locked)."""
            if rows.size == 0:
                return
            order = _row_value_order(rows, vals, fast=True)
            rows, vals = rows[order], vals[order]
            first = np.r_[0, np.flatnonzero(np.diff(rows)) + 1]
            counts = np.diff(np.r_[first, rows.size])
            rank = np.arange(rows.size) - np.repeat(first, counts)
            sel = rank < m
            u = rows[first]
            with lock:
                merged = np.full((u.size, 2 * m), np.inf)
                merged[:, :m] = top[u]
                merged[np.repeat(np.arange(u.size), counts)[sel], m + rank[sel]] = vals[sel]
                merged.sort(axis=1)
                top[u] = merged[:, :m]
                thr[u] = np.minimum(thr[u], merged[:, m - 1])

        def block(s: int, e: int, buf: np.ndarray):
            # Symmetric: rows [s, e) against columns [s, n) only. Row i of the block gets its
            # columns >= s here; rows j >= e get columns [s, e) from the transposed part.
            w = n - s
            t = buf.reshape(-1)[: (e - s) * w].reshape(e - s, w)
            np.matmul(xa[s:e], ya[s:].T, out=t)  # t ≈ ||x_i − x_j||²
            lim = np.minimum(thr[s:e], group_bound(t, 1)) + tol2[s:e]
            r1, c1 = _nonzero2d(t <= lim.astype(np.float32)[:, None])
            rows, cols, vals = [r1 + s], [c1 + s], [t[r1, c1].astype(np.float64)]
            if e < n:
                tt = t[:, e - s :]  # (i in [s, e), j in [e, n)) seen from row j
                lim = np.minimum(thr[e:], group_bound(tt, 0)) + tol2[e:]
                ri, cj = _nonzero2d(tt <= lim.astype(np.float32)[None, :])
                rows.append(cj + e)
                cols.append(ri + s)
                vals.append(tt[ri, cj].astype(np.float64))
            if e < n:  # only rows still waiting for pieces need a tighter running bound
                merge(rows[1], vals[1])
            return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)

        parts = _run_blocks(n, n, chunk_size, n_threads, block)
        rows = np.concatenate([p[0] for p in parts])
        cols = np.concatenate([p[1] for p in parts])
        vals = np.concatenate([p[2] for p in parts])
        del parts
        order, starts = _ragged_sorted(rows, vals, n, fast=True)
        for k in ks:
            self.approx[k] = vals[order[starts[:-1] + k]]
        kth = vals[order[starts[:-1] + kmax]]
        order = order[vals[order] <= (kth + tol2)[rows[order]]]  # sorted by row, then value
        rows = rows[order]
        self.cand_cols = cols[order]  # grouped by row
        self.cand_starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=self.cand_starts[1:])
        self._exact = {k: np.full(n, np.nan) for k in ks}

    def exact(self, k: int, rows: np.ndarray) -> np.ndarray:
        """Exact float64 r²_k for ``rows`` (computed once per row, then cached)."""
        cache = self._exact[k]
        todo = np.unique(rows[np.isnan(cache[rows])])
        if todo.size:
            lens = self.cand_starts[todo + 1] - self.cand_starts[todo]
            ri = np.repeat(todo, lens)
            idx = np.concatenate(
                [np.arange(self.cand_starts[i], self.cand_starts[i + 1]) for i in todo]
            )
            ex = _exact_sqdist(self.x, self.x, ri, self.cand_cols[idx])
            order, starts = _ragged_sorted(np.repeat(np.arange(todo.size), lens), ex, todo.size)
            for kk in self.ks:
                self._exact[kk][todo] = ex[order[starts[:-1] + kk]]
        return cache[rows]

    def all_exact(self, k: int) -> np.ndarray:
        return self.exact(k, np.arange(self.x.shape[0]))


def knn_radii_sq(x: np.ndarray, ks: Sequence[int], *, chunk_size: int = 1 << 22) -> dict:
    """Exact squared k-NN radii (self excluded, prdc convention) for each k: {k: [N]}."""
    r = KnnRadii(x, ks, chunk_size=chunk_size)
    return {k: r.all_exact(k) for k in r.ks}


def _prdc_blocks(
    pd_: np.ndarray,
    qd: np.ndarray,
    rp: KnnRadii,
    rq: KnnRadii,
    ks: Sequence[int],
    strict: bool,
    chunk_size: int,
    pf: np.ndarray,
    qf: np.ndarray,
    n_threads: int | None = None,
) -> dict[int, dict[str, float]]:
    """One blocked pass over d(P, Q) that evaluates the four statistics for every k.

    Sure decisions use float32 distances and approximate radii with the combined rounding
    bound; undecided pairs are settled with float64 distances and exact radii.
    """
    n_p, d = pd_.shape
    n_q = qd.shape[0]
    c = _tol_factor(d)
    np_norm = np.einsum("ij,ij->i", pd_, pd_)
    nq_norm = np.einsum("ij,ij->i", qd, qd)
    # one GEMM gives h = [p, ||p||², 1] · [−2q, 1, ||q||²] ≈ ||p − q||²
    pa = np.hstack([pf, np_norm.astype(np.float32)[:, None], np.ones((n_p, 1), np.float32)])
    qa = np.hstack(
        [qf * np.float32(-2.0), np.ones((n_q, 1), np.float32), nq_norm.astype(np.float32)[:, None]]
    )
    nq_max = float(nq_norm.max())
    less = np.less if strict else np.less_equal

    def settle(sure: np.ndarray, ri: np.ndarray, cj: np.ndarray, radius) -> np.ndarray:
        """Inside flags for candidate pairs: sure ones, the rest by float64 recomputation."""
        amb = ~sure
        if amb.any():
            ex = _exact_sqdist(pd_, qd, ri[amb], cj[amb])
            sure = sure.copy()
            sure[amb] = less(ex, radius(ri[amb], cj[amb]))
        return sure

    def block(s: int, e: int, buf: np.ndarray) -> dict[int, tuple[np.ndarray, ...]]:
        h = buf[: e - s]
        np.matmul(pa[s:e], qa.T, out=h)
        # bound on the float32 distances + bound on the approximate radii
        tol_a = c * (np_norm[s:e] + nq_max) + rp.tol[s:e]  # per row
        tol_b = c * (float(np_norm[s:e].max()) + nq_norm) + rq.tol  # per column
        mask = _scratch("mask", e - s, n_q, np.bool_)
        out = {}
        for k in ks:
            # A: d(p_i, q_j) vs r_k(p_i): candidates h <= r² + tol, sure below r² − tol.
            r2 = rp.approx[k][s:e]
            np.less_equal(h, (r2 + tol_a).astype(np.float32)[:, None], out=mask)
            ri, cj = _nonzero2d(mask)
            sure = h[ri, cj] < (r2 - tol_a)[ri]
            ri += s
            inside = settle(sure, ri, cj, lambda i, j, k=k: rp.exact(k, i))
            in_a = (ri[inside], cj[inside])
            # B: d(p_i, q_j) vs r_k(q_j), thresholds per column.
            r2 = rq.approx[k]
            np.less_equal(h, (r2 + tol_b).astype(np.float32)[None, :], out=mask)
            ri, cj = _nonzero2d(mask)
            sure = h[ri, cj] < (r2 - tol_b)[cj]
            ri += s
            inside = settle(sure, ri, cj, lambda i, j, k=k: rq.exact(k, j))
            out[k] = (*in_a, ri[inside])
        return out

    parts = _run_blocks(n_p, n_q, chunk_size, n_threads, block)
    # per-block results are sparse (pairs inside a ball) and merged here: no shared counters
    acc = {}
    for k in ks:
        rows_a = np.concatenate([part[k][0] for part in parts])
        cols_a = np.concatenate([part[k][1] for part in parts])
        rows_b = np.concatenate([part[k][2] for part in parts])
        cover = np.zeros(n_p, dtype=bool)
        cover[rows_a] = True
        recall = np.zeros(n_p, dtype=bool)
        recall[rows_b] = True
        acc[k] = {
            "count_q": np.bincount(cols_a, minlength=n_q),  # #P-balls holding each q
            "cover_p": cover,  # the ball of p holds some q
            "recall_p": recall,  # p lies in some Q-ball
        }
    res = {}
    for k in ks:
        a = acc[k]
        res[k] = {
            "precision": float(np.mean(a["count_q"] > 0)),
            "recall": float(np.mean(a["recall_p"])),
            "density": float(np.mean(a["count_q"]) / k),
            "coverage": float(np.mean(a["cover_p"])),
        }
    return res


def prdc_exact(
    reference: np.ndarray,
    candidate: np.ndarray,
    ks: Sequence[int] | int = 4,
    *,
    strict: bool = True,
    chunk_size: int = 1 << 22,
    n_threads: int | None = None,
) -> dict[int, dict[str, float]]:
    """Exact precision/recall/density/coverage for each k in ``ks`` on the given features.

    Memory O(chunk_size) floats per block; one distance pass per set for the radii and one
    pass over d(P, Q) shared by all k. Returns {k: {"precision", "recall", "density",
    "coverage"}}.
    """
    ks = _check_ks(ks)
    p, q = check_pair(reference, candidate)
    kmax = max(ks)
    for name, x in (("reference", p), ("candidate", q)):
        if x.shape[0] < kmax + 1:
            raise GenmetricsError(
                f"{name}: k={kmax} needs at least k+1={kmax + 1} points, got {x.shape[0]}"
            )
    pd_ = np.ascontiguousarray(p, dtype=np.float64)
    qd = np.ascontiguousarray(q, dtype=np.float64)
    pf = pd_.astype(np.float32)
    qf = qd.astype(np.float32)
    rp = KnnRadii(pd_, ks, chunk_size=chunk_size, xf=pf, n_threads=n_threads)
    rq = KnnRadii(qd, ks, chunk_size=chunk_size, xf=qf, n_threads=n_threads)
    return _prdc_blocks(pd_, qd, rp, rq, ks, strict, chunk_size, pf, qf, n_threads)


APPROX_BACKENDS = ("auto", "faiss", "pynndescent")


class _PynndescentIndex:
    """NN-descent graph (Dong et al. 2011) of a set, searchable after ``prepare``."""

    def __init__(self, x: np.ndarray, k_graph: int, seed: int) -> None:
        from pynndescent import NNDescent

        self.n = len(x)
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
    from genmetrics.metrics._quantize import faiss_available

    backend = str(backend).lower()
    if backend not in APPROX_BACKENDS:
        raise GenmetricsError(f"approx_backend must be one of {APPROX_BACKENDS}, got {backend!r}")
    if backend == "auto":
        return "faiss" if faiss_available() else "pynndescent"
    if backend == "faiss" and not faiss_available():
        raise GenmetricsError("approx_backend='faiss' but faiss is not installed")
    return backend


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
    """Approximate P/R/D/C from approximate nearest-neighbour searches.

    ``backend``: ``faiss`` (IVF-Flat, when installed; ``auto`` picks it) or ``pynndescent``
    (NN-descent graphs). Radii: (k+1) nearest neighbours of each point in its own set.
    Ball membership: the lifting trick of :func:`_augment` turns "q is inside some P-ball"
    into a nearest-neighbour query (precision, recall). Every pair a search returns is
    re-evaluated with exact float64 distances and the same ``<``/``<=`` rule as the exact
    path, so errors only come from neighbours a search missed (results are lower bounds of
    the exact values, up to radii that came out too large). Density counts the balls among
    the ``n_neighbors`` deepest ones (default max(4k, 20)). Coverage: nearest q of each p.
    """
    ks = _check_ks(ks)
    p, q = check_pair(reference, candidate)
    kmax = max(ks)
    for name, x in (("reference", p), ("candidate", q)):
        if x.shape[0] < kmax + 2:
            raise GenmetricsError(
                f"{name}: k={kmax} needs at least k+2={kmax + 2} points for the approximate "
                f"method, got {x.shape[0]}"
            )
    backend = resolve_approx_backend(backend)
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
        out[ok] = _exact_sqdist(a, b, rows, nb[ok])
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
        # Q-balls queried by references: recall
        big = float(np.sqrt(rq[k].max())) * (1 + 1e-3) + 1e-9
        aug = make(_augment(qf, np.sqrt(rq[k]), big), kmax + 2, seed + 3)
        nb = aug.query(_augment(pf, None, big), _QUERY_K)
        inside_p = less(exact_rows(pd_, qd, nb), rq[k][nb])
        res[k] = {
            "precision": float(inside_q.any(axis=1).mean()),
            "recall": float(inside_p.any(axis=1).mean()),
            "density": float(inside_q.sum(axis=1).mean() / k),
            "coverage": float(less(near_q, rp[k]).mean()),
        }
    return res


def _check_ks(ks: Sequence[int] | int) -> list[int]:
    if isinstance(ks, (int, np.integer)):
        ks = [int(ks)]
    ks = [int(k) for k in ks]
    if not ks:
        raise GenmetricsError("no k given")
    for k in ks:
        if k < 1:
            raise GenmetricsError(f"k must be a positive integer, got {k}")
    return sorted(set(ks))


def _check_bool(v: Any, name: str) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return v.strip().lower() in ("true", "1", "yes")
    if isinstance(v, (int, np.integer)) and v in (0, 1):
        return bool(v)
    raise GenmetricsError(f"{name} must be true or false, got {v!r}")


def prepare_features(
    reference: Any, candidate: Any, *, pca: Any = 0.9, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Validate and apply pr-4-llm's preprocessing (L2 + PCA on [q; p]) unless ``pca`` is off."""
    p, q = check_pair(reference, candidate)
    var = parse_pca(pca)
    if var is None:
        return p, q
    return l2_pca(p, q, var, seed=int(seed))


def prdc_for_ks(
    reference: Any,
    candidate: Any,
    ks: Sequence[int] | int = 4,
    *,
    pca: Any = 0.9,
    strict: bool = True,
    method: str = "auto",
    seed: int = 0,
    approx_threshold: int = 50000,
    approx_neighbors: int | None = None,
    approx_backend: str = "auto",
    chunk_size: int = 1 << 22,
) -> dict[int, dict[str, float]]:
    """Preprocess once, then evaluate P/R/D/C for every k (used by the k sweeps)."""
    method = str(method).lower()
    if method not in ("auto", "exact", "approx"):
        raise GenmetricsError(f"method must be auto, exact or approx, got {method!r}")
    strict = _check_bool(strict, "strict")
    p, q = prepare_features(reference, candidate, pca=pca, seed=seed)
    if method == "auto":
        method = "approx" if max(len(p), len(q)) > int(approx_threshold) else "exact"
    if method == "approx":
        return prdc_approx(
            p,
            q,
            ks,
            strict=strict,
            seed=int(seed),
            n_neighbors=None if approx_neighbors is None else int(approx_neighbors),
            backend=approx_backend,
        )
    return prdc_exact(p, q, ks, strict=strict, chunk_size=int(chunk_size))


@register(
    "precision_recall",
    input="embeddings",
    reference="required",
    values=("precision", "recall", "density", "coverage"),
    params={
        "k": 4,
        "pca": 0.9,
        "strict": True,
        "method": "auto",
        "seed": 0,
        "approx_threshold": 50000,
        "approx_neighbors": None,
        "approx_backend": "auto",
        "chunk_size": 1 << 22,
    },
)
def precision_recall(
    *,
    reference: Any,
    candidate: Any,
    k: int = 4,
    pca: Any = 0.9,
    strict: bool = True,
    method: str = "auto",
    seed: int = 0,
    approx_threshold: int = 50000,
    approx_neighbors: int | None = None,
    approx_backend: str = "auto",
    chunk_size: int = 1 << 22,
) -> MetricResult:
    """k-NN precision/recall (Kynkäänniemi 2019) and density/coverage (Naeem 2020), prdc convention.

    P = reference, Q = candidate; radius = distance to the k-th nearest neighbour excluding
    self; precision = share of Q inside some P-ball, recall = share of P inside some Q-ball,
    density = mean number of P-balls containing a q divided by k, coverage = share of P-balls
    containing some q. ``pca`` = pr-4-llm's L2 + PCA(0.9) on [q; p] (``false``: raw features);
    ``strict`` = ``<`` as prdc (``false``: ``<=`` as Kynkäänniemi); ``method`` = exact (blocked,
    float64-exact) | approx (faiss IVF, else pynndescent; ``approx_backend``) | auto (approx
    above ``approx_threshold`` = 50k points per side, where the exact path takes ~30 s).
    """
    try:
        k = int(k)
    except (TypeError, ValueError):
        raise GenmetricsError(f"k must be an integer, got {k!r}") from None
    out = prdc_for_ks(
        reference,
        candidate,
        [k],
        pca=pca,
        strict=strict,
        method=method,
        seed=seed,
        approx_threshold=approx_threshold,
        approx_neighbors=approx_neighbors,
        approx_backend=approx_backend,
        chunk_size=chunk_size,
    )[k]
    n = {"reference": int(np.shape(reference)[0]), "candidate": int(np.shape(candidate)[0])}
    return MetricResult(values=out, extras={}, n=n)
