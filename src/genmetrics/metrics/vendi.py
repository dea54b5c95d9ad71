"""The Vendi Score (Friedman & Dieng 2023) and its orders q (Pasarkar & Dieng 2024).

For n items and a similarity kernel K with K_ii = 1 (positive semi-definite), let
λ_1..λ_n be the eigenvalues of K / n (non-negative, summing to tr(K)/n = 1). Then

    VS_q = exp(H_q(λ)),  H_q(λ) = log(Σ_i λ_i^q) / (1 − q),

with H_1 = −Σ λ_i log λ_i (Shannon) and H_∞ = −log max λ_i. VS is an effective number of
distinct items: 1 when all are identical, n when all are orthogonal. Small q weighs rare
directions, large q the dominant ones; VS_q never increases with q. The sum Σ λ_i^q is taken
in log space (:func:`vendi_of_eigenvalues`), so a large finite q (1000) gives a number between
VS_∞ and VS_2, not an overflow to ∞.

Two kernels, one metric each (a metric reads one input kind):

* ``vendi`` (embeddings): the cosine kernel K = U Uᵀ on the rows scaled to unit norm. With
  d < n the eigenvalues come from the d × d matrix Uᵀ U / n (the **dual form**: same nonzero
  eigenvalues), else from K / n. Memory O(n·d + min(n, d)²).
* ``ngram_vendi`` (texts): the kernel of vendi-score's ``text_utils.ngram_vendi_score``:
  the mean over n = 1..num_n of the cosine of n-gram count vectors. Tokens are
  ``text.split()`` (the package's default tokenizer is NLTK's ``word_tokenize``; pass it
  ``tokenizer=str.split`` to compare), case kept (``lowercase=False``, as the package).
  Memory O(tokens + min(n, D)²), D = number of distinct n-grams.

Against the reference package (``vendi-score`` 0.0.3, vertaix/Vendi-Score):

* ``score_K(K, q)`` and ``score_dual(X, q)`` honour q and equal ours (eigenvalues below the
  numerical rank tolerance, ``max(shape) · eps · λ_max``, are dropped here; the package keeps
  positive rounding noise, which moves q < 1 by about 1e-8 relatively).
* ``score_X(X, q)`` **ignores q**: it calls ``score_K(K, q=1)``, so it returns VS_1 for every
  q (and ``embedding_vendi_score`` uses it whenever n < d). Ours honours q in both forms.
* ``q="inf"`` is the package's spelling of q = ∞, and ours.
* ``ngram_vendi_score`` is VS_1 of the n-gram kernel and equals ours when every text has at
  least num_n tokens. A text with no n-gram of some order n (shorter than n tokens, or
  empty) has a zero count vector there: the package's kernel then has K_ii < 1 and its
  eigenvalues no longer sum to 1. Here such a text is represented at that order by its whole
  token sequence as one n-gram, so K_ii = 1 always: two identical short texts are identical,
  a short text is orthogonal to every different one at that order, and empty texts are
  identical to each other.

Deterministic (no randomness); LAPACK's ``syevd`` via ``scipy.linalg.eigvalsh``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from genmetrics.metrics._kernels import (
    INF,
    gram_eigenvalues,
    kernel_eigenvalues,
    order,
    renyi_entropy,
    unit_rows,
)
from genmetrics.metrics._ngrams import doc_gram_counts, doc_ngrams
from genmetrics.metrics.registry import HIGHER, MetricResult, register
from genmetrics.params import Interval, Options

if TYPE_CHECKING:
    import scipy.sparse

__all__ = ["ngram_features", "ngram_vendi", "score_kernel", "vendi", "vendi_of_eigenvalues"]

#: the order q: any q > 0, or "inf" (the package's spelling of q = ∞)
Q_PARAM = (
    (Interval(float, 0, None, closed="neither"), Options(INF)),
    "order q of the Rényi entropy (1: Shannon, the paper's VS; inf: −log of the top eigenvalue)",
)


def vendi_of_eigenvalues(eigenvalues: np.ndarray, q: float | str = 1.0) -> float:
    """exp(H_q) of the eigenvalues λ of K / n (a probability vector when K_ii = 1).

    For q ≠ 1, ∞ the sum is taken in log space, log Σ λ_i^q = q·log λ_max +
    log Σ exp(q·(log λ_i − log λ_max)), so a large finite q stays finite: λ^q underflows to 0
    from q ≈ 250 at λ_max = 0.06 (VS_∞ ≈ 16), where the plain sum gave log 0 and VS = ∞.
    q = 1 (Shannon) and q = ∞ (−log λ_max) are :func:`~genmetrics.metrics._kernels.renyi_entropy`.
    """
    r = order(q)
    if r == 1.0 or math.isinf(r):
        return math.exp(renyi_entropy(eigenvalues, q))
    lam = np.asarray(eigenvalues, dtype=np.float64)
    log_lam = np.log(lam[lam > 0])
    top = float(log_lam.max())
    log_sum = r * top + math.log(float(np.exp(r * (log_lam - top)).sum()))
    return math.exp(log_sum / (1.0 - r))


def score_kernel(k: Any, q: float | str = 1.0) -> float:
    """VS_q of a given n × n kernel matrix with K_ii = 1 (the package's ``score_K``)."""
    return vendi_of_eigenvalues(kernel_eigenvalues(k), q)


def _result(phi: Any, q: float | str, extra: dict[str, int] | None = None) -> MetricResult:
    w, form = gram_eigenvalues(phi)
    return MetricResult(
        values={"vendi": vendi_of_eigenvalues(w, q)},
        extras={"form": form, "rank": int(w.size)},
        n={"candidate": int(phi.shape[0]), **(extra or {})},
    )


@register(
    "vendi",
    input="embeddings",
    values={"vendi": HIGHER},
    params={"q": Q_PARAM},
    family="diversity",
    scale="≥ 1",  # 1 (all items the same) to n (all orthogonal)
    upstream="vendi-score 0.0.3 score_dual / score_K (score_X ignores q)",
    citation="Friedman & Dieng (2023)",
)
def vendi(candidate: np.ndarray, *, q: float | str = 1.0) -> MetricResult:
    """Vendi Score exp(H_q(eig(K / n))) of the embeddings with the cosine kernel
    K_ij = u_i · u_j (rows scaled to unit norm; a zero row is an error); the dual form
    eig(Uᵀ U / n) when d < n. Equals vendi-score's ``score_dual(X, q)`` and ``score_K(K, q)``;
    its ``score_X`` returns the q = 1 value for every q. Memory O(n·d + min(n, d)²)."""
    return _result(unit_rows(candidate, "candidate"), q)


def ngram_features(texts: Sequence[str], num_n: int) -> scipy.sparse.csr_matrix:
    """Φ with Φ Φᵀ = the n-gram kernel: per order n = 1..num_n the L2-normalised n-gram
    count vectors of ``text.split()`` (a text with no n-gram of that order: one column for its
    whole token sequence), side by side and scaled by 1/√num_n (so K = mean_n K_n)."""
    import scipy.sparse  # here, not at import: loading every metric module stays light

    docs = [t.split() for t in texts]
    grams = doc_ngrams(docs, num_n)
    blocks = []
    for n in range(1, num_n + 1):
        d, gid = grams[n]
        doc, col, cnt = doc_gram_counts(d, gid)
        val = cnt.astype(np.float64)
        width = int(gid.max()) + 1 if len(gid) else 0
        norm = np.sqrt(np.bincount(doc, weights=val**2, minlength=len(docs)))
        short = np.flatnonzero(norm == 0)  # no n-gram of this order: its token sequence is one
        keys: dict[tuple[str, ...], int] = {}
        short_col = [width + keys.setdefault(tuple(docs[i]), len(keys)) for i in short]
        norm[short] = 1.0
        rows = np.concatenate([doc, short]).astype(np.int64)
        cols = np.concatenate([col, np.asarray(short_col, dtype=np.int64)])
        data = np.concatenate([val / norm[doc], np.ones(len(short))])
        shape = (len(docs), width + len(keys))
        blocks.append(scipy.sparse.csr_matrix((data, (rows, cols)), shape=shape))
    return scipy.sparse.hstack(blocks, format="csr") / math.sqrt(num_n)


@register(
    "ngram_vendi",
    input="texts",
    values={"vendi": HIGHER},
    params={
        "num_n": (Interval(int, 1, None), "the kernel is the mean over n = 1..num_n"),
        "q": Q_PARAM,
    },
    family="diversity",
    scale="≥ 1",
    upstream="vendi-score 0.0.3 ngram_vendi_score (tokenizer=str.split)",
    citation="Friedman & Dieng (2023)",
)
def ngram_vendi(candidate: list[str], *, num_n: int = 4, q: float | str = 1.0) -> MetricResult:
    """Vendi Score exp(H_q(eig(K / n))) of the texts with the n-gram kernel
    K = mean_{n=1..num_n} cos(n-gram counts) on ``text.split()`` tokens, as vendi-score's
    ``ngram_vendi_score`` (ns = 1..4, q = 1 there); a text without an n-gram of some order is
    its whole token sequence at that order (K_ii = 1; the package gives it a zero vector).
    Memory O(tokens + min(n, D)²), D distinct n-grams."""
    return _result(ngram_features(candidate, num_n), q)
