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
from genmetrics.metrics._quantize import (
    check_pair,
    counts,
    kmeans_labels,
    l2_pca,
    parse_pca,
    resolve_buckets,
)
from genmetrics.metrics.registry import MetricResult, register

VARIANTS = ("pr4llm", "sajjadi")


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
    """Curve and summaries from two histograms (normalised here)."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if p.sum() <= 0 or q.sum() <= 0 or (p < 0).any() or (q < 0).any():
        raise GenmetricsError("histograms must be non-negative with a positive total")
    p, q = p / p.sum(), q / q.sum()
    slopes = _slopes(variant, num_angles)
    alpha, beta = pr_curve(p, q, slopes, recall_as_ratio=variant == "sajjadi")
    return {**prd_summary(alpha, beta), "alpha": alpha, "beta": beta, "slopes": slopes}


def _slopes(variant: str, num_angles: int | None) -> np.ndarray:
    if variant == "pr4llm":
        return pr4llm_slopes(1000 if num_angles is None else int(num_angles) + 1)
    return sajjadi_slopes(1001 if num_angles is None else int(num_angles))


@register(
    "prd",
    input="embeddings",
    reference="required",
    values=("f8", "f1_8", "max_precision", "max_recall"),
    params={
        "variant": "pr4llm",
        "num_buckets": "auto",
        "pca": "auto",
        "seed": 1235,
        "num_angles": "auto",
        "num_runs": "auto",
        "enforce_balance": True,
        "kmeans": "auto",
        "kmeans_num_redo": 5,
        "kmeans_max_iter": 500,
    },
)
def prd(
    *,
    reference: Any,
    candidate: Any,
    variant: str = "pr4llm",
    num_buckets: Any = "auto",
    pca: Any = "auto",
    seed: int = 1235,
    num_angles: Any = "auto",
    num_runs: Any = "auto",
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
    variant = str(variant).lower().replace("-", "").replace("_", "")
    if variant not in VARIANTS:
        raise GenmetricsError(f"variant must be one of {VARIANTS}, got {variant!r}")
    p, q = check_pair(reference, candidate)
    sajjadi = variant == "sajjadi"
    if sajjadi and _as_bool(enforce_balance) and len(p) != len(q):
        raise GenmetricsError(
            f"variant=sajjadi needs equal set sizes (reference {len(p)}, candidate {len(q)}); "
            "set enforce_balance=false to allow it (not recommended)"
        )
    if _is_auto(num_buckets):
        k = 20 if sajjadi else resolve_buckets("auto", len(p), len(q))
    else:
        k = resolve_buckets(num_buckets, len(p), len(q))
    if _is_auto(pca):
        var = None if sajjadi else 0.9
    else:
        var = parse_pca(pca)
    runs = (10 if sajjadi else 1) if _is_auto(num_runs) else int(num_runs)
    if runs < 1:
        raise GenmetricsError(f"num_runs must be >= 1, got {num_runs!r}")
    angles = None if _is_auto(num_angles) else int(num_angles)
    slopes = _slopes(variant, angles)
    seed = int(seed)

    if sajjadi:
        # prd_score clusters the raw features (float64); optional PCA only if asked for.
        if var is None:
            data = np.vstack([q, p]).astype(np.float64)
        else:
            pr_, qr_ = l2_pca(p, q, var, seed=seed)
            data = np.vstack([qr_, pr_])
    else:
        pr_, qr_ = l2_pca(p, q, var, seed=seed)
        data = np.vstack([qr_, pr_])

    alphas, betas, p_hists, q_hists = [], [], [], []
    for r in range(runs):
        if sajjadi:
            from sklearn.cluster import MiniBatchKMeans

            if k > len(data):
                raise GenmetricsError(f"cannot make {k} clusters from {len(data)} points")
            labels = (
                MiniBatchKMeans(n_clusters=k, n_init=10, random_state=seed + r).fit(data).labels_
            )
        else:
            labels = kmeans_labels(
                data,
                k,
                seed=seed + r,
                num_redo=int(kmeans_num_redo),
                max_iter=int(kmeans_max_iter),
                backend=kmeans,
            )
        qc = counts(labels[: len(q)], k).astype(np.float64)
        pc = counts(labels[len(q) :], k).astype(np.float64)
        ph, qh = pc / pc.sum(), qc / qc.sum()
        a, b = pr_curve(ph, qh, slopes, recall_as_ratio=sajjadi)
        alphas.append(a)
        betas.append(b)
        p_hists.append(ph)
        q_hists.append(qh)
    alpha = np.mean(alphas, axis=0)
    beta = np.mean(betas, axis=0)
    values = prd_summary(alpha, beta)
    values["max_precision"] = float(alpha.max())
    values["max_recall"] = float(beta.max())
    extras = {
        "alpha": alpha,
        "beta": beta,
        "slopes": slopes,
        "p_hist": p_hists[0] if runs == 1 else np.asarray(p_hists),
        "q_hist": q_hists[0] if runs == 1 else np.asarray(q_hists),
        "num_buckets": k,
        "variant": variant,
    }
    return MetricResult(values=values, extras=extras, n={"reference": len(p), "candidate": len(q)})


def _is_auto(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip().lower() == "auto")


def _as_bool(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    return bool(v)
