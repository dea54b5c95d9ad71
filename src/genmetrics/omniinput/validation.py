"""Check a density-of-states estimate against exact enumeration (the OmniInput toy, Liu et al.
§3.2): how far ln ρ̂ is from ln ρ, which bins the sampler reached, and how far the PR curve
built from its estimate and its annotated samples is from the exact one.

The pipeline under test is the real one: ρ̂ from the sampler, r̂(z) = the rule's mean score over
the sampler's representative samples of each bin (what a rater would see), and the curve code
of :mod:`genmetrics.omniinput.curves`. Uniform Monte Carlo with the same evaluation budget is
the baseline (ρ̂ = count / N · |Ω|; it never sees bins rarer than about |Ω| / N).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.curves import aupr, precision_recall_curve
from genmetrics.omniinput.density import Bins, WLResult, read_result
from genmetrics.omniinput.sampler import OutputFn
from genmetrics.omniinput.toy import digit_sum_rule, exact_ln_rho, exact_r

Rule = Callable[[np.ndarray], np.ndarray]


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def curve_linf(a: dict[str, Any], b: dict[str, Any]) -> float:
    """max over thresholds of max(|ΔP|, |ΔR|), where both curves define the value."""
    worst = 0.0
    for key in ("precision", "recall"):
        x, y = np.asarray(a[key]), np.asarray(b[key])
        ok = np.isfinite(x) & np.isfinite(y)
        if ok.any():
            worst = max(worst, float(np.max(np.abs(x[ok] - y[ok]))))
    return worst


def estimated_r(samples: list[np.ndarray], rule: Rule, n_bins: int) -> np.ndarray:
    """r̂ per bin: the rule's mean score over each bin's samples (NaN where a bin has none)."""
    r = np.full(n_bins, np.nan)
    for b, s in enumerate(samples):
        if len(s):
            r[b] = float(np.mean(rule(s)))
    return r


def compare(
    ln_rho_exact: np.ndarray,
    r_exact: np.ndarray,
    bins: Bins,
    ln_rho_hat: np.ndarray,
    r_hat: np.ndarray,
    direction: str = "low",
) -> dict[str, Any]:
    """Errors of (ln ρ̂, r̂) against the exact (ln ρ, r) on the same bins.

    * ``max_abs_log_rho_error`` / ``mean_abs_log_rho_error``: over bins populated exactly and
      reached by the estimate (a missed bin is listed in ``bins_missed``, not averaged);
    * ``kl_exact_to_estimate``: KL(ρ/|Ω| ‖ ρ̂/Σρ̂) over the bins both have (nats);
    * ``pr_curve_linf_error``: :func:`curve_linf` between the exact curve and the curve from
      (ρ̂, r̂), r̂ set to 0 in bins the estimate never reached (they get no mass anyway);
      ``pr_curve_linf_error_exact_r``: the same with the exact r (the error due to ρ̂ alone);
    * ``aupr`` of both curves.
    """
    populated = np.isfinite(ln_rho_exact)
    reached = np.isfinite(ln_rho_hat)
    both = populated & reached
    if not both.any():
        raise GenmetricsError("compare: the estimate reached none of the populated bins")
    err = np.abs(ln_rho_hat[both] - ln_rho_exact[both])
    counts = np.exp(ln_rho_exact)
    p = counts[both] / counts[both].sum()
    q = np.exp(ln_rho_hat[both] - np.logaddexp.reduce(ln_rho_hat[both]))
    kl = float(np.sum(p * (np.log(p) - np.log(q))))
    edges = bins.edges
    missed = [
        {
            "bin": int(b),
            "z_low": float(edges[b]),
            "z_high": float(edges[b + 1]),
            "exact_count": int(round(counts[b])),
        }
        for b in np.flatnonzero(populated & ~reached)
    ]
    r_hat = np.where(reached, np.where(np.isnan(r_hat), 0.0, r_hat), np.nan)
    exact = precision_recall_curve(ln_rho_exact, r_exact, bins, direction)
    est = precision_recall_curve(ln_rho_hat, r_hat, bins, direction)
    est_exact_r = precision_recall_curve(
        ln_rho_hat, np.where(reached, np.nan_to_num(r_exact), np.nan), bins, direction
    )
    return {
        "max_abs_log_rho_error": float(err.max()),
        "mean_abs_log_rho_error": float(err.mean()),
        "worst_bin": int(np.flatnonzero(both)[np.argmax(err)]),
        "kl_exact_to_estimate": kl,
        "bins_populated_exact": int(populated.sum()),
        "bins_reached": int(both.sum()),
        "bins_missed": missed,
        "rarest_bin_reached_exact_count": int(round(counts[both].min())),
        "pr_curve_linf_error": curve_linf(exact, est),
        "pr_curve_linf_error_exact_r": curve_linf(exact, est_exact_r),
        "aupr_exact": _finite(aupr(ln_rho_exact, r_exact, bins, direction)),
        "aupr_estimate": _finite(aupr(ln_rho_hat, r_hat, bins, direction)),
    }


def monte_carlo(
    f: OutputFn,
    vocab_size: int,
    length: int,
    bins: Bins,
    budget: int,
    samples_per_bin: int = 50,
    seed: int = 0,
    batch: int = 4096,
) -> WLResult:
    """Uniform sampling baseline: ``budget`` sequences drawn uniformly from V^L (seeded),
    ρ̂ = count / budget · V^L per bin, the first ``samples_per_bin`` draws of each bin kept."""
    if int(budget) != budget or budget < 1:
        raise GenmetricsError(f"monte_carlo: budget must be a positive integer, got {budget!r}")
    rng = np.random.default_rng(seed)
    counts = np.zeros(bins.n, np.int64)
    kept: list[list[np.ndarray]] = [[] for _ in range(bins.n)]
    for start in range(0, budget, batch):
        x = rng.integers(0, vocab_size, size=(min(batch, budget - start), length), dtype=np.int64)
        b = bins.index(f(x))
        counts += np.bincount(b[b >= 0], minlength=bins.n)
        for k in np.unique(b[b >= 0]):
            room = samples_per_bin - sum(len(a) for a in kept[k])
            if room > 0:
                kept[k].append(x[b == k][:room])
    with np.errstate(divide="ignore"):
        ln_rho = np.log(counts) - math.log(budget) + length * math.log(vocab_size)
    samples = [np.concatenate(k) if k else np.zeros((0, length), np.int64) for k in kept]
    return WLResult(
        bins=bins,
        ln_rho=ln_rho,
        ln_S=np.where(counts > 0, ln_rho, 0.0),
        histogram=counts,
        visits=counts,
        samples=samples,
        model_evaluations=int(budget),
        iterations=int(math.ceil(budget / batch)),
        walker_steps=int(budget),
        final_ln_f=float("nan"),
        stopped="budget",
        bins_reached=int((counts > 0).sum()),
        stages=0,
        one_over_t_from=None,
        acceptance_rate=float("nan"),
        proposal="monte_carlo",
        vocab_size=vocab_size,
        length=length,
    )


def validation_entry(
    result: WLResult,
    ln_rho_exact: np.ndarray,
    r_exact: np.ndarray,
    rule: Rule,
    direction: str = "low",
) -> dict[str, Any]:
    """One proposal's entry of ``validation.json``: the run's counters and :func:`compare`."""
    r_hat = estimated_r(result.samples, rule, result.bins.n)
    out = {
        "model_evaluations": result.model_evaluations,
        "stopped": result.stopped,
        "iterations": result.iterations,
        "final_ln_f": _finite(result.final_ln_f),
        "stages": result.stages,
        "acceptance_rate": _finite(result.acceptance_rate),
        "annotated_samples": int(sum(len(s) for s in result.samples)),
    }
    out.update(compare(ln_rho_exact, r_exact, result.bins, result.ln_rho, r_hat, direction))
    return out


def exact_truth(z: np.ndarray, scores: np.ndarray, bins: Bins) -> tuple[np.ndarray, np.ndarray]:
    """(ln ρ, r) per bin from every input's output ``z`` and rule score; refuses outputs outside
    the bins (the exact check needs all of Ω inside the window)."""
    outside = int((bins.index(z) < 0).sum())
    if outside:
        raise GenmetricsError(
            f"exact check: {outside} of {len(z)} inputs have outputs outside the bins "
            f"[{bins.lo:g}, {bins.hi:g}] (outputs span [{np.min(z):g}, {np.max(z):g}])"
        )
    return exact_ln_rho(z, bins), exact_r(z, scores, bins)


# ------------------------------------------------------------------ the exact truth file


def write_exact(
    path: Any, bins: Bins, ln_rho: np.ndarray, r: np.ndarray, valid_fraction: float, size: int
) -> None:
    """The toy's exact truth (every input enumerated) as ``exact.npz``: ln ρ and r per bin,
    the bins, the share of valid inputs and the size of the input space."""
    from genmetrics.npz import save_npz

    save_npz(
        path,
        ln_rho=ln_rho,
        r=r,
        bins=np.array([bins.lo, bins.hi, bins.n], np.float64),
        valid_fraction=np.array(float(valid_fraction)),
        space_size=np.array(float(size)),
    )


def read_exact(path: Any) -> tuple[Bins, np.ndarray, np.ndarray, dict[str, float]]:
    """``exact.npz`` of :func:`write_exact`: (bins, ln ρ, r, {valid_fraction, space_size})."""
    from genmetrics.npz import load_npz

    a = load_npz(path, required=("ln_rho", "r", "bins", "valid_fraction", "space_size"))
    lo, hi, n = (float(v) for v in a["bins"])
    extra = {"valid_fraction": float(a["valid_fraction"]), "space_size": float(a["space_size"])}
    return Bins(lo, hi, int(n)), a["ln_rho"], a["r"], extra


# ------------------------------------------------------------------ the toy figure's data


@dataclass(frozen=True)
class ToyRun:
    """One proposal's run against the exact truth: its ln ρ̂ per bin, r̂ from its annotated
    samples, its PR curve (over the bins it reached) and its errors from ``validation.json``."""

    ln_rho: np.ndarray
    r_hat: np.ndarray
    curve: dict[str, np.ndarray]
    max_abs_log_rho_error: float
    pr_curve_linf_error: float


@dataclass(frozen=True)
class ToyComparison:
    """What the toy figure shows: the bins' ``centers``, the exact ln ρ, r and PR curve, the
    runs by proposal kind, and the toy's ``spec`` (``validation.json``'s ``toy``: length,
    modulus), ``n_bins`` and the number of inputs ``space_size``."""

    centers: np.ndarray
    ln_rho: np.ndarray
    r: np.ndarray
    curve: dict[str, np.ndarray]
    runs: dict[str, ToyRun]
    spec: dict[str, Any]
    n_bins: int
    space_size: int


def toy_comparison(exact: Any, results: dict[str, Any], validation: Any) -> ToyComparison:
    """The exact truth (``exact.npz``), each proposal's sampler result and ``validation.json``
    compared for the toy figure (equal evaluation budgets)."""
    from genmetrics.io import read_json

    bins, ln_rho, r, extra = read_exact(exact)
    val = read_json(validation)
    m = val["toy"]["modulus"]
    runs = {}
    for kind, p in results.items():
        res = read_result(p)
        r_hat = estimated_r(res.samples, lambda x: digit_sum_rule(x, m), bins.n)
        reached = np.isfinite(res.ln_rho)
        curve = precision_recall_curve(
            res.ln_rho, np.where(reached, np.nan_to_num(r_hat), np.nan), bins
        )
        e = val["proposals"][kind]
        runs[kind] = ToyRun(
            res.ln_rho, r_hat, curve, e["max_abs_log_rho_error"], e["pr_curve_linf_error"]
        )
    return ToyComparison(
        centers=bins.centers,
        ln_rho=ln_rho,
        r=r,
        curve=precision_recall_curve(ln_rho, r, bins),
        runs=runs,
        spec=dict(val["toy"]),
        n_bins=bins.n,
        space_size=int(extra["space_size"]),
    )
