"""Precision-recall curves of distributions (PRD, Sajjadi et al. 2018) and their F_8 / F_1/8.

P = reference (human) histogram, Q = candidate (model) histogram over shared clusters. For a
slope λ > 0: α(λ) = Σ_b min(λ p_b, q_b) (precision), β(λ) = Σ_b min(p_b, q_b / λ) = α / λ
(recall), clipped to [0, 1]. Summaries: F_β(α, β) = (1 + β²) α β / (β² α + β + 1e-10);
``f8`` = max_λ F_8 (recall-like), ``f1_8`` = max_λ F_{1/8} (precision-like).

Variants (``variant``):

* ``pr4llm`` (default; AlexVerine/pr-4-llm ``compute_mauve.pr_curves``): MAUVE's quantisation
  (L2 + PCA 0.9 on [q; p], faiss k-means with ``auto`` = n/10 clusters, seed + 2), one run,
  λ = tan(θ π / 2000) for θ = 1 … 999; default seed 1235 as pr-4-llm's MAUVE-PR.
* ``sajjadi`` (msmsajjadi/precision-recall-distributions ``prd_score``, = compare_gan):
  raw features (no L2/PCA), ``MiniBatchKMeans(20, n_init=10)`` on [q; p], 1001 angles in
  [1e-10, π/2 − 1e-10], curves averaged over 10 clusterings, ``enforce_balance`` (equal set
  sizes required). Run r uses ``random_state = seed + r`` (the reference is unseeded).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._inputs import check_dims
from genmetrics.metrics._quantize import KMEANS_PARAMS, clustering_metric, quantize, resolve_buckets
from genmetrics.metrics.registry import HIGHER, MetricResult
from genmetrics.params import BOOL, Const, Interval, Options


def f_beta(
    precision: np.ndarray, recall: np.ndarray, beta: float, eps: float = 1e-10
) -> np.ndarray:
    """(1 + β²) P R / (β² P + R + eps), as ``prd_score._prd_to_f_beta``."""
    return (1 + beta**2) * (precision * recall) / ((beta**2 * precision) + recall + eps)


def pr4llm_slopes(n_bins: int = 1000) -> np.ndarray:
    """λ = tan(θ π / 2 / n_bins) for θ = 1 … n_bins − 1 (pr-4-llm ``pr_curves``)."""
    theta = np.arange(1, n_bins)
    return np.tan(theta * np.pi / 2 / n_bins)


def sajjadi_slopes(num_angles: int = 1001, epsilon: float = 1e-10) -> np.ndarray:
    """λ = tan(linspace(ε, π/2 − ε, num_angles)) (``prd_score.compute_prd``)."""
    if not 0 < epsilon < 0.1:
        raise GenmetricsError(f"epsilon must be in (0, 0.1), got {epsilon}")
    if not 3 <= num_angles <= 1e6:
        raise GenmetricsError(f"num_angles must be in [3, 1e6], got {num_angles}")
    return np.tan(np.linspace(epsilon, np.pi / 2 - epsilon, num=int(num_angles)))


def pr_curve(
    p: np.ndarray, q: np.ndarray, slopes: np.ndarray, *, recall_as_ratio: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """α(λ) = Σ min(λ p, q), β(λ) = Σ min(p, q / λ) for each slope, clipped to [0, 1].

    ``p``: reference histogram, ``q``: candidate histogram (each summing to 1).
    ``recall_as_ratio`` computes β as α / λ (``prd_score``) instead of directly (pr-4-llm).
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if p.shape != q.shape or p.ndim != 1:
        raise GenmetricsError("p and q must be 1-D histograms of the same length")
    lam = np.asarray(slopes, dtype=np.float64)[:, None]
    alpha = np.minimum(lam * p[None, :], q[None, :]).sum(axis=1)
    if recall_as_ratio:
        beta = alpha / lam[:, 0]
    else:
        beta = np.minimum(p[None, :], q[None, :] / lam).sum(axis=1)
    return np.clip(alpha, 0, 1), np.clip(beta, 0, 1)


def prd_summary(alpha: np.ndarray, beta: np.ndarray) -> dict[str, float]:
    """max F_8 (recall-like) and max F_{1/8} (precision-like) over the curve."""
    return {
        "f8": float(np.max(f_beta(alpha, beta, 8))),
        "f1_8": float(np.max(f_beta(alpha, beta, 1 / 8))),
    }


def prd_from_histograms(
    p: np.ndarray, q: np.ndarray, *, variant: str = "pr4llm", num_angles: int | None = None
) -> dict[str, Any]:
    """Curve and summaries from reference and candidate histograms (normalised here).

    ``p`` and ``q`` are 1-D, or ``[runs, bins]``: then the curves of the runs are averaged
    before the summaries (prd_score's ``num_runs``). Returns ``f8``, ``f1_8``, the curve
    ``alpha``/``beta`` and its ``slopes``.
    """
    p = np.atleast_2d(np.asarray(p, dtype=np.float64))
    q = np.atleast_2d(np.asarray(q, dtype=np.float64))
    if (p < 0).any() or (q < 0).any() or (p.sum(axis=1) <= 0).any() or (q.sum(axis=1) <= 0).any():
        raise GenmetricsError("histograms must be non-negative with a positive total")
    if p.shape != q.shape:
        raise GenmetricsError("p and q must be histograms of the same length")
    p = p / p.sum(axis=1, keepdims=True)
    q = q / q.sum(axis=1, keepdims=True)
    if variant == "pr4llm":
        slopes = pr4llm_slopes(1000 if num_angles is None else num_angles + 1)
    else:
        slopes = sajjadi_slopes(1001 if num_angles is None else num_angles)
    curves = [
        pr_curve(a, b, slopes, recall_as_ratio=variant == "sajjadi")
        for a, b in zip(p, q, strict=True)
    ]
    alpha = np.mean([a for a, _ in curves], axis=0)
    beta = np.mean([b for _, b in curves], axis=0)
    return {**prd_summary(alpha, beta), "alpha": alpha, "beta": beta, "slopes": slopes}


