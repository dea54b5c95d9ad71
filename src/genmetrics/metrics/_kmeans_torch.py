"""faiss's k-means in torch: the same labels on a CPU and on a GPU (MAUVE's clustering, issue 28).

The algorithm is faiss ``Clustering`` (1.15) as mauve-text calls it (``faiss.Kmeans(d, k,
niter, nredo, seed)``):

* when n > 256 k, train on the first 256 k rows of faiss' ``rand_perm(n, seed)``;
* restart r (of ``nredo``) starts from the rows ``rand_perm(n, seed + 1 + 15486557 r)[:k]``
  (faiss' Fisher–Yates shuffle over ``std::mt19937``, reproduced with numpy's MT19937);
* Lloyd steps: assign every point to its nearest centroid (squared L2), centroid = mean of its
  points, an empty cluster takes half of a donor picked as faiss' ``split_clusters`` does
  (``mt19937(1234)``, symmetric ×(1 ± 1/1024) perturbation); at most ``niter`` steps, stopping
  when an assignment repeats the previous one (a fixed point: faiss stops one step later, when
  its objective repeats, with the same centroids);
* keep the restart of lowest objective Σ ‖x − c‖² (the first on a tie), label every row by its
  nearest final centroid.

Device independence (the values never depend on the device):

* centroid sums are exact: rows are read as int64 fixed point (x · 2^e, e chosen so that no
  sum can overflow; float32 entries above 2^-(e-24) are exact), summed exactly in any order,
  then divided in float64; the same centroids on every device and in every summation order;
* distances are float32 GEMMs on the device (TF32 off); a point whose best and second-best
  distances lie within the float32 error bound (d + 16) 2^-23 (‖x‖ + max‖c‖)² of each other is
  reassigned from float64 distances computed on the CPU (numpy); so a label can differ
  between devices only on a float64 tie;
* the objective that picks the restart is computed in float64 on the CPU.

It is not faiss bit for bit: faiss sums centroids in float32, so its trajectory can part from
this one at a near-tie; on MAUVE's inputs the two gave the same histograms or MAUVE within
0.01 (tests/test_kmeans_torch.py, NOTES-mauve.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from genmetrics import GenmetricsError

#: faiss ``ClusteringParameters.max_points_per_centroid``: training rows per centroid at most
MAX_POINTS_PER_CENTROID = 256
_EPS_SPLIT = 1.0 / 1024.0  # faiss split_clusters' perturbation
_REDO_STRIDE = 15486557  # faiss: seed + 1 + redo * 15486557


def _mt19937(seed: int) -> Any:
    """numpy's MT19937 seeded as ``std::mt19937((unsigned int) seed)`` (init_genrand)."""
    return np.random.RandomState(int(seed) & 0xFFFFFFFF)._bit_generator


def rand_perm_head(n: int, m: int, seed: int) -> np.ndarray:
    """The first ``m`` entries of faiss ``rand_perm(perm, n, seed)``: for i = 0 .. n − 2,
    swap perm[i] with perm[i + mt() % (n − i)]; entries below m are final after step m − 1."""
    m = min(m, n)
    perm = np.arange(n, dtype=np.int64)
    steps = min(m, n - 1)
    raw = _mt19937(seed).random_raw(steps).astype(np.int64)
    for i in range(steps):
        j = i + int(raw[i] % (n - i))
        perm[i], perm[j] = perm[j], perm[i]
    return perm[:m]


