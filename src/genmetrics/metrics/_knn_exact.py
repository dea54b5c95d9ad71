"""Exact k-NN precision/recall/density/coverage for large sets: the blocked engine.

Same definitions as :mod:`genmetrics.metrics.precision_recall` (prdc convention, radii exclude
the point itself). Squared distances ||a||² + ||b||² − 2a·b come from float32 GEMM blocks
(memory O(block × N), never N×N; the radii pass computes each symmetric product once), with a
rigorous rounding bound; every pair whose comparison the bound cannot decide (k-NN candidates,
near-boundary pairs) is recomputed in float64 as Σ(a−b)², so results equal a float64
evaluation (agreement with prdc on float64 input is exact up to floating ties within ~1e-15
relative). Row blocks run on ``default_threads()`` threads with single-threaded BLAS each.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._inputs import as_ks, check_pair, check_points

__all__ = ["KnnRadii", "default_threads", "exact_sqdist", "knn_radii_sq", "prdc_exact"]

_U32 = 2.0**-24  # unit roundoff of float32
_PAIR_CHUNK = 4096  # pairs per float64 recompute chunk


def exact_sqdist(a: np.ndarray, b: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
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
            ex = exact_sqdist(self.x, self.x, ri, self.cand_cols[idx])
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
            ex = exact_sqdist(pd_, qd, ri[amb], cj[amb])
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
    ks = as_ks(ks)
    p, q = check_pair(reference, candidate)
    check_points({"reference": len(p), "candidate": len(q)}, max(ks))
    pd_ = np.ascontiguousarray(p, dtype=np.float64)
    qd = np.ascontiguousarray(q, dtype=np.float64)
    pf = pd_.astype(np.float32)
    qf = qd.astype(np.float32)
    rp = KnnRadii(pd_, ks, chunk_size=chunk_size, xf=pf, n_threads=n_threads)
    rq = KnnRadii(qd, ks, chunk_size=chunk_size, xf=qf, n_threads=n_threads)
    return _prdc_blocks(pd_, qd, rp, rq, ks, strict, chunk_size, pf, qf, n_threads)