@clustering_metric(
    "prd",
    values={"f8": HIGHER, "f1_8": HIGHER, "max_precision": HIGHER, "max_recall": HIGHER},
    family="quality/diversity",
    headline=("f8", "f1_8"),  # recall-like and precision-like (Sajjadi et al. 2018)
    scale="0–1",
    figures=("pr_curves",),
    params={
        "variant": (Options("pr4llm", "sajjadi"), "pr-4-llm's MAUVE-PR, or Sajjadi's prd_score"),
        "num_buckets": ((Interval(int, 2, None), Const("auto")), "clusters (auto: the variant's)"),
        "pca": (
            (Interval(float, 0, 1, closed="right"), Const(False), Const("auto")),
            "PCA variance fraction, false, or auto (0.9 for pr4llm, none for sajjadi)",
        ),
        "num_angles": ((Interval(int, 3, 10**6), Const("auto")), "slopes λ of the curve"),
        "num_runs": ((Interval(int, 1, 1000), Const("auto")), "clusterings averaged"),
        "enforce_balance": (BOOL, "sajjadi: refuse sets of unequal size, as prd_score"),
        **KMEANS_PARAMS,
    },
    upstream="pr-4-llm MAUVE-PR; Sajjadi et al. prd_score",
    citation="Sajjadi et al. (2018); Le Bronnec et al. (2024)",
)
def prd(
    *,
    reference: np.ndarray,
    candidate: np.ndarray,
    variant: str = "pr4llm",
    num_buckets: int | str = "auto",
    pca: float | bool | str = "auto",
    seed: int = 1235,
    num_angles: int | str = "auto",
    num_runs: int | str = "auto",
    enforce_balance: bool = True,
    kmeans: str = "auto",
    kmeans_num_redo: int = 5,
    kmeans_max_iter: int = 500,
) -> MetricResult:
    """PRD curve (Sajjadi 2018) of candidate vs reference, summarised by max F_8 and max F_1/8.

    ``variant=pr4llm`` (default): pr-4-llm's MAUVE-PR (MAUVE quantisation, n/10 clusters,
    999 angles λ = tan(θπ/2000)); ``variant=sajjadi``: ``prd_score`` (20 MiniBatchKMeans
    clusters on raw features, 10 runs averaged, 1001 angles, equal sizes enforced).
    ``auto`` parameters take the chosen variant's convention. Values: f8 (recall-like),
    f1_8 (precision-like), and the curve's max α (precision) and max β (recall).
    """
    check_dims(reference, candidate)
    sajjadi = variant == "sajjadi"
    n_p, n_q = len(reference), len(candidate)
    if sajjadi and enforce_balance and n_p != n_q:
        raise GenmetricsError(
            f"variant=sajjadi needs equal set sizes (reference {n_p}, candidate {n_q}); "
            "set enforce_balance=false to allow it (not recommended)"
        )
    if num_buckets == "auto" and sajjadi:
        num_buckets = 20
    k = resolve_buckets(num_buckets, n_p, n_q)
    if pca == "auto":
        pca = None if sajjadi else 0.9
    if num_runs == "auto":
        num_runs = 10 if sajjadi else 1
    p_counts, q_counts, _ = quantize(
        reference,
        candidate,
        k,
        pca=pca,
        normalize=not sajjadi,  # prd_score clusters the raw features unless PCA is asked for
        seed=seed,
        runs=num_runs,
        kmeans="minibatch" if sajjadi else kmeans,
        num_redo=kmeans_num_redo,
        max_iter=kmeans_max_iter,
    )
    out = prd_from_histograms(
        p_counts, q_counts, variant=variant, num_angles=None if num_angles == "auto" else num_angles
    )
    values = {
        "f8": out["f8"],
        "f1_8": out["f1_8"],
        "max_precision": float(out["alpha"].max()),
        "max_recall": float(out["beta"].max()),
    }
    p_hist = p_counts / p_counts.sum(axis=1, keepdims=True)
    q_hist = q_counts / q_counts.sum(axis=1, keepdims=True)
    extras = {
        "alpha": out["alpha"],
        "beta": out["beta"],
        "slopes": out["slopes"],
        "p_hist": p_hist[0] if num_runs == 1 else p_hist,
        "q_hist": q_hist[0] if num_runs == 1 else q_hist,
        "num_buckets": k,
        "variant": variant,
    }
    return MetricResult(values=values, extras=extras, n={"reference": n_p, "candidate": n_q})
