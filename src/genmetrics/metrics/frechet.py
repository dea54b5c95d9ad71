"""Fréchet distance between Gaussians fitted to two sets of embeddings (FID's formula,
Heusel et al. 2017), on text embeddings as image generation reports it on Inception features.

    FD = ||mu_1 - mu_2||^2 + Tr(S_1 + S_2 - 2 (S_1 S_2)^{1/2})

mu = the mean of each set's rows, S = ``np.cov(x, rowvar=False)`` (ddof = 1, as
``pytorch_fid.fid_score.calculate_activation_statistics``); 1 = candidate, 2 = reference (the
formula is symmetric). Computed in float64 as pytorch-fid 0.3.0's
``calculate_frechet_distance`` (``fid_score.py``) does it:

* ``(S_1 S_2)^{1/2}`` by ``scipy.linalg.sqrtm`` of the product ``S_1 @ S_2``;
* a product whose root is not finite (singular, numerically) is retried with ``eps`` added
  to both diagonals, ``sqrtm((S_1 + eps I)(S_2 + eps I))``; ``extras["eps_offset"]`` says so;
* a root with an imaginary part on its diagonal above 1e-3 (``np.allclose(..., atol=1e-3)``)
  is an error; a smaller imaginary part (numerical noise) is dropped.

With fewer texts than dimensions (n <= d) a covariance is singular and the distance is
biased upward (it shrinks as n grows, even between two samples of one distribution): compare
distances at equal n, or read KID (:mod:`genmetrics.metrics.kid`), which is unbiased.
pytorch-fid returns such a number without a word; here ``extras["rank_deficient"]`` and a line
in the result's ``warnings`` (so the score record, ``scores.csv`` and the headline) say so.
"""

from __future__ import annotations

import warnings

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._inputs import check_dims, distribution_metric
from genmetrics.metrics.registry import LOWER, MetricResult
from genmetrics.params import Interval

__all__ = ["frechet", "frechet_distance", "gaussian_stats"]

#: the largest imaginary part on the root's diagonal that is dropped as noise (pytorch-fid)
IMAG_ATOL = 1e-3


def gaussian_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance (ddof = 1: ``np.cov(x, rowvar=False)``) of the rows of ``x``, in
    float64, as pytorch-fid computes its activation statistics."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise GenmetricsError(f"frechet: a covariance needs at least 2 rows, got shape {x.shape}")
    return x.mean(axis=0), np.atleast_2d(np.cov(x, rowvar=False))


def _sqrtm(a: np.ndarray) -> np.ndarray:
    """``scipy.linalg.sqrtm`` without its warning on singular input (its result is checked
    for finiteness by the caller, as pytorch-fid checks it)."""
    from scipy import linalg  # here, not at import: loading every metric module stays light

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linalg.LinAlgWarning)
        with np.errstate(all="ignore"):
            return linalg.sqrtm(a)


