"""Exact k-NN precision/recall/density/coverage through torch: the GPU twin of
:mod:`genmetrics.metrics._knn_exact`.

The float32 distance blocks (the same lifted GEMM, full float32: no TF32) and the candidate
masks run on the torch device; every decision is taken on the CPU by
:class:`~genmetrics.metrics._knn_exact._Decide` with the same rounding bounds and the same
float64 rechecks, so the values equal the numpy engine's on any device (tested on "cpu").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._inputs import as_ks
from genmetrics.metrics._knn_exact import (
    KnnRadii,
    _checked_pair,
    _Decide,
    _lifted,
    _summarise,
    _tol_factor,
    sq_norms,
)

__all__ = ["prdc_torch"]

#: float32 elements per distance block on a torch device (256 MiB)
_TORCH_BLOCK = 1 << 26


class _HighestMatmul:
    """Context: full float32 GEMMs in torch (no TF32), so the rounding bound holds."""

    def __enter__(self):
        import torch

        self.torch = torch
        self.prev = torch.get_float32_matmul_precision()
        self.prev_tf32 = torch.backends.cuda.matmul.allow_tf32
        torch.set_float32_matmul_precision("highest")
        torch.backends.cuda.matmul.allow_tf32 = False
        return self

    def __exit__(self, *exc) -> None:
        self.torch.set_float32_matmul_precision(self.prev)
        self.torch.backends.cuda.matmul.allow_tf32 = self.prev_tf32


def _torch_rows(n_rows: int, n_cols: int, block: int) -> int:
    return int(max(1, min(n_rows, block // max(n_cols, 1))))


def _radii_torch(x: np.ndarray, xf: np.ndarray, ks: Sequence[int], device: str, block: int):
    """:class:`KnnRadii` from float32 distance blocks on a torch ``device`` (full rows, topk).

    approx[k] = (k+1)-th smallest float32 distance of the row (self included), within
    tol of the exact value; candidates are the j with t_ij <= approx[kmax] + 2 tol, which
    contain every j with exact d² <= r²_kmax. Exact radii then come from the numpy
    float64 recomputation (:meth:`KnnRadii.exact`), so they equal the CPU engine's.
    """
    import torch

    n, d = x.shape
    kmax = max(ks)
    if n < kmax + 1:
        raise GenmetricsError(f"k={kmax} needs at least k+1={kmax + 1} points per set, got {n}")
    norms = sq_norms(x)
    tol = _tol_factor(d) * (norms + float(norms.max()))
    xa, yt = (torch.from_numpy(a).to(device) for a in _lifted(x, xf, norms))
    tol2 = torch.from_numpy(2.0 * tol).to(device)
    approx = {k: np.empty(n) for k in ks}
    rows, cols = [], []
    b = _torch_rows(n, n, block)
    for s in range(0, n, b):
        e = min(n, s + b)
        t = xa[s:e] @ yt
        vals = torch.topk(t, kmax + 1, dim=1, largest=False, sorted=True).values
        vals_cpu = vals.double().cpu().numpy()
        for k in ks:
            approx[k][s:e] = vals_cpu[:, k]
        lim = (vals[:, kmax].double() + tol2[s:e]).float()
        ri, cj = torch.nonzero(t <= lim[:, None], as_tuple=True)
        rows.append(ri.cpu().numpy() + s)
        cols.append(cj.cpu().numpy())
        del t
    r = KnnRadii.__new__(KnnRadii)
    r.x, r.ks, r.n, r.norms, r.tol, r.approx = x, list(ks), n, norms, tol, approx
    rows_all = np.concatenate(rows)
    r.cand_cols = np.concatenate(cols)  # row-major: grouped by row
    r.cand_starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows_all, minlength=n), out=r.cand_starts[1:])
    r._exact = {k: np.full(n, np.nan) for k in ks}
    return r


def _prdc_torch(pd_, qd, pf, qf, ks, strict: bool, device: str, block: int):
    """The exact P/R/D/C on a torch device: float32 GEMM blocks and candidate masks there,
    every decision on the CPU (:class:`_Decide`), so the values equal :func:`_prdc_blocks`'."""
    import torch

    with _HighestMatmul():
        rp = _radii_torch(pd_, pf, ks, device, block)
        rq = _radii_torch(qd, qf, ks, device, block)
        n_p, n_q = len(pd_), len(qd)
        dec = _Decide(pd_, qd, rp, rq, strict)
        pa = torch.from_numpy(_lifted(pd_, pf, dec.np_norm)[0]).to(device)
        qt = torch.from_numpy(_lifted(qd, qf, dec.nq_norm)[1]).to(device)
        r2q = {k: torch.from_numpy(rq.approx[k]).to(device) for k in ks}

        def pairs(h, mask) -> tuple[np.ndarray, ...]:
            """Candidate (row, column, float32 distance) triples of a mask, on the CPU."""
            ri, cj = torch.nonzero(mask, as_tuple=True)
            return ri.cpu().numpy(), cj.cpu().numpy(), h[ri, cj].cpu().numpy()

        parts = []
        b = _torch_rows(n_p, n_q, block)
        for s in range(0, n_p, b):
            e = min(n_p, s + b)
            h = pa[s:e] @ qt
            tol_a, tol_b = dec.tol_rows(s, e), dec.tol_cols(s, e)
            tol_b_t = torch.from_numpy(tol_b).to(device)
            out = {}
            for k in ks:
                lim_a = torch.from_numpy((rp.approx[k][s:e] + tol_a).astype(np.float32))
                in_a = dec.ball_a(k, s, tol_a, *pairs(h, h <= lim_a.to(device)[:, None]))
                lim_b = (r2q[k] + tol_b_t).float()
                out[k] = (*in_a, dec.ball_b(k, s, tol_b, *pairs(h, h <= lim_b[None, :])))
            parts.append(out)
            del h
    return _summarise(parts, ks, n_p, n_q)


def prdc_torch(
    reference: np.ndarray,
    candidate: np.ndarray,
    ks: Sequence[int] | int = 4,
    *,
    strict: bool = True,
    device: str = "cuda",
    block: int = _TORCH_BLOCK,
) -> dict[int, dict[str, float]]:
    """:func:`~genmetrics.metrics._knn_exact.prdc_exact` with the distance blocks on a torch
    ``device`` (``"cuda"``; ``"cpu"`` in the tests): the same checks and the same values."""
    ks = as_ks(ks)
    pd_, qd, pf, qf = _checked_pair(reference, candidate, ks, None)
    return _prdc_torch(pd_, qd, pf, qf, ks, strict, device, block)
