"""Quantisation shared by the distribution metrics: L2 + PCA, k-means, histograms.

Conventions reproduced (read from mauve-text 0.4.0 ``cluster_feats`` and pr-4-llm ``PCA_``):

* stack ``[q; p]`` (**candidate first**), L2-normalise every row
  (``sklearn.preprocessing.normalize``), fit ``PCA(n_components=None, whiten=False,
  random_state=seed + 1)`` on all rows (or on ``pca_max_data`` rows drawn with
  ``RandomState(seed + 5)``), keep the first ``argmax(cumsum(evr) >= pca) + 1`` components,
  cast to float32. Both steps are scikit-learn's arithmetic written here in numpy/scipy
  (:func:`l2_normalize`, :func:`pca_fit`: bit for bit, tested), so scikit-learn's import (a
  few seconds of a process) is not paid; ``solver`` picks the PCA algorithm (``auto`` =
  scikit-learn's choice, what the references ran);
* k-means with faiss exactly as mauve-text calls it (``faiss.Kmeans(d, k, niter=max_iter,
  nredo=num_redo, update_index=True, seed=seed + 2)``, labels from ``index.search``), or
  scikit-learn ``KMeans`` when faiss is missing (values then differ by about 0.005-0.01), or
  ``MiniBatchKMeans(k, n_init=10, random_state=seed)`` (Sajjadi's ``prd_score``), or faiss's
  algorithm in torch on a chosen device (``_kmeans_torch``: device-independent labels);
* histograms are bin counts; the metrics normalise them (``counts / counts.sum()``).

:func:`quantize` is the whole sequence, used by ``mauve`` and ``prd``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._inputs import distribution_metric
from genmetrics.params import Interval, Options

#: the parameters of the k-means step, declared once for the metrics that call :func:`quantize`
#: (``mauve``, ``prd``); their defaults stay in each metric's signature
KMEANS_PARAMS = {
    "seed": (Interval(int, 0, 2**32 - 1), "seed of PCA and k-means"),
    "kmeans": (
        Options("auto", "faiss", "sklearn", "torch"),
        "k-means library (auto: faiss if present; mauve: torch on a GPU)",
    ),
    "kmeans_num_redo": (Interval(int, 1, 2**31 - 1), "k-means restarts"),
    "kmeans_max_iter": (Interval(int, 1, 2**31 - 1), "k-means iterations"),
}


#: PCA solvers of :func:`l2_pca`: ``auto`` is scikit-learn's own choice for ``PCA(n_components=None)``
#: (what mauve-text and pr-4-llm run, bit for bit), the others force one algorithm
PCA_SOLVERS = ("auto", "covariance_eigh", "full")


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (rows of norm < 10 eps left as they are), in the input's
    float dtype (others → float64): ``sklearn.preprocessing.normalize(x, norm="l2")`` bit for
    bit, without importing scikit-learn. Returns a new array."""
    x = np.array(x, dtype=x.dtype if x.dtype.kind == "f" else np.float64, copy=True)
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    norms[norms < 10 * np.finfo(norms.dtype).eps] = 1.0
    x /= norms[:, None]
    return x


def pca_solver_for(n: int, d: int, solver: str = "auto") -> str:
    """The algorithm ``solver`` means on an n × d matrix. ``auto`` is scikit-learn's policy for
    ``PCA(n_components=None)`` (≥ 1.5): the covariance eigendecomposition when d <= 1000 and
    n >= 10 d, else the full SVD."""
    if solver not in PCA_SOLVERS:
        raise GenmetricsError(f"pca solver {solver!r}: expected one of {', '.join(PCA_SOLVERS)}")
    if solver != "auto":
        return solver
    return "covariance_eigh" if d <= 1000 and n >= 10 * d else "full"