def frechet_distance(
    mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray, eps: float = 1e-6
) -> tuple[float, dict[str, float | bool]]:
    """FD between N(mu1, sigma1) and N(mu2, sigma2), as pytorch-fid 0.3.0's
    ``calculate_frechet_distance`` (see the module doc), and its parts: ``mean_term``
    ||mu1 - mu2||^2, ``cov_term`` Tr(S1 + S2 - 2 covmean), ``eps_offset`` (the retry ran) and
    ``imag_max`` (the largest imaginary part dropped)."""
    mu1, mu2 = np.atleast_1d(mu1), np.atleast_1d(mu2)
    sigma1, sigma2 = np.atleast_2d(sigma1), np.atleast_2d(sigma2)
    if mu1.shape != mu2.shape or sigma1.shape != sigma2.shape:
        raise GenmetricsError(
            f"frechet: the two sets differ in dimension ({mu1.shape[0]} vs {mu2.shape[0]}); "
            "both must come from the same featurizer"
        )
    diff = mu1 - mu2
    covmean = _sqrtm(sigma1.dot(sigma2))
    offset = not np.isfinite(covmean).all()
    if offset:  # the product is (numerically) singular: pytorch-fid's retry
        eye = np.eye(sigma1.shape[0]) * eps
        covmean = _sqrtm((sigma1 + eye).dot(sigma2 + eye))
        if not np.isfinite(covmean).all():
            raise GenmetricsError(
                f"frechet: the square root of the covariance product is not finite, even with "
                f"eps={eps:g} added to the diagonals; raise eps"
            )
    imag = 0.0
    if np.iscomplexobj(covmean):
        diag_imag = np.diagonal(covmean).imag
        if not np.allclose(diag_imag, 0, atol=IMAG_ATOL):
            raise GenmetricsError(
                f"frechet: the square root of the covariance product has an imaginary part "
                f"of {np.max(np.abs(covmean.imag)):.3g} (more than {IMAG_ATOL:g} on its "
                "diagonal); the covariances are too ill-conditioned: use more texts or raise eps"
            )
        imag = float(np.max(np.abs(covmean.imag)))
        covmean = covmean.real
    tr_covmean = np.trace(covmean)
    # summed in pytorch-fid's order (the value is the same float, not only the same number)
    value = diff.dot(diff) + np.trace(sigma1) + np.trace(sigma2) - 2 * tr_covmean
    parts = {
        "mean_term": float(diff.dot(diff)),
        "cov_term": float(np.trace(sigma1) + np.trace(sigma2) - 2 * tr_covmean),
        "eps_offset": offset,
        "imag_max": imag,
    }
    return float(value), parts


@distribution_metric(
    "frechet",
    values={"frechet": LOWER, "frechet_mean": LOWER, "frechet_cov": LOWER},
    family="quality/diversity",
    headline=("frechet",),
    scale="≥ 0",  # a squared distance (numerical noise can leave it a hair below 0)
    params={
        "eps": (
            Interval(float, 0, None, closed="neither"),
            "added to both covariance diagonals when their product's root is not finite",
        ),
    },
    upstream="pytorch-fid 0.3.0 calculate_frechet_distance (np.cov, ddof=1)",
    citation="Heusel et al. (2017)",
    costly=lambda p: (
        "each time it takes the square root of a d × d matrix, d³ in the featurizer's width "
        "(0.28 s at d = 576: a minute per score for 200 resamples; hours at d = 4096)"
    ),
)
def frechet(*, reference: np.ndarray, candidate: np.ndarray, eps: float = 1e-6) -> MetricResult:
    """Fréchet distance ||mu_c - mu_r||^2 + Tr(S_c + S_r - 2 (S_c S_r)^{1/2}) between Gaussians
    fitted to the candidate and reference embeddings (FID's formula; covariances with
    ddof = 1), as pytorch-fid's ``calculate_frechet_distance``; lower = closer.

    ``frechet_mean`` is the mean term ||mu_c - mu_r||^2 and ``frechet_cov`` the covariance
    term, which sum to ``frechet``. ``eps``: pytorch-fid's offset for a singular product.
    """
    check_dims(reference, candidate)
    if len(reference) < 2 or len(candidate) < 2:
        raise GenmetricsError(
            f"frechet: each set needs at least 2 embeddings for a covariance, got "
            f"{len(candidate)} candidate(s) and {len(reference)} reference(s)"
        )
    mu_c, s_c = gaussian_stats(candidate)
    mu_r, s_r = gaussian_stats(reference)
    value, parts = frechet_distance(mu_c, s_c, mu_r, s_r, eps=eps)
    d = int(reference.shape[1])
    fewest = min(len(reference), len(candidate))
    return MetricResult(
        values={
            "frechet": value,
            "frechet_mean": parts["mean_term"],
            "frechet_cov": parts["cov_term"],
        },
        extras={
            "dim": d,
            "eps_offset": bool(parts["eps_offset"]),
            "imag_max": parts["imag_max"],
            # n <= d: a singular covariance, the distance biased upward (module doc)
            "rank_deficient": bool(fewest <= d),
        },
        n={"reference": len(reference), "candidate": len(candidate)},
        warnings=(
            [
                f"rank-deficient covariance: {fewest} texts <= {d} dimensions, the distance "
                "is biased upward (compare at equal n, or read KID)"
            ]
            if fewest <= d
            else []
        ),
    )
