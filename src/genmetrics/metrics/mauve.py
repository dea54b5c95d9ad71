"""MAUVE, frontier integral and their smoothed variants (mauve-text 0.4.0, Pillutla et al.).

P = reference (human) features, Q = candidate (model) features. Algorithm, exactly as
``mauve.compute_mauve(p_features=..., q_features=...)``:

1. quantise ``[q; p]``: L2-normalise rows, PCA keeping ``pca`` (0.9) explained variance,
   k-means into ``num_buckets`` clusters (``auto`` = max(2, round(min(n_p, n_q) / 10))) with
   faiss (``seed + 2``, ``kmeans_num_redo`` restarts, ``kmeans_max_iter`` iterations);
   histograms p, q = counts / n; smoothed p*, q* = (counts + 0.5) / Σ (Krichevsky–Trofimov);
2. divergence curve for w in linspace(1e-6, 1 − 1e-6, 25): r = w p + (1 − w) q,
   point = exp(−c [KL(q‖r), KL(p‖r)]) with c = ``scaling`` (5), plus the end points (0, 1)
   and (1, 0) (KL = ∞ where the support does not match);
3. MAUVE = ½ [area(x ↦ y) + area(y ↦ x)] with the trapezoid rule after sorting by x resp. y;
4. frontier integral = 2 Σ_b { q/4 if p = 0; p/4 if q = 0; 0 if |p − q| <= 1e-8;
   (p + q)/4 − ½ p q (ln p − ln q)/(p − q) otherwise }.

Known artefact kept for fidelity: with identical histograms every interior point of the
curve is (1, 1) (both KLs 0), so the value depends on how numpy's ``argsort`` orders those
tied points. mauve-text 0.4.0 (``compute_mauve``: ``idxs1 = np.argsort(x)``, then
``compute_area_under_curve``) gives 0.75 where the KLs are exactly 0 (p = q = (¼, ¼, ½):
area 0.5 one way and 1.0 the other), and 1.0 up to rounding where rounding leaves them a
hair above 0 (p = q uniform over 5 bins); never reliably 1. The same sorts are used here,
so the numbers agree with mauve-text's, and the result's ``warnings`` say the histograms are
identical (the score record, ``scores.csv`` and the headline carry it).

PCA solver (``pca_solver``): mauve-text runs scikit-learn's ``PCA(n_components=None)``, whose
``auto`` policy is the covariance eigendecomposition when d <= 1000 and n >= 10 d (from 3,840
texts a side at d = 768) and the full SVD below that. The default here is the covariance
eigendecomposition at every size (scikit-learn's own arithmetic, see ``_quantize.pca_fit``):
the same subspace, about 10× cheaper than the SVD at 2,000 a side, where it is the larger
part of mauve-text's time. Above the threshold it is bit for bit mauve-text's run; below it,
the PCA coordinates differ in their last bits, and on the benchmark's mixtures (2,000 a side,
4 pairs × 2 seeds) the histograms and MAUVE were identical (|ΔFI| <= 1e-16, NOTES-mauve.md).
``pca_solver=auto`` follows scikit-learn's policy: mauve-text bit for bit at every size.

Device (issue 28): with ``kmeans=auto`` the k-means runs in faiss on the CPU, or, where
``genmetrics.devices.array_device()`` is ``"cuda"``, in torch on the GPU
(``_kmeans_torch.kmeans_torch``: faiss's algorithm — its random init, Lloyd steps, its
empty-cluster split, best of ``kmeans_num_redo`` restarts — with exact fixed-point centroid
sums and float64 rechecks of near-ties, so the torch k-means gives the same labels on the
CPU and on a GPU). It is not faiss bit for bit (faiss sums centroids in float32); its MAUVE
is within 0.01 of faiss' (tested with ``kmeans=torch`` on the CPU). The record states which
ran: ``extras["kmeans"]`` and ``extras["device"]``; the params (and the cache key) keep
``kmeans=auto``.

Inputs are features, one row per text: an empty text is whatever the featurizer made of it
(mauve-text's own text path drops empty strings before featurizing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._inputs import check_dims
from genmetrics.metrics._quantize import (
    KMEANS_PARAMS,
    PCA_SOLVERS,
    clustering_metric,
    quantize,
    resolve_buckets,
    resolve_kmeans,
)
from genmetrics.metrics.registry import HIGHER, LOWER, MetricResult
from genmetrics.params import Const, Interval, Options


def kl_multinomial(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p‖q) in nats, ∞ if p has mass where q has none (mauve-text ``kl_multinomial``)."""
    if np.logical_and(p != 0, q == 0).any():
        return float(np.inf)
    idx = np.logical_and(p != 0, q != 0)
    return float(np.sum(p[idx] * np.log(p[idx] / q[idx])))


