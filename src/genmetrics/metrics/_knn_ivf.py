"""The ``ivf`` backend of approximate k-NN precision/recall/density/coverage: genmetrics' own
inverted file (numpy). A seeded k-means partitions P ∪ Q into √(n_p + n_q) lists; each list
is compared with the lists it probes (itself and its nearest by centroid, 1/32 of them, at
least 4) by float32 GEMM blocks with the exact engine's rounding bound, and every undecided
pair is rechecked in float64. With every list probed it gives the exact engine's values
(tested). Memory O(N·k) beyond the inputs. :mod:`genmetrics.metrics._knn_approx` dispatches
to it (``approx_backend="ivf"``, the default of ``auto``) and records its subsample check.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from genmetrics.metrics._inputs import as_ks, check_pair, check_points
from genmetrics.metrics._knn_exact import _tol_factor, default_threads, exact_sqdist, sq_norms

_IVF_PROBE_FRACTION = 1 / 32  # share of the lists each list probes (ivf backend)
_IVF_MIN_PROBE = 4  # ... but at least this many lists
_IVF_TRAIN_PER_LIST = 64  # k-means training sample: this many points per list
_IVF_ITER = 10  # Lloyd iterations
_IVF_BLOCK = 1 << 14  # rows per assignment block


def _kmeans(sample: np.ndarray, n_lists: int, seed: int) -> np.ndarray:
    """Lloyd k-means (float32 GEMM) on the training sample (rows ≥ n_lists), from n_lists
    seeded distinct rows; float32 centroids. An emptied cluster keeps its centroid."""
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(seed)
    sample = sample.astype(np.float32, copy=False)
    n = len(sample)
    cent = sample[np.sort(rng.choice(n, n_lists, replace=False))].copy()
    ones = np.ones(n, np.float32)
    for _ in range(_IVF_ITER):
        lab = _assign(sample, cent)
        counts = np.bincount(lab, minlength=n_lists)
        full = np.flatnonzero(counts)
        # per-cluster sums by a sparse one-hot product: no reordered copy of the sample
        sums = csr_matrix((ones, (lab, np.arange(n))), shape=(n_lists, n)) @ sample
        cent[full] = (np.asarray(sums)[full] / counts[full, None]).astype(np.float32)
    return cent


def _assign(x: np.ndarray, cent: np.ndarray) -> np.ndarray:
    """Nearest centroid of every row (argmin of ||c||² − 2 x·c), in row blocks."""
    cn = np.einsum("ij,ij->i", cent, cent)
    out = np.empty(len(x), dtype=np.int64)
    for s in range(0, len(x), _IVF_BLOCK):
        g = x[s : s + _IVF_BLOCK].astype(np.float32, copy=False) @ cent.T
        g *= -2.0
        g += cn[None, :]
        out[s : s + _IVF_BLOCK] = g.argmin(axis=1)
    return out


class _Lists:
    """Members of a set per inverted list: ``ids[starts[a]:starts[a + 1]]`` are in list a."""

    def __init__(self, labels: np.ndarray, n_lists: int) -> None:
        self.ids = np.argsort(labels, kind="stable")
        self.starts = np.zeros(n_lists + 1, dtype=np.int64)
        np.cumsum(np.bincount(labels, minlength=n_lists), out=self.starts[1:])

    def members(self, lists) -> np.ndarray:
        return np.concatenate([self.ids[self.starts[a] : self.starts[a + 1]] for a in lists])

    def size(self, a: int) -> int:
        return int(self.starts[a + 1] - self.starts[a])


def _probe_lists(cent: np.ndarray, n_probe: int, sizes: np.ndarray, need: int) -> list:
    """Per list a: itself and its nearest lists by centroid distance, ``n_probe`` in all,
    more while they hold fewer than ``need`` points."""
    cn = np.einsum("ij,ij->i", cent, cent, dtype=np.float64)
    d2 = cn[:, None] + cn[None, :] - 2.0 * (cent.astype(np.float64) @ cent.T.astype(np.float64))
    np.fill_diagonal(d2, -1.0)  # its own list first
    order = np.argsort(d2, axis=1, kind="stable")
    out = []
    for a in range(len(cent)):
        held = np.cumsum(sizes[order[a]])
        extra = int(np.searchsorted(held, need)) + 1  # lists needed to hold `need` points
        out.append(order[a, : max(n_probe, min(extra, len(cent)))])
    return out


def _gram_sq(xa: np.ndarray, na: np.ndarray, xb: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """float32 ||a_i||² + ||b_j||² − 2 a_i·b_j (rounding error ≤ _tol_factor(d)·(na + nb))."""
    t = xa @ xb.T
    t *= np.float32(-2.0)
    t += na.astype(np.float32)[:, None]
    t += nb.astype(np.float32)[None, :]
    return t


def _map_lists(fn, order: list[int], n_threads: int | None) -> list:
    """``fn(a)`` for every list a, on ``default_threads()`` threads of single-threaded BLAS."""
    from threadpoolctl import threadpool_limits

    n_threads = default_threads() if n_threads is None else max(1, int(n_threads))
    with threadpool_limits(limits=1, user_api="blas"):  # small GEMMs: one BLAS thread each
        if n_threads == 1:
            return [fn(a) for a in order]
        with ThreadPoolExecutor(max_workers=n_threads) as ex:
            return list(ex.map(fn, order))


def _ivf_radii(
    x: np.ndarray,
    norms: np.ndarray,
    lists: _Lists,
    probe: list,
    ks: Sequence[int],
    n_threads: int | None,
) -> dict[int, np.ndarray]:
    """Squared k-NN radii of every point among the points of its probed lists (self
    included at 0, prdc convention), exact in float64 for that candidate set: float32 GEMM
    blocks choose candidates within twice the rounding bound of the (k+1)-th smallest, which
    are recomputed as Σ(a − b)²."""
    kmax = max(ks)
    m = kmax + 1
    c = _tol_factor(x.shape[1])
    n = len(x)

    def one(a: int):
        rows = lists.ids[lists.starts[a] : lists.starts[a + 1]]
        if rows.size == 0:
            return None
        cols = lists.members(probe[a])
        t = _gram_sq(x[rows], norms[rows], x[cols], norms[cols])
        tol2 = 2.0 * c * (norms[rows] + float(norms[cols].max()))
        if t.shape[1] >= m:
            # the row's (k+1)-th smallest float32 value: a group-minima bound admits ~20 %
            # of a 768-d row (distances concentrate), the partition ~k+1 candidates
            lim = np.partition(t, kmax, axis=1)[:, kmax] + tol2
        else:
            lim = np.full(len(rows), np.inf)
        ri, cj = np.divmod(np.flatnonzero(t <= lim.astype(np.float32)[:, None]), t.shape[1])
        v = t[ri, cj].astype(np.float64)
        order = np.lexsort((v, ri))
        ri, cj, v = ri[order], cj[order], v[order]
        first = np.searchsorted(ri, np.arange(len(rows)))
        cnt = np.diff(np.r_[first, ri.size])
        kth = np.full(len(rows), np.inf)
        ok = cnt >= m
        kth[ok] = v[first[ok] + kmax]
        keep = v <= (kth + tol2)[ri]
        ri, cj = ri[keep], cj[keep]
        ex = exact_sqdist(x, x, rows[ri], cols[cj])
        order = np.lexsort((ex, ri))
        ri, ex = ri[order], ex[order]
        first = np.searchsorted(ri, np.arange(len(rows)))
        cnt = np.diff(np.r_[first, ri.size])
        out = {}
        for k in ks:
            r = np.full(len(rows), np.inf)  # fewer than k+1 candidates: unbounded ball
            has = cnt > k
            r[has] = ex[first[has] + k]
            out[k] = r
        return rows, out

    radii = {k: np.full(n, np.inf) for k in ks}
    order = sorted(range(len(probe)), key=lambda a: -lists.size(a))
    for res in _map_lists(one, order, n_threads):
        if res is not None:
            rows, out = res
            for k in ks:
                radii[k][rows] = out[k]
    return radii


def ivf_shape(
    n_p: int,
    n_q: int,
    n_probe: int | None = None,
    probe_fraction: float = _IVF_PROBE_FRACTION,
    n_lists: int | None = None,
) -> tuple[int, int]:
    """(lists L, lists probed per list) of the ivf backend: L = round(√(n_p + n_q)) unless
    ``n_lists`` is given (at most one list per 8 points), probed max(4, ⌈L·probe_fraction⌉)
    unless ``n_probe`` is given."""
    if n_lists is None:
        n_lists = round(np.sqrt(n_p + n_q))
    n_lists = int(max(1, min(n_lists, (n_p + n_q) // 8)))
    if n_probe is None:
        n_probe = max(_IVF_MIN_PROBE, int(np.ceil(n_lists * probe_fraction)))
    return n_lists, int(min(max(1, n_probe), n_lists))


def prdc_ivf(
    reference: np.ndarray,
    candidate: np.ndarray,
    ks: Sequence[int] | int = 4,
    *,
    strict: bool = True,
    seed: int = 0,
    n_probe: int | None = None,
    probe_fraction: float = _IVF_PROBE_FRACTION,
    n_threads: int | None = None,
    n_lists: int | None = None,
) -> dict[int, dict[str, float]]:
    """Approximate P/R/D/C by an inverted-file search computed with GEMM blocks.

    One seeded k-means partition of P ∪ Q into L = round(√(n_p + n_q)) lists; list a
    *probes* itself and its nearest lists by centroid (``n_probe``, default
    max(4, ⌈L·probe_fraction⌉), more while they hold fewer than k+1 points). Radii: the
    (k+1)-th smallest distance (self included) among the points of the probed lists of its
    own set, so r̂ >= r. Balls: every pair (q, p) whose lists probe one another (a symmetric
    relation) is evaluated once, with float32 GEMM and the rounding bound, undecided pairs in
    float64, against the radii r̂; pairs in lists that do not probe each other are missed.
    Errors therefore go both ways, as for the other backends. Memory O((n_p + n_q)·k) beyond
    the inputs (a float32 input is used as it is; one list's block at a time per thread).
    """
    ks = as_ks(ks)
    p, q = check_pair(reference, candidate)
    kmax = max(ks)
    check_points({"reference": len(p), "candidate": len(q)}, kmax, 2, " for the approximate method")
    pf = p if p.dtype == np.float32 else np.ascontiguousarray(p, dtype=np.float64)
    qf = q if q.dtype == np.float32 else np.ascontiguousarray(q, dtype=np.float64)
    n_p, n_q = len(pf), len(qf)
    n_lists, n_probe = ivf_shape(n_p, n_q, n_probe, probe_fraction, n_lists)
    rng = np.random.default_rng(seed)
    pick = np.sort(
        rng.choice(n_p + n_q, min(n_p + n_q, _IVF_TRAIN_PER_LIST * n_lists), replace=False)
    )
    from_p = int(np.count_nonzero(pick < n_p))
    train = np.empty((len(pick), pf.shape[1]), np.float32)  # ≤ 64 L rows: the only copy
    train[:from_p] = pf[pick[:from_p]]
    train[from_p:] = qf[pick[from_p:] - n_p]
    cent = _kmeans(train, n_lists, seed)
    del train
    lp, lq = _Lists(_assign(pf, cent), n_lists), _Lists(_assign(qf, cent), n_lists)
    sizes_p, sizes_q = np.diff(lp.starts), np.diff(lq.starts)
    np_norm, nq_norm = sq_norms(pf), sq_norms(qf)
    rp = _ivf_radii(pf, np_norm, lp, _probe_lists(cent, n_probe, sizes_p, kmax + 1), ks, n_threads)
    rq = _ivf_radii(qf, nq_norm, lq, _probe_lists(cent, n_probe, sizes_q, kmax + 1), ks, n_threads)
    # symmetric probe relation for the P×Q pass: a and b are paired when either probes the other
    base = _probe_lists(cent, n_probe, sizes_p + sizes_q, 1)
    pair = np.zeros((n_lists, n_lists), dtype=bool)
    for a, bs in enumerate(base):
        pair[a, bs] = True
    pair |= pair.T
    c = _tol_factor(pf.shape[1])
    less = np.less if strict else np.less_equal

    def settle(ri, cj, hv, r2, tol):
        """Inside flags of candidate pairs (global q ids ri, p ids cj) against radii r2."""
        sure = hv < r2 - tol
        amb = ~sure & (hv <= r2 + tol)
        if amb.any():
            sure[amb] = less(exact_sqdist(qf, pf, ri[amb], cj[amb]), r2[amb])
        return sure

    def one(a: int):
        rows = lq.ids[lq.starts[a] : lq.starts[a + 1]]
        if rows.size == 0:
            return None
        cols = lp.members(np.flatnonzero(pair[a]))
        if cols.size == 0:
            return None
        h = _gram_sq(qf[rows], nq_norm[rows], pf[cols], np_norm[cols])
        tol_c = c * (float(nq_norm[rows].max()) + np_norm[cols])  # per column (p)
        tol_r = c * (nq_norm[rows] + float(np_norm[cols].max()))  # per row (q)
        out = {}
        for k in ks:
            # q inside the ball of p: precision, density, coverage
            r2 = rp[k][cols]
            ri, cj = np.divmod(
                np.flatnonzero(h <= (r2 + tol_c).astype(np.float32)[None, :]), h.shape[1]
            )
            gi, gj = rows[ri], cols[cj]
            ins = settle(
                gi, gj, h[ri, cj].astype(np.float64), r2[cj], c * (nq_norm[gi] + np_norm[gj])
            )
            in_a = (gi[ins], gj[ins])
            # p inside the ball of q: recall
            r2 = rq[k][rows]
            ri, cj = np.divmod(
                np.flatnonzero(h <= (r2 + tol_r).astype(np.float32)[:, None]), h.shape[1]
            )
            gi, gj = rows[ri], cols[cj]
            ins = settle(
                gi, gj, h[ri, cj].astype(np.float64), r2[ri], c * (nq_norm[gi] + np_norm[gj])
            )
            out[k] = (*in_a, gj[ins])
        return out

    order = sorted(range(n_lists), key=lambda a: -lq.size(a))
    parts = [r for r in _map_lists(one, order, n_threads) if r is not None]
    res = {}
    for k in ks:
        qi = np.concatenate([pt[k][0] for pt in parts] + [np.zeros(0, np.int64)])
        pj = np.concatenate([pt[k][1] for pt in parts] + [np.zeros(0, np.int64)])
        pr = np.concatenate([pt[k][2] for pt in parts] + [np.zeros(0, np.int64)])
        count_q = np.bincount(qi, minlength=n_q)
        res[k] = {
            "precision": float(np.mean(count_q > 0)),
            "recall": float(np.mean(np.bincount(pr, minlength=n_p) > 0)),
            "density": float(count_q.mean() / k),
            "coverage": float(np.mean(np.bincount(pj, minlength=n_p) > 0)),
        }
    return res


#: points per side of the seeded subsample on which an approximate run measures its error
