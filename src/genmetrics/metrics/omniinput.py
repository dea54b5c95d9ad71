"""OmniInput precision and recall (Liu et al., "Evaluation of human-model prediction difference
on the Internet Scale of Data"): scores of an annotated density of states over a model's whole
input space Ω = V^L (a Wang–Landau estimate of ρ(z) and the mean annotation r(z) per bin; the
``omniinput`` workflow rules make it, :mod:`genmetrics.omniinput`).

With λ = ``threshold`` (``null``: every bin) and direction low (z ≤ λ selects; high: z ≥ λ):
precision_λ = Σ_sel r ρ / Σ_sel ρ; recall_λ = Σ_sel r ρ / Σ_all r ρ; log_recall_λ =
ln(Σ_sel r ρ / |Ω|), the paper's unnormalised recall as a fraction of the input space, so it
compares models on the same Ω (the same tokenizer and length). A threshold between bin edges
selects whole bins only (bins whose upper edge is ≤ λ; high: lower edge ≥ λ). AUPR: trapezoids
over the curve at every bin edge (:func:`genmetrics.omniinput.curves.aupr`). No public code
exists; this follows the formulas of the paper.
"""

from __future__ import annotations

import math

import numpy as np

from genmetrics.metrics.registry import HIGHER, MetricResult, register
from genmetrics.omniinput.curves import Density, aupr, precision_recall_curve
from genmetrics.params import Const, Interval


@register(
    "omniinput",
    input="density",
    values={
        "aupr": HIGHER,
        "precision": HIGHER,
        "recall": HIGHER,
        "log_recall": HIGHER,
        "bins_populated": None,
        "bins_annotated": None,
    },
    family="quality/diversity",
    scale={
        "aupr": "0–1",
        "precision": "0–1",
        "recall": "0–1",
        "log_recall": "≤ 0",
        "bins_populated": "count",
        "bins_annotated": "count",
    },
    params={
        "threshold": (
            (Interval(float, None, None), Const(None)),
            "λ on the output z (null: every bin)",
        ),
    },
    upstream="none public; the formulas of Liu et al.",
    citation="Liu et al. (2023), OmniInput",
)
def omniinput(candidate: Density, *, threshold: float | None = None) -> MetricResult:
    """Precision and recall over a model's whole input space (OmniInput, Liu et al. 2023),
    from an annotated Wang–Landau density of states; AUPR over every bin edge.

    See the module docstring for the formulas and the threshold convention.
    """
    d = candidate
    curve = precision_recall_curve(d.ln_rho, d.r, d.bins, d.direction)
    lam = curve["lambda"]
    if threshold is None:
        k = len(lam) - 1 if d.direction == "low" else 0
    elif d.direction == "low":
        k = int(np.searchsorted(lam, threshold, side="right")) - 1
    else:
        k = int(np.searchsorted(lam, threshold, side="left"))
    if 0 <= k < len(lam):
        p, rec, lr = curve["precision"][k], curve["recall"][k], curve["log_recall"][k]
    else:  # nothing selected
        p, rec, lr = math.nan, 0.0, -math.inf
    populated = np.isfinite(d.ln_rho)
    return MetricResult(
        values={
            "aupr": aupr(d.ln_rho, d.r, d.bins, d.direction),
            "precision": float(p),
            "recall": float(rec),
            "log_recall": float(lr - d.ln_space),
            "bins_populated": int(populated.sum()),
            "bins_annotated": int((populated & (np.asarray(d.counts) > 0)).sum()),
        },
        extras={
            "direction": d.direction,
            "threshold_used": None if threshold is None or not 0 <= k < len(lam) else float(lam[k]),
            "curve": {
                "lambda": lam.tolist(),
                "precision": [
                    None if not math.isfinite(x) else float(x) for x in curve["precision"]
                ],
                "recall": [None if not math.isfinite(x) else float(x) for x in curve["recall"]],
            },
        },
    )