def divergence_curve(
    p: np.ndarray, q: np.ndarray, *, discretization: int = 25, scaling: float = 5.0
) -> np.ndarray:
    """exp(−c [KL(q‖r_w), KL(p‖r_w)]) for the mixtures r_w, with the two end points; [m+2, 2]."""
    weights = np.linspace(1e-6, 1 - 1e-6, int(discretization))
    pts = [[0.0, np.inf]]
    for w in np.sort(weights):
        r = w * p + (1 - w) * q
        pts.append([kl_multinomial(q, r), kl_multinomial(p, r)])
    pts.append([np.inf, 0.0])
    return np.exp(-scaling * np.asarray(pts, dtype=np.float64))


def _auc(x: np.ndarray, y: np.ndarray) -> float:
    """Trapezoid area under y(x) for monotone x (= ``sklearn.metrics.auc``)."""
    dx = np.diff(x)
    direction = -1.0 if np.all(dx <= 0) else 1.0
    return float(direction * np.sum(dx * (y[1:] + y[:-1]) / 2.0))


def mauve_from_curve(curve: np.ndarray) -> float:
    x, y = curve.T
    i1 = np.argsort(x)
    i2 = np.argsort(y)
    return 0.5 * (_auc(x[i1], y[i1]) + _auc(y[i2], x[i2]))