def split_empty(centroids: np.ndarray, counts: np.ndarray, n: int) -> int:
    """faiss ``split_clusters`` on float64 centroids, in place: each empty cluster ci copies a
    donor cj (scan cj = 0, 1, … with probability (count_cj − 1)/(n − k) from ``mt19937(1234)``,
    the largest cluster after 10 k tries), then ci ×(1 ± ε), cj ×(1 ∓ ε) alternately along the
    dimensions, and the donor's count is halved. Returns the number of splits."""
    k = len(counts)
    hassign = counts.astype(np.float32)
    rng = _mt19937(1234)
    denom = np.float32(n - k)
    top = np.float32(4294967295.0)
    up = np.where(np.arange(centroids.shape[1]) % 2 == 0, 1 + _EPS_SPLIT, 1 - _EPS_SPLIT)
    nsplit = 0
    for ci in range(k):
        if hassign[ci] != 0:
            continue
        cj, tries, found = 0, 0, False
        while tries < 10 * k:
            p = np.float32((float(hassign[cj]) - 1.0) / float(denom))
            r = np.float32(rng.random_raw()) / top
            if r < p:
                found = True
                break
            tries += 1
            cj = (cj + 1) % k
        if not found:
            cj = int(np.argmax(hassign))
        centroids[ci] = centroids[cj] * up
        centroids[cj] = centroids[cj] * (2.0 - up)
        hassign[ci] = hassign[cj] / np.float32(2)
        hassign[cj] -= hassign[ci]
        nsplit += 1
    return nsplit


def nearest_float64(x: np.ndarray, centroids: np.ndarray, block: int = 64) -> np.ndarray:
    """argmin_j Σ (x − c_j)² in float64 on the CPU (first index on a tie), ``block`` rows at a
    time (a block × k × d temporary)."""
    out = np.empty(len(x), dtype=np.int64)
    for s in range(0, len(x), block):
        diff = x[s : s + block, None, :] - centroids[None, :, :]
        out[s : s + block] = np.argmin(np.einsum("ijk,ijk->ij", diff, diff), axis=1)
    return out


def nearest_among(
    x: np.ndarray, centroids: np.ndarray, rows: np.ndarray, cols: np.ndarray, block: int = 4096
) -> np.ndarray:
    """For each row r of ``x``: argmin of Σ (x_r − c_j)² in float64 over the candidate pairs
    (``rows`` [r], ``cols`` [j], grouped by row, every r present), the first j on a tie: the
    value of :func:`nearest_float64` when the candidates hold every j that can be nearest."""
    values = np.empty(len(rows))
    for s in range(0, len(rows), block):
        diff = x[rows[s : s + block]] - centroids[cols[s : s + block]]
        values[s : s + block] = np.einsum("ij,ij->i", diff, diff)
    order = np.lexsort((cols, values, rows))  # by row, then distance, then index
    first = np.ones(len(order), dtype=bool)
    first[1:] = rows[order[1:]] != rows[order[:-1]]
    return cols[order[first]]


