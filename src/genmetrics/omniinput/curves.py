"""OmniInput precision–recall curves from a density of states ρ(z) and annotations r(z).

direction ``"low"`` (LM mean NLL: low z = the model likes x), thresholds λ at the upper bin
edges, bins with upper edge ≤ λ selected:
precision_λ = Σ_{z≤λ} r(z) ρ(z) / Σ_{z≤λ} ρ(z), recall_λ = Σ_{z≤λ} r ρ / Σ_z r ρ.
direction ``"high"`` (classifier logit): thresholds at the lower bin edges, bins with lower
edge ≥ λ selected (Σ_{z≥λ}). Sums are done in log space (ρ can be e^1000).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.density import Bins


def _check(ln_rho: np.ndarray, r: np.ndarray, bins: Bins, direction: str) -> tuple:
    ln_rho = np.asarray(ln_rho, np.float64)
    r = np.asarray(r, np.float64)
    if ln_rho.shape != (bins.n,) or r.shape != (bins.n,):
        raise GenmetricsError(
            f"ln_rho and r must have one value per bin ({bins.n}); got shapes "
            f"ln_rho {ln_rho.shape}, r {r.shape}"
        )
    if direction not in ("low", "high"):
        raise GenmetricsError(f"direction must be 'low' or 'high', got {direction!r}")
    if np.isnan(ln_rho).any() or np.isposinf(ln_rho).any():
        b = int(np.flatnonzero(np.isnan(ln_rho) | np.isposinf(ln_rho))[0])
        raise GenmetricsError(f"ln_rho[{b}] = {ln_rho[b]}: must be finite or -inf")
    populated = np.isfinite(ln_rho)
    edges = bins.edges
    missing = np.flatnonzero(populated & np.isnan(r))
    if len(missing):
        b = int(missing[0])
        raise GenmetricsError(
            f"r[{b}] is NaN but bin {b} [{edges[b]:g}, {edges[b + 1]:g}] is populated "
            f"(ln_rho = {ln_rho[b]:g}): annotate it ({len(missing)} such bins)"
        )
    bad = np.flatnonzero(populated & ((r < 0) | (r > 1)))
    if len(bad):
        b = int(bad[0])
        raise GenmetricsError(f"r[{b}] = {r[b]:g} is outside [0, 1]")
    return ln_rho, np.where(populated, r, 0.0), populated


def precision_recall_curve(
    ln_rho: np.ndarray, r: np.ndarray, bins: Bins, direction: str = "low"
) -> dict[str, Any]:
    """OmniInput precision and recall at every bin edge (see the module docstring).

    Returns ``lambda`` (n thresholds, ascending), ``precision`` (NaN where no mass is
    selected), ``recall`` (normalised; NaN everywhere when Σ r ρ = 0), ``log_recall``
    (ln Σ_selected r ρ, the paper's unnormalised recall; −inf when nothing), ``direction``.
    r may be NaN in empty bins (ln_rho = −inf); it must be in [0, 1] elsewhere.
    """
    ln_rho, r, _ = _check(ln_rho, r, bins, direction)
    with np.errstate(divide="ignore"):
        ln_rr = ln_rho + np.log(r)  # −inf where r = 0 or ρ = 0
    edges = bins.edges
    if direction == "low":
        lam = edges[1:]
        cum_rho = np.logaddexp.accumulate(ln_rho)
        cum_rr = np.logaddexp.accumulate(ln_rr)
    else:
        lam = edges[:-1]
        cum_rho = np.logaddexp.accumulate(ln_rho[::-1])[::-1]
        cum_rr = np.logaddexp.accumulate(ln_rr[::-1])[::-1]
    total_rr = cum_rr[-1] if direction == "low" else cum_rr[0]
    with np.errstate(invalid="ignore"):
        precision = np.where(np.isfinite(cum_rho), np.exp(cum_rr - cum_rho), np.nan)
        recall = np.exp(cum_rr - total_rr) if np.isfinite(total_rr) else np.full(bins.n, np.nan)
    return {
        "lambda": lam,
        "precision": precision,
        "recall": recall,
        "log_recall": cum_rr,
        "direction": direction,
    }


def aupr(ln_rho: np.ndarray, r: np.ndarray, bins: Bins, direction: str = "low") -> float:
    """Area under the PR curve: trapezoid rule over recall.

    Convention: the points of :func:`precision_recall_curve` with a defined precision, ordered
    by recall (ties in threshold order from the most selective), plus a first point at
    recall 0 with the precision of the most selective threshold that selects any mass. NaN
    when Σ r ρ = 0 (recall undefined).
    """
    curve = precision_recall_curve(ln_rho, r, bins, direction)
    p, rec = curve["precision"], curve["recall"]
    if direction == "high":  # most selective first
        p, rec = p[::-1], rec[::-1]
    keep = np.isfinite(p) & np.isfinite(rec)
    if not keep.any():
        return float("nan")
    p, rec = p[keep], rec[keep]
    order = np.argsort(rec, kind="stable")
    p = np.concatenate([[p[0]], p[order]])
    rec = np.concatenate([[0.0], rec[order]])
    return float(np.sum(np.diff(rec) * (p[1:] + p[:-1]) / 2))


@dataclass(frozen=True)
class Density:
    """An annotated density of states: what the ``omniinput`` metric scores.

    ``ln_rho`` per bin (−inf: empty), ``r`` per bin (NaN where no sample was scored; must be
    in [0, 1] in populated bins), ``counts`` = scored samples per bin, ``ln_space`` = ln |Ω|,
    ``direction`` low (z ≤ λ selects) or high.
    """

    bins: Bins
    ln_rho: np.ndarray
    r: np.ndarray
    counts: np.ndarray
    ln_space: float
    direction: str = "low"

    def __len__(self) -> int:
        """The number of scored samples (a score record's ``n.candidate``)."""
        return int(np.sum(self.counts))


def write_density(path: Any, d: Density) -> None:
    """The density as an ``.npz`` (atomic, no pickle)."""
    from genmetrics.npz import save_npz

    save_npz(
        path,
        ln_rho=d.ln_rho,
        r=d.r,
        counts=d.counts,
        bins=np.array([d.bins.lo, d.bins.hi, d.bins.n], np.float64),
        ln_space=np.array(d.ln_space),
        direction=np.array(d.direction),
    )


def read_density(path: Any) -> Density:
    from genmetrics.npz import load_npz

    a = load_npz(path, required=("ln_rho", "r", "counts", "bins", "ln_space", "direction"))
    lo, hi, n = (float(v) for v in a["bins"])
    return validate_density(
        Density(
            bins=Bins(lo, hi, int(n)),
            ln_rho=a["ln_rho"],
            r=a["r"],
            counts=a["counts"],
            ln_space=float(a["ln_space"]),
            direction=str(a["direction"]),
        ),
        str(path),
    )


def validate_density(d: Any, what: str) -> Density:
    """Check a :class:`Density` (shapes, r in [0, 1] where populated); errors name ``what``."""
    if not isinstance(d, Density):
        raise GenmetricsError(f"{what}: expected an OmniInput density, got {type(d).__name__}")
    try:
        ln_rho, r, _ = _check(d.ln_rho, d.r, d.bins, d.direction)
    except GenmetricsError as e:
        raise GenmetricsError(f"{what}: {e}") from None
    counts = np.asarray(d.counts)
    if counts.shape != (d.bins.n,) or (counts < 0).any():
        raise GenmetricsError(f"{what}: counts must be {d.bins.n} non-negative values")
    if not np.isfinite(ln_rho).any():
        raise GenmetricsError(f"{what}: no populated bin")
    if not math.isfinite(d.ln_space) or np.logaddexp.reduce(ln_rho) > d.ln_space + 1e-6:
        raise GenmetricsError(f"{what}: ln_space {d.ln_space} is below ln Σρ")
    return d
