"""Similarity kernels on a set of items and their spectra: the shared engine of the
kernel-based diversity scores (``vendi``, ``ngram_vendi``, ``rke``, ``embedding_diversity``).

* :func:`unit_rows`: rows scaled to unit L2 norm, so that ``u_i · u_j`` is the cosine.
* :func:`gram_eigenvalues`: the nonzero eigenvalues of ``K / n`` for ``K = Φ Φᵀ`` (n rows of
  features Φ, dense or sparse), from the smaller of the n × n kernel and the d × d matrix
  ``Φᵀ Φ / n`` (the **dual form**: both have the same nonzero eigenvalues). Memory
  O(n·d + min(n, d)²).
* :func:`renyi_entropy`: the Rényi entropy of order q of a probability vector (nats).
* :func:`row_blocks`: row ranges whose block × n products stay near 32 MiB, so a pairwise
  statistic over all n² pairs needs O(n·d + block·n) memory, never an n × n matrix.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from genmetrics import GenmetricsError

#: float64 elements of one block of a pairwise computation (32 MiB)
BLOCK_ELEMENTS = 1 << 22
#: the orders of a Rényi entropy that name no number (q = ∞: the min-entropy)
INF = "inf"


def unit_rows(x: Any, what: str = "candidate") -> np.ndarray:
    """Rows of ``x`` as float64 unit vectors. A row of zeros has no direction, so no cosine:
    an error naming the first such rows."""
    a = np.asarray(x, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", a, a))
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise GenmetricsError(
            f"{what}: {zero.size} row(s) of zeros have no cosine similarity, first rows "
            f"{zero[:5].tolist()}"
        )
    return a / norms[:, None]


def gram_eigenvalues(phi: Any) -> tuple[np.ndarray, str]:
    """Nonzero eigenvalues of ``Φ Φᵀ / n`` (descending) and the form used (``dual`` or
    ``kernel``).

    With d < n the d × d matrix ``Φᵀ Φ / n`` is decomposed (the dual form; same nonzero
    eigenvalues), else the n × n kernel. Eigenvalues at or below the numerical rank
    tolerance ``max(shape) · eps · λ_max`` (numpy's ``matrix_rank``) are rounding noise of
    zero eigenvalues and are dropped, so the two forms agree for every order q.
    """
    n, d = phi.shape
    if d < n:
        m, form = phi.T @ phi, "dual"
    else:
        m, form = phi @ phi.T, "kernel"
    import scipy.sparse  # here, not at import: loading every metric module stays light

    m = m.toarray() if scipy.sparse.issparse(m) else np.asarray(m, dtype=np.float64)
    return _nonzero_spectrum(m / n), form


def kernel_eigenvalues(k: Any) -> np.ndarray:
    """Nonzero eigenvalues of ``K / n`` for a given n × n symmetric kernel matrix, with the
    tolerance of :func:`gram_eigenvalues` (descending)."""
    k = np.asarray(k, dtype=np.float64)
    return _nonzero_spectrum(k / len(k))


def _nonzero_spectrum(m: np.ndarray) -> np.ndarray:
    import scipy.linalg  # here, not at import (about 0.2-0.8 s of every process otherwise)

    w = scipy.linalg.eigvalsh(m)[::-1]
    tol = max(m.shape) * np.finfo(np.float64).eps * max(float(w[0]), 0.0)
    return w[w > tol]


def order(q: float | str) -> float:
    """An order as a number: ``"inf"`` → ∞."""
    return math.inf if q == INF else float(q)


def renyi_entropy(p: np.ndarray, q: float | str) -> float:
    """H_q(p) = log(Σ p_i^q) / (1 − q) in nats; q = 1: the Shannon entropy −Σ p_i log p_i;
    q = ∞: −log max p_i. Zeros of ``p`` are left out (0 log 0 = 0)."""
    p = np.asarray(p, dtype=np.float64)
    p = p[p > 0]
    r = order(q)
    if r == 1.0:
        return float(-(p * np.log(p)).sum())
    if math.isinf(r):
        return float(-np.log(p.max()))
    return float(np.log((p**r).sum()) / (1.0 - r))


def row_blocks(n: int) -> Iterator[slice]:
    """Consecutive row ranges of about :data:`BLOCK_ELEMENTS` / n rows each."""
    step = max(1, BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, n, step):
        yield slice(start, min(start + step, n))