class _Data:
    """The points on the device: float32 rows, their squared norms, int64 fixed-point rows."""

    def __init__(self, x: np.ndarray, device: str) -> None:
        import torch

        self.torch = torch
        self.host = np.ascontiguousarray(x, dtype=np.float32)
        self.host64 = self.host.astype(np.float64)
        self.n, self.d = self.host.shape
        self.x = torch.from_numpy(self.host).to(device)
        self.norms = (self.x * self.x).sum(dim=1)
        self.row_scale = torch.from_numpy(np.sqrt(np.einsum("ij,ij->i", self.host64, self.host64)))
        self.row_scale = self.row_scale.to(device)
        biggest = float(np.abs(self.host64).max()) or 1.0
        # n · max|x| · 2^e < 2^62: no int64 sum can overflow
        self.exp = 61 - int(np.ceil(np.log2(self.n * biggest)))
        self.fixed = torch.round(self.x.double() * 2.0**self.exp).long()

    def centroids(self, labels: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact means of the labelled rows: ``(centroids float64 [k, d], counts [k])``; an
        empty cluster's centroid is 0 (``split_empty`` replaces it)."""
        torch = self.torch
        sums = torch.zeros((k, self.d), dtype=torch.int64, device=self.x.device)
        sums.index_add_(0, labels, self.fixed)
        counts = torch.bincount(labels, minlength=k)
        c = sums.double() / 2.0**self.exp / counts.clamp(min=1).double()[:, None]
        return c.cpu().numpy(), counts.cpu().numpy()

    def assign(self, centroids: np.ndarray) -> Any:
        """Nearest centroid of every row (device labels), near-ties settled in float64 on the
        CPU (first index on an exact float64 tie)."""
        torch = self.torch
        c64 = torch.from_numpy(centroids).to(self.x.device)
        c = c64.float()
        cn = (c * c).sum(dim=1)
        dist = self.norms[:, None] - 2.0 * (self.x @ c.T) + cn[None, :]
        best = dist.min(dim=1)
        labels = best.indices
        if centroids.shape[0] > 1:
            second = torch.topk(dist, 2, dim=1, largest=False).values[:, 1]
            cmax = float(torch.sqrt((c64 * c64).sum(dim=1)).max())
            bound = (self.d + 16) * 2.0**-23 * (self.row_scale + cmax) ** 2
            near = torch.nonzero(second - best.values <= 2.0 * bound).flatten()
            if len(near):
                # the exact nearest is within 2 bounds of the float32 best: recheck only those
                lim = best.values[near] + 2.0 * bound[near]
                ri, cj = torch.nonzero(dist[near] <= lim[:, None], as_tuple=True)
                near = near.cpu().numpy()
                fixed = nearest_among(
                    self.host64[near], centroids, ri.cpu().numpy(), cj.cpu().numpy()
                )
                fixed = torch.from_numpy(fixed).to(labels.device)
                labels = labels.clone()
                labels[torch.from_numpy(near).to(labels.device)] = fixed
        return labels

    def objective(self, labels: Any, centroids: np.ndarray) -> float:
        """Σ ‖x − c_label‖² in float64 on the CPU (fixed order: the same on every device)."""
        lab = labels.cpu().numpy()
        return float(np.sum((self.host64 - centroids[lab]) ** 2))


def kmeans_torch(
    x: np.ndarray,
    k: int,
    *,
    seed: int = 27,
    nredo: int = 5,
    niter: int = 500,
    device: str = "cpu",
) -> np.ndarray:
    """Labels (int64, one per row of ``x``) of faiss-style k-means run in torch on ``device``.

    ``seed`` is faiss' ``seed`` (mauve-text passes its seed + 2). The module docstring states
    the algorithm and why the labels do not depend on the device.
    """
    import torch

    x = np.ascontiguousarray(x, dtype=np.float32)
    n = x.shape[0]
    if not 1 <= k <= n:
        raise GenmetricsError(f"cannot make {k} clusters from {n} points")
    if not np.isfinite(x).all():
        raise GenmetricsError("k-means input contains NaN or inf")
    old_tf32 = torch.backends.cuda.matmul.allow_tf32
    old_precision = torch.get_float32_matmul_precision()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    try:
        train = x
        if n > k * MAX_POINTS_PER_CENTROID:
            train = x[rand_perm_head(n, k * MAX_POINTS_PER_CENTROID, seed)]
        data = _Data(train, device)
        best_obj, best_centroids = np.inf, None
        for redo in range(nredo):
            start = rand_perm_head(data.n, k, seed + 1 + redo * _REDO_STRIDE)
            centroids = data.host64[start].copy()
            previous = None
            for _ in range(niter):
                labels = data.assign(centroids)
                if previous is not None and torch.equal(labels, previous):
                    break  # fixed point: the update would give these centroids again
                centroids, counts = data.centroids(labels, k)
                if (counts == 0).any():
                    split_empty(centroids, counts, data.n)
                previous = labels
            obj = data.objective(data.assign(centroids), centroids)
            if obj < best_obj or best_centroids is None:
                best_obj, best_centroids = obj, centroids
        full = data if train is x else _Data(x, device)
        return full.assign(best_centroids).cpu().numpy().astype(np.int64)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old_tf32
        torch.set_float32_matmul_precision(old_precision)


__all__ = ["kmeans_torch", "nearest_among", "nearest_float64", "rand_perm_head", "split_empty"]