def frontier_integral(p: np.ndarray, q: np.ndarray) -> float:
    """Frontier integral (Liu et al. 2021), mauve-text's ``get_fronter_integral`` × 2."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    total = 0.0
    total += float(q[(p == 0) & (q != 0)].sum()) / 4
    total += float(p[(q == 0) & (p != 0)].sum()) / 4
    both = (p != 0) & (q != 0) & (np.abs(p - q) > 1e-8)
    p1, q1 = p[both], q[both]
    t2 = p1 * q1 * (np.log(p1) - np.log(q1)) / (p1 - q1)
    total += float(np.sum(0.25 * (p1 + q1) - 0.5 * t2))
    return total * 2


def mauve_from_counts(
    p_counts: np.ndarray,
    q_counts: np.ndarray,
    *,
    scaling: float = 5.0,
    discretization: int = 25,
) -> dict[str, Any]:
    """MAUVE, frontier integral and the KT-smoothed variants from two bin-count vectors."""
    p_counts = np.asarray(p_counts, dtype=np.float64)
    q_counts = np.asarray(q_counts, dtype=np.float64)
    if p_counts.shape != q_counts.shape or p_counts.ndim != 1:
        raise GenmetricsError("p and q counts must be 1-D vectors of the same length")
    if (p_counts < 0).any() or (q_counts < 0).any() or p_counts.sum() <= 0 or q_counts.sum() <= 0:
        raise GenmetricsError("bin counts must be non-negative with a positive total")
    p = p_counts / p_counts.sum()
    q = q_counts / q_counts.sum()
    ps = (p_counts + 0.5) / (p_counts + 0.5).sum()
    qs = (q_counts + 0.5) / (q_counts + 0.5).sum()
    curve = divergence_curve(p, q, discretization=discretization, scaling=scaling)
    curve_s = divergence_curve(ps, qs, discretization=discretization, scaling=scaling)
    return {
        "mauve": mauve_from_curve(curve),
        "frontier_integral": frontier_integral(p, q),
        "mauve_star": mauve_from_curve(curve_s),
        "frontier_integral_star": frontier_integral(ps, qs),
        "p_hist": p,
        "q_hist": q,
        "divergence_curve": curve,
    }


def kmeans_backend(kmeans: str) -> tuple[str, str]:
    """``(backend, device)`` of MAUVE's k-means: ``auto`` is torch on the GPU when
    :func:`genmetrics.devices.array_device` says ``cuda``, else faiss (scikit-learn without
    it) on the CPU; ``torch`` runs on that device; faiss and scikit-learn on the CPU."""
    if kmeans in ("auto", "torch"):
        from genmetrics.devices import array_device

        device = array_device()
        if kmeans == "torch" or device == "cuda":
            return "torch", device
    return resolve_kmeans(kmeans), "cpu"


@clustering_metric(
    "mauve",
    values={
        "mauve": HIGHER,
        "frontier_integral": LOWER,
        "mauve_star": HIGHER,
        "frontier_integral_star": LOWER,
    },
    family="quality/diversity",
    scale="0–1",  # the frontier integral is 1 for disjoint histograms
    params={
        "num_buckets": ((Interval(int, 2, None), Const("auto")), "k-means clusters (auto: n/10)"),
        "pca": (
            (Interval(float, 0, 1, closed="right"), Const(False)),
            "PCA variance fraction on [q; p], or false",
        ),
        "pca_solver": (
            Options(*PCA_SOLVERS),
            "PCA algorithm (auto: scikit-learn's choice, mauve-text bit for bit)",
        ),
        "scaling": (Interval(float, 0, None, closed="neither"), "c in exp(-c KL)"),
        **KMEANS_PARAMS,
        "divergence_curve_discretization_size": (Interval(int, 2, 10**6), "points of the curve"),
        "pca_max_data": (
            (Interval(int, 1, None), Const(-1)),
            "points used to fit PCA (-1: all, as mauve-text)",
        ),
    },
    upstream="mauve-text 0.4.0 compute_mauve",
    citation="Pillutla et al. (2021)",
)
def mauve(
    *,
    reference: np.ndarray,
    candidate: np.ndarray,
    num_buckets: int | str = "auto",
    pca: float | bool = 0.9,
    scaling: float = 5,
    seed: int = 25,
    kmeans: str = "auto",
    kmeans_num_redo: int = 5,
    kmeans_max_iter: int = 500,
    divergence_curve_discretization_size: int = 25,
    pca_max_data: int = -1,
    pca_solver: str = "covariance_eigh",
) -> MetricResult:
    """MAUVE of candidate Q against reference P, as ``mauve.compute_mauve`` (mauve-text 0.4.0).

    L2 + PCA(``pca``, ``pca_solver``) on [q; p], k-means into ``num_buckets`` (auto = n/10)
    with faiss (``kmeans=auto``: torch on a GPU when there is one, scikit-learn without
    faiss), divergence curve with scaling c = ``scaling``; also the frontier integral and the
    KT-smoothed MAUVE*/FI*. ``extras`` state the k-means that ran and its device.
    """
    check_dims(reference, candidate)
    k = resolve_buckets(num_buckets, len(reference), len(candidate))
    backend, device = kmeans_backend(kmeans)
    p_counts, q_counts, dims = quantize(
        reference,
        candidate,
        k,
        pca=pca,
        seed=seed,
        kmeans=backend,
        num_redo=kmeans_num_redo,
        max_iter=kmeans_max_iter,
        pca_max_data=pca_max_data,
        pca_solver=pca_solver,
        device=device,
    )
    out = mauve_from_counts(
        p_counts[0],
        q_counts[0],
        scaling=scaling,
        discretization=divergence_curve_discretization_size,
    )
    values = {
        name: out[name]
        for name in ("mauve", "frontier_integral", "mauve_star", "frontier_integral_star")
    }
    extras = {
        "p_hist": out["p_hist"],
        "q_hist": out["q_hist"],
        "divergence_curve": out["divergence_curve"],
        "num_buckets": k,
        "pca_dims": dims,
        "kmeans": backend,
        "device": device,
    }
    n = {"reference": len(reference), "candidate": len(candidate)}
    warnings = []
    if np.allclose(out["p_hist"], out["q_hist"], rtol=0, atol=1e-12):
        warnings.append(
            f"identical histograms: both sets fall into the {k} clusters in the same shares; "
            f"MAUVE {values['mauve']:.4g} is mauve-text's tie artefact (0.75 or 1, not a "
            "measured gap)"
        )
    return MetricResult(values=values, extras=extras, n=n, warnings=warnings)