def pca_fit(x: np.ndarray, solver: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, components, explained_variance_ratio)`` of ``PCA(n_components=None)`` fitted on
    the rows of ``x`` (float32 stays float32, the rest runs in float64), every component kept.

    The arithmetic is scikit-learn's ``PCA._fit_full`` (1.5+), so the result is bit for bit
    that of ``sklearn.decomposition.PCA(svd_solver=...)`` on the same BLAS threads: ``full`` = LAPACK ``gesdd`` SVD of
    the centred data (``scipy.linalg.svd``), variances S² / (n − 1); ``covariance_eigh`` =
    ``eigh`` of C = (XᵀX − n μμᵀ) / (n − 1) (one d × d matrix: about 10× cheaper than the SVD
    at n = 4000, d = 768; on one BLAS thread where scikit-learn's ``auto`` would not pick it),
    eigenvalues clipped at 0. Components are sign-fixed as
    ``svd_flip(u_based_decision=False)``: the largest-magnitude entry of each is positive.
    """
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    n, d = x.shape
    mean = np.mean(x, axis=0)
    chosen = pca_solver_for(n, d, solver)
    if chosen == "full":
        from scipy import linalg

        _, s, vt = linalg.svd(x - mean, full_matrices=False)
        variance = (s**2) / (n - 1)
    else:
        c = x.T @ x
        c -= n * mean.reshape(-1, 1) * mean.reshape(1, -1)
        c /= n - 1
        if chosen == pca_solver_for(n, d, "auto"):
            eigenvalues, eigenvectors = np.linalg.eigh(c)  # scikit-learn's call, its threads
        else:
            # no scikit-learn run to match: one BLAS thread (the tridiagonalisation gains
            # little from threads and loses seconds when the CPUs are shared; one thread
            # also gives the same bits on any machine)
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1, user_api="blas"):
                eigenvalues, eigenvectors = np.linalg.eigh(c)
        variance = np.flip(eigenvalues, axis=0)
        vt = np.flip(eigenvectors, axis=1).T
        variance[variance < 0.0] = 0.0
    rows = np.arange(vt.shape[0])
    vt *= np.sign(vt[rows, np.argmax(np.abs(vt), axis=1)])[:, None]
    ratio = variance / np.sum(variance)  # over every eigenvalue, then cut (as scikit-learn)
    m = min(n, d)
    # a copy in the memory order LAPACK left (scikit-learn's ``components_``): the order
    # decides which BLAS call the projection makes, hence its last bits
    return mean, np.array(vt[:m], copy=True), ratio[:m]


def l2_pca(
    p: np.ndarray,
    q: np.ndarray,
    explained_variance: float | None = 0.9,
    *,
    seed: int = 0,
    pca_max_data: int = -1,
    solver: str = "auto",
) -> tuple[np.ndarray, np.ndarray]:
    """L2-normalise ``[q; p]`` and project on the leading PCA components (float32).

    Returns ``(p_reduced, q_reduced)``. ``explained_variance`` None, False or 1 means no
    reduction (pr-4-llm skips PCA at 1): only the L2 normalisation and the float32 cast.
    Components kept: the first ``argmax(cumsum(ratio) >= explained_variance) + 1``; the
    projection is ``x @ Vᵀ − μ @ Vᵀ`` over every component, then cut (scikit-learn's
    ``transform``, as mauve-text calls it: cutting V first changes the last bits of float64
    BLAS sums). ``solver`` as :func:`pca_fit`; ``auto`` reproduces mauve-text / pr-4-llm bit
    for bit.
    """
    data = l2_normalize(np.vstack([q, p]))
    if explained_variance not in (None, False) and explained_variance < 1:
        n = data.shape[0]
        if pca_max_data < 0 or pca_max_data >= n:
            fit_rows = data
        else:
            rng = np.random.RandomState(seed + 5)
            fit_rows = data[rng.choice(n, size=pca_max_data, replace=False)]
        if data.dtype not in (np.float32, np.float64):
            data = data.astype(np.float64)
        mean, components, ratio = pca_fit(fit_rows, solver)
        idx = int(np.argmax(np.cumsum(ratio) >= explained_variance))
        projected = data @ components.T
        projected -= mean.reshape(1, -1) @ components.T
        data = projected[:, : idx + 1]
    data = data.astype(np.float32)
    return data[len(q) :], data[: len(q)]


def faiss_available() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def prefer_faiss(choice: str, fallback: str, param: str) -> str:
    """``auto`` → faiss when installed, else ``fallback``; an explicit ``faiss`` must be
    installed (the error names ``param``); any other choice is returned as it is."""
    if choice == "auto":
        return "faiss" if faiss_available() else fallback
    if choice == "faiss" and not faiss_available():
        raise GenmetricsError(f"{param}='faiss' but faiss is not installed (pip install faiss-cpu)")
    return choice


def resolve_kmeans(backend: str) -> str:
    """``auto`` → faiss when installed, else sklearn; ``faiss`` must be installed."""
    return prefer_faiss(backend, "sklearn", "kmeans")


#: faiss ``Clustering``: restart r draws its initial centroids with seed + 1 + r × this
FAISS_REDO_STRIDE = 15486557


def faiss_kmeans_labels(
    data: np.ndarray, k: int, seed: int, nredo: int, niter: int, *, workers: int | None = None
) -> np.ndarray:
    """Labels of ``faiss.Kmeans(d, k, niter, nredo, seed, update_index=True)`` then
    ``index.search(data, 1)`` (mauve-text's call), bit for bit, run faster.

    faiss' restarts are independent: restart r starts from ``rand_perm(seed + 1 + 15486557
    r)`` and the one of lowest final objective (float32, strict <, the first on a tie) is
    kept. Here each restart is its own ``Clustering(nredo=1, seed=seed + 15486557 r)`` on ONE
    thread (OpenMP and BLAS), and the restarts run side by side on ``workers`` threads (the
    process' CPUs; faiss releases the GIL), with identical centroids and labels
    (tests/test_kmeans_torch.py). faiss' own threads synchronise at every step, which costs
    where another process shares the cores, as in a workflow running jobs side by side:
    with one of 2 cores busy, 4000-8000 rows took faiss 0.41-1.67 s and this 0.23-0.97 s
    (1.7-2.6× faster; ``benchmarks/bench_kmeans_threads.py``). On idle cores faiss' threads
    win: 0.9× on 2 cores, 0.4-0.5× on 16 (20,000 rows: 6.3 s against 13.0 s). Those runs
    go to the GPU path (``kmeans_torch``) where a GPU is present.
    Falls back to the plain call where the restarts are not separable that way: when faiss
    subsamples (n > 256 k: the subsample uses ``seed``) or a seed overflows faiss' int.
    """
    import faiss
    from threadpoolctl import threadpool_limits

    n, d = data.shape
    seeds = [seed + r * FAISS_REDO_STRIDE for r in range(nredo)]
    separable = n <= k * 256 and max(seeds) < 2**31 and seed >= 0

    def params(nredo_: int, seed_: int) -> Any:
        cp = faiss.ClusteringParameters()
        cp.niter, cp.nredo, cp.seed = niter, nredo_, seed_
        cp.update_index, cp.verbose = True, False
        cp.min_points_per_centroid = 1  # only silences faiss' "please provide at least" warning
        return cp

    def one(seed_: int) -> tuple[float, np.ndarray]:
        faiss.omp_set_num_threads(1)  # this thread's OpenMP setting
        clus = faiss.Clustering(d, k, params(1, seed_))
        clus.train(data, faiss.IndexFlatL2(d))
        stats = clus.iteration_stats
        obj = np.float32(stats.at(stats.size() - 1).obj) if stats.size() else np.float32(0)
        return float(obj), faiss.vector_float_to_array(clus.centroids).reshape(k, d)

    if separable:
        from concurrent.futures import ThreadPoolExecutor

        from genmetrics.devices import available_cpus

        workers = min(nredo, workers or available_cpus())
        with threadpool_limits(limits=1), ThreadPoolExecutor(max_workers=workers) as pool:
            runs = list(pool.map(one, seeds))
        best_obj, centroids = runs[0]
        for obj, c in runs[1:]:
            if np.float32(obj) < np.float32(best_obj):
                best_obj, centroids = obj, c
        index = faiss.IndexFlatL2(d)
        index.add(np.ascontiguousarray(centroids))
    else:
        clus = faiss.Clustering(d, k, params(nredo, seed))
        index = faiss.IndexFlatL2(d)
        clus.train(data, index)
    _, labels = index.search(data, 1)
    return labels.reshape(-1).astype(np.int64)


def kmeans_labels(
    data: np.ndarray,
    num_clusters: int,
    *,
    seed: int = 25,
    num_redo: int = 5,
    max_iter: int = 500,
    backend: str = "auto",
    device: str = "cpu",
) -> np.ndarray:
    """Cluster the rows of ``data`` and return one label per row.

    faiss: ``faiss.Kmeans(d, k, niter=max_iter, nredo=num_redo, update_index=True,
    seed=seed + 2)`` then ``index.search(data, 1)`` (mauve-text 0.4.0, bit for bit; the
    restarts side by side on one thread each, :func:`faiss_kmeans_labels`).
    sklearn: ``KMeans(k, n_init=num_redo, max_iter=max_iter, random_state=seed + 2)``.
    minibatch: ``MiniBatchKMeans(k, n_init=10, random_state=seed)`` (prd_score, unseeded there).
    torch: :func:`genmetrics.metrics._kmeans_torch.kmeans_torch` on ``device`` (faiss's
    algorithm and seeds, the same labels on every device; not faiss bit for bit).
    """
    n = data.shape[0]
    if num_clusters > n:
        raise GenmetricsError(f"cannot make {num_clusters} clusters from {n} points")
    backend = resolve_kmeans(backend)
    if backend == "minibatch":
        from sklearn.cluster import MiniBatchKMeans

        km = MiniBatchKMeans(n_clusters=num_clusters, n_init=10, random_state=seed)
        return km.fit(data).labels_.astype(np.int64)
    data = np.ascontiguousarray(data, dtype=np.float32)
    if backend == "torch":
        from genmetrics.metrics._kmeans_torch import kmeans_torch

        return kmeans_torch(
            data, num_clusters, seed=seed + 2, nredo=num_redo, niter=max_iter, device=device
        )
    if backend == "faiss":
        return faiss_kmeans_labels(data, num_clusters, seed + 2, num_redo, max_iter)
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=num_clusters, n_init=num_redo, max_iter=max_iter, random_state=seed + 2)
    return km.fit_predict(data).astype(np.int64)


def counts(labels: np.ndarray, num_clusters: int) -> np.ndarray:
    """Bin counts of integer labels in ``[0, num_clusters)`` (= ``np.histogram`` with unit bins)."""
    return np.bincount(labels, minlength=num_clusters)[:num_clusters]


def quantize(
    p: np.ndarray,
    q: np.ndarray,
    num_clusters: int,
    *,
    pca: float | None = 0.9,
    normalize: bool = True,
    seed: int = 25,
    runs: int = 1,
    kmeans: str = "auto",
    num_redo: int = 5,
    max_iter: int = 500,
    pca_max_data: int = -1,
    pca_solver: str = "auto",
    device: str = "cpu",
) -> tuple[np.ndarray, np.ndarray, int]:
    """MAUVE's quantisation: L2 + PCA on ``[q; p]``, k-means, bin counts of each set.

    Returns ``(p_counts, q_counts, dims)``: counts of shape ``[runs, num_clusters]`` (run r
    clusters the same reduced data with seed ``seed + r``) and the number of dimensions that
    were clustered. ``normalize=False`` with ``pca=None`` clusters the raw features in float64
    (prd_score); otherwise rows are L2-normalised, reduced by PCA (``pca`` = explained variance,
    None/False/1 = none, ``pca_solver`` as :func:`pca_fit`) and cast to float32.
    """
    if normalize or (pca not in (None, False) and pca < 1):
        p_red, q_red = l2_pca(p, q, pca, seed=seed, pca_max_data=pca_max_data, solver=pca_solver)
        data = np.vstack([q_red, p_red])
    else:
        data = np.vstack([q, p]).astype(np.float64)
    pc, qc = [], []
    for r in range(runs):
        labels = kmeans_labels(
            data,
            num_clusters,
            seed=seed + r,
            num_redo=num_redo,
            max_iter=max_iter,
            backend=kmeans,
            device=device,
        )
        qc.append(counts(labels[: len(q)], num_clusters))
        pc.append(counts(labels[len(q) :], num_clusters))
    return np.asarray(pc), np.asarray(qc), int(data.shape[1])


def _buckets_min_items(params: dict) -> tuple[int, str]:
    """The ``min_items`` of a metric that clusters ``[q; p]``: ``num_buckets`` clusters need at
    least that many points over the two sets, so half of it per set (sets of equal size), and
    never fewer than 2 per set (one text is no distribution: with one text a side, two
    clusters only separate the two sets); ``auto`` asks n/10 clusters (at least 2), and 20
    for ``prd``'s ``variant=sajjadi``."""
    buckets = params.get("num_buckets", "auto")
    if buckets == "auto":
        buckets = 20 if params.get("variant") == "sajjadi" else 2
    return max(2, -(-buckets // 2)), "num_buckets"


#: how a metric on k-means histograms of ``[q; p]`` registers (``mauve``, ``prd``): a
#: distribution metric whose cluster count sets the fewest texts it can score
clustering_metric = partial(distribution_metric, min_items=_buckets_min_items)


def resolve_buckets(num_buckets: int | str, n_p: int, n_q: int) -> int:
    """``auto`` = mauve-text's ``max(2, int(round(min(n_p, n_q) / 10)))``; a number must not
    exceed the number of points."""
    if num_buckets == "auto":
        return max(2, int(round(min(n_p, n_q) / 10)))
    if num_buckets > n_p + n_q:
        raise GenmetricsError(
            f"num_buckets={num_buckets} exceeds the number of points ({n_p + n_q})"
        )
    return num_buckets


__all__ = [
    "PCA_SOLVERS",
    "counts",
    "faiss_available",
    "kmeans_labels",
    "l2_normalize",
    "l2_pca",
    "pca_fit",
    "quantize",
    "resolve_buckets",
    "resolve_kmeans",
]
