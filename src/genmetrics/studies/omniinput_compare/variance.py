"""Annotation variance of OmniInput (Liu et al., Table 1): two annotators score the same
representative samples; r(z) per bin from each, how much they differ and agree, and the AUPR
each annotator's r(z) gives on the same density of states.

Per bin b with n_b samples scored by both, scores s^A, s^B ∈ [0, 1]:

* r_A(b) = mean s^A, r_B(b) = mean s^B (as :func:`~genmetrics.omniinput.annotation_csv.
  r_from_scores`), difference r_A − r_B;
* labels: a score ≥ ``threshold`` (0.5) is a positive label (raters' 0/1 scores are labels
  already); equal = the share of samples with equal labels;
* Cohen's κ = (p_o − p_e) / (1 − p_e), p_o = the share of equal labels, p_e = p_A p_B +
  (1 − p_A)(1 − p_B) with p_A, p_B the annotators' positive shares; NaN when p_e = 1 (both
  annotators give one and the same label to every sample: κ is undefined there).

The summary also gives κ and equal labels over all samples pooled, the mean |r_A − r_B| over
annotated bins, and AUPR_A, AUPR_B (:func:`~genmetrics.omniinput.curves.aupr`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.curves import aupr
from genmetrics.omniinput.density import Bins


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's κ of two boolean label vectors of equal length (NaN when p_e = 1 or empty)."""
    a, b = np.asarray(a, bool), np.asarray(b, bool)
    if a.shape != b.shape:
        raise GenmetricsError(f"cohen_kappa: label shapes differ ({a.shape} vs {b.shape})")
    if a.size == 0:
        return math.nan
    p_o = float(np.mean(a == b))
    pa, pb = float(a.mean()), float(b.mean())
    p_e = pa * pb + (1 - pa) * (1 - pb)
    return math.nan if p_e >= 1 else (p_o - p_e) / (1 - p_e)


def variance_table(
    scores_a: Sequence[np.ndarray],
    scores_b: Sequence[np.ndarray],
    bins: Bins,
    ln_rho: np.ndarray,
    direction: str = "low",
    threshold: float = 0.5,
    labels: tuple[str, str] = ("A", "B"),
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows per bin (bin, z_low, z_high, n, r_<A>, r_<B>, difference, equal_labels, kappa) and
    the summary (pooled κ and equal labels, mean |difference|, AUPR of each annotator).

    ``scores_a``/``scores_b``: one array per bin of the same samples' scores (the counts per
    bin must match); ``ln_rho``: the run's density of states (−inf: empty bin)."""
    if len(scores_a) != bins.n or len(scores_b) != bins.n:
        raise GenmetricsError(f"variance_table: need scores for each of the {bins.n} bins")
    la, lb = labels
    rows, all_a, all_b = [], [], []
    r = {la: np.full(bins.n, np.nan), lb: np.full(bins.n, np.nan)}
    edges = bins.edges
    for k in range(bins.n):
        sa, sb = np.asarray(scores_a[k], float), np.asarray(scores_b[k], float)
        if sa.shape != sb.shape:
            raise GenmetricsError(
                f"variance_table: bin {k} has {len(sa)} scores from {la} and {len(sb)} from "
                f"{lb}; both annotators must score the same samples"
            )
        n = len(sa)
        ya, yb = sa >= threshold, sb >= threshold
        all_a.append(ya)
        all_b.append(yb)
        if n:
            r[la][k], r[lb][k] = sa.mean(), sb.mean()
        rows.append(
            {
                "bin": k,
                "z_low": float(edges[k]),
                "z_high": float(edges[k + 1]),
                "n": n,
                f"r_{la}": float(r[la][k]),
                f"r_{lb}": float(r[lb][k]),
                "difference": float(r[la][k] - r[lb][k]),
                "equal_labels": float(np.mean(ya == yb)) if n else math.nan,
                "kappa": cohen_kappa(ya, yb),
            }
        )
    ya, yb = np.concatenate(all_a), np.concatenate(all_b)
    ln_rho = np.asarray(ln_rho, float)
    annotated = np.isfinite(ln_rho) & np.isfinite(r[la])
    populated = np.isfinite(ln_rho)
    summary: dict[str, Any] = {
        "labels": [la, lb],
        "threshold": threshold,
        "samples": int(len(ya)),
        "bins_annotated": int(annotated.sum()),
        "kappa": cohen_kappa(ya, yb),
        "equal_labels": float(np.mean(ya == yb)) if len(ya) else math.nan,
        "mean_abs_difference": float(np.mean(np.abs(r[la] - r[lb])[annotated]))
        if annotated.any()
        else math.nan,
    }
    if (populated & ~annotated).any():  # a populated bin without samples: no curve
        summary[f"aupr_{la}"] = summary[f"aupr_{lb}"] = math.nan
    else:
        for name in labels:
            summary[f"aupr_{name}"] = aupr(ln_rho, r[name], bins, direction)
    return rows, summary
