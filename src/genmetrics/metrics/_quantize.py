"""Shared preprocessing for the distribution metrics: L2 + PCA, k-means quantisation, histograms.

Conventions reproduced (read from mauve-text 0.4.0 ``cluster_feats`` and pr-4-llm ``PCA_``):

* stack ``[q; p]`` (**candidate first**), L2-normalise every row
  (``sklearn.preprocessing.normalize``), fit ``PCA(n_components=None, whiten=False,
  random_state=seed + 1)`` on all rows (or on ``pca_max_data`` rows drawn with
  ``RandomState(seed + 5)``), keep the first ``argmax(cumsum(evr) >= pca) + 1`` components,
  cast to float32;
* k-means with faiss exactly as mauve-text calls it (``faiss.Kmeans(d, k, niter=max_iter,
  nredo=num_redo, update_index=True, seed=seed + 2)``, labels from ``index.search``), or
  scikit-learn ``KMeans`` when faiss is missing (values then differ by about 0.005-0.01);
* histograms ``counts / counts.sum()`` (and Krichevsky-Trofimov ``(counts + 0.5) / sum`` for
  MAUVE*).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from genmetrics import GenmetricsError

KMEANS_BACKENDS = ("auto", "faiss", "sklearn")


def check_features(x: Any, what: str, *, min_rows: int = 1) -> np.ndarray:
    """Cheap validation for direct calls: 2-D, numeric, finite, at least ``min_rows`` rows."""
    a = np.asarray(x)
    if a.ndim != 2:
        raise GenmetricsError(f"{what}: features must be 2-D [N, d], got shape {a.shape}")
    if a.shape[1] == 0:
        raise GenmetricsError(f"{what}: features have 0 dimensions")
    if a.shape[0] < min_rows:
        raise GenmetricsError(f"{what}: need at least {min_rows} row(s), got {a.shape[0]}")
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise GenmetricsError(f"{what}: features must be numeric, got {a.dtype}")
    if np.issubdtype(a.dtype, np.floating) and not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a).all(axis=1))
        raise GenmetricsError(
            f"{what}: {bad.size} row(s) with NaN/inf, first rows {bad[:5].tolist()}"
        )
    return a


def check_pair(reference: Any, candidate: Any, *, min_rows: int = 1) -> tuple[np.ndarray, ...]:
    """Validate both sets and check that their dimensions match."""
    p = check_features(reference, "reference", min_rows=min_rows)
    q = check_features(candidate, "candidate", min_rows=min_rows)
    if p.shape[1] != q.shape[1]:
        raise GenmetricsError(
            f"reference has {p.shape[1]} dimensions but candidate has {q.shape[1]}; "
            "both must come from the same featurizer"
        )
    return p, q


def parse_pca(pca: Any) -> float | None:
    """``pca`` parameter → explained-variance fraction in (0, 1), or None for 'no PCA'.

    ``False``/``None``/``"false"``/``"none"``/``"off"`` and ``1``/``1.0`` mean no reduction
    (pr-4-llm skips PCA when the explained variance is 1).
    """
    if pca is None or pca is False:
        return None
    if isinstance(pca, str):
        s = pca.strip().lower()
        if s in ("false", "none", "off", "no", "0"):
            return None
        try:
            pca = float(s)
        except ValueError:
            raise GenmetricsError(
                f"pca must be a fraction in (0, 1] or false, got {pca!r}"
            ) from None
    if pca is True:
        return 0.9
    try:
        v = float(pca)
    except (TypeError, ValueError):
        raise GenmetricsError(f"pca must be a fraction in (0, 1] or false, got {pca!r}") from None
    if not 0.0 < v <= 1.0:
        raise GenmetricsError(f"pca must be a fraction in (0, 1] or false, got {pca!r}")
    return None if v == 1.0 else v


def l2_pca(
    p: np.ndarray,
    q: np.ndarray,
    explained_variance: float | None = 0.9,
    *,
    seed: int = 0,
    pca_max_data: int = -1,
    normalize_rows: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """L2-normalise ``[q; p]`` and project on the leading PCA components (float32).

    Returns ``(p_reduced, q_reduced)``. With ``explained_variance=None`` only the L2
    normalisation (if ``normalize_rows``) and the float32 cast are applied.
    """
    from sklearn.preprocessing import normalize

    data = np.vstack([q, p])
    if normalize_rows:
        data = normalize(data, norm="l2", axis=1)
    if explained_variance is not None:
        from sklearn.decomposition import PCA

        pca = PCA(n_components=None, whiten=False, random_state=seed + 1)
        n = data.shape[0]
        if pca_max_data is None or pca_max_data < 0 or pca_max_data >= n:
            pca.fit(data)
        elif pca_max_data > 0:
            rng = np.random.RandomState(seed + 5)
            pca.fit(data[rng.choice(n, size=pca_max_data, replace=False)])
        else:
            raise GenmetricsError(f"pca_max_data={pca_max_data} is invalid with {n} rows")
        s = np.cumsum(pca.explained_variance_ratio_)
        idx = int(np.argmax(s >= explained_variance))
        data = pca.transform(data)[:, : idx + 1]
    data = data.astype(np.float32)
    return data[len(q) :], data[: len(q)]


def faiss_available() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_kmeans(backend: str) -> str:
    backend = str(backend).lower()
    if backend not in KMEANS_BACKENDS:
        raise GenmetricsError(f"kmeans must be one of {KMEANS_BACKENDS}, got {backend!r}")
    if backend == "auto":
        return "faiss" if faiss_available() else "sklearn"
    if backend == "faiss" and not faiss_available():
        raise GenmetricsError("kmeans='faiss' but faiss is not installed (pip install faiss-cpu)")
    return backend


def kmeans_labels(
    data: np.ndarray,
    num_clusters: int,
    *,
    seed: int = 25,
    num_redo: int = 5,
    max_iter: int = 500,
    backend: str = "auto",
) -> np.ndarray:
    """Cluster the float32 rows of ``data`` and return one label per row.

    faiss: ``faiss.Kmeans(d, k, niter=max_iter, nredo=num_redo, update_index=True,
    seed=seed + 2)`` then ``index.search(data, 1)`` (mauve-text 0.4.0, bit for bit).
    sklearn: ``KMeans(k, n_init=num_redo, max_iter=max_iter, random_state=seed + 2)``.
    """
    n = data.shape[0]
    if not isinstance(num_clusters, (int, np.integer)) or num_clusters < 1:
        raise GenmetricsError(f"number of clusters must be a positive integer, got {num_clusters}")
    if num_clusters > n:
        raise GenmetricsError(f"cannot make {num_clusters} clusters from {n} points")
    backend = resolve_kmeans(backend)
    data = np.ascontiguousarray(data, dtype=np.float32)
    if backend == "faiss":
        import faiss

        km = faiss.Kmeans(
            data.shape[1],
            int(num_clusters),
            niter=int(max_iter),
            verbose=False,
            nredo=int(num_redo),
            update_index=True,
            seed=int(seed) + 2,
            # only silences faiss' "please provide at least ..." warning (no effect on the result)
            min_points_per_centroid=1,
        )
        km.train(data)
        _, labels = km.index.search(data, 1)
        return labels.reshape(-1).astype(np.int64)
    from sklearn.cluster import KMeans

    km = KMeans(
        n_clusters=int(num_clusters),
        n_init=int(num_redo),
        max_iter=int(max_iter),
        random_state=int(seed) + 2,
    )
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
    seed: int = 25,
    num_redo: int = 5,
    max_iter: int = 500,
    backend: str = "auto",
    pca_max_data: int = -1,
) -> tuple[np.ndarray, np.ndarray]:
    """MAUVE's quantisation: L2 + PCA on ``[q; p]``, k-means, return ``(p_counts, q_counts)``."""
    p_red, q_red = l2_pca(p, q, pca, seed=seed, pca_max_data=pca_max_data)
    labels = kmeans_labels(
        np.vstack([q_red, p_red]),
        num_clusters,
        seed=seed,
        num_redo=num_redo,
        max_iter=max_iter,
        backend=backend,
    )
    return counts(labels[len(q) :], num_clusters), counts(labels[: len(q)], num_clusters)


def auto_buckets(n_p: int, n_q: int) -> int:
    """mauve-text's ``num_buckets='auto'``: ``max(2, int(round(min(n_p, n_q) / 10)))``."""
    return max(2, int(round(min(n_p, n_q) / 10)))


def resolve_buckets(num_buckets: Any, n_p: int, n_q: int) -> int:
    if num_buckets is None or (isinstance(num_buckets, str) and num_buckets.lower() == "auto"):
        return auto_buckets(n_p, n_q)
    try:
        k = int(num_buckets)
    except (TypeError, ValueError):
        raise GenmetricsError(
            f"num_buckets must be 'auto' or an integer, got {num_buckets!r}"
        ) from None
    if k != num_buckets and not isinstance(num_buckets, str):
        raise GenmetricsError(f"num_buckets must be an integer, got {num_buckets!r}")
    if k < 2:
        raise GenmetricsError(f"num_buckets must be >= 2, got {k}")
    if k > n_p + n_q:
        raise GenmetricsError(f"num_buckets={k} exceeds the number of points ({n_p + n_q})")
    return k
