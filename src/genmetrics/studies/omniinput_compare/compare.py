"""OmniInput model comparison (Liu et al. §3.3): several models' PR curves at one sequence
length, with AUPR summarised over sampler seeds.

Each model is sampled at the same number L of tokens of its own tokenizer (the models'
vocabularies differ, so their input spaces V^L differ; the comparison is per model over its own
Ω), and every model's samples are scored by the same annotator.

* **AUPR over seeds** (:func:`seed_summary`): mean, sample standard deviation, min–max, and a
  two-sided t interval of the mean, mean ± t_{(1+level)/2, n−1} · s / √n (NaN for one seed).
* **Mean curve** (:func:`mean_curve`): the runs of one model share its bins, so their curves
  have the same thresholds λ; at each λ: mean precision and mean recall over the seeds where
  they are defined, and the min–max band of precision over those seeds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError


def seed_summary(values: Sequence[float], level: float = 0.95) -> dict[str, float]:
    """Mean, sd (n−1), min, max and the t interval (``ci_low``, ``ci_high``) of ``values``
    (one per seed; NaN values, e.g. a run whose annotator accepted nothing, are dropped and
    counted in ``n_nan``)."""
    from scipy import stats

    v = np.asarray(values, np.float64)
    ok = v[np.isfinite(v)]
    n = len(ok)
    out = {"n": n, "n_nan": int(len(v) - n)}
    if n == 0:
        nan = math.nan
        return {
            **out,
            "mean": nan,
            "sd": nan,
            "min": nan,
            "max": nan,
            "ci_low": nan,
            "ci_high": nan,
        }
    mean = float(ok.mean())
    sd = float(ok.std(ddof=1)) if n > 1 else math.nan
    half = float(stats.t.ppf((1 + level) / 2, n - 1) * sd / math.sqrt(n)) if n > 1 else math.nan
    return {
        **out,
        "mean": mean,
        "sd": sd,
        "min": float(ok.min()),
        "max": float(ok.max()),
        "ci_low": mean - half,
        "ci_high": mean + half,
    }


def _curve_array(rec: Mapping[str, Any], key: str) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in rec["extras"]["curve"][key]], float)


def mean_curve(records: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """The mean PR curve of one model's runs (``omniinput`` score records with the same
    bins): per threshold, mean precision/recall and min/max precision over the seeds where
    defined (NaN where none is)."""
    lams = [np.asarray(r["extras"]["curve"]["lambda"], float) for r in records]
    if not records or any(
        lam.shape != lams[0].shape or not np.allclose(lam, lams[0]) for lam in lams
    ):
        raise GenmetricsError("mean_curve: the runs must share their bins (the same thresholds)")
    p = np.stack([_curve_array(r, "precision") for r in records])
    rec = np.stack([_curve_array(r, "recall") for r in records])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN thresholds stay NaN
        return {
            "lambda": lams[0],
            "precision": np.nanmean(p, axis=0),
            "precision_min": np.nanmin(p, axis=0),
            "precision_max": np.nanmax(p, axis=0),
            "recall": np.nanmean(rec, axis=0),
        }


def comparison_rows(
    settings: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One row per model of a comparison: model, length, annotator, AUPR summary over seeds.

    ``settings`` is ``PLAN.omniinput.compare_settings``: per config run its checkpoint, length,
    annotator and ``runs`` {seed: run name}; ``records`` maps run names to score records."""
    level = settings["interval"]
    rows = []
    for group, g in settings["runs"].items():
        seeds = sorted(g["runs"], key=int)
        auprs = [records[g["runs"][s]]["values"]["aupr"] for s in seeds]
        s = seed_summary(auprs, level)
        a = g["annotator"]
        rows.append(
            {
                "run": group,
                "model": g["checkpoint"],
                "length": g["length"],
                "annotator": f"{a['kind']}:{a.get('checkpoint') or a.get('rule') or a.get('path')}",
                "aupr_mean": s["mean"],
                "aupr_sd": s["sd"],
                "aupr_min": s["min"],
                "aupr_max": s["max"],
                f"aupr_t{round(level * 100)}_low": s["ci_low"],
                f"aupr_t{round(level * 100)}_high": s["ci_high"],
                "n_seeds": s["n"],
                "seeds": " ".join(seeds),
                "aupr_per_seed": " ".join(f"{v:.4f}" for v in auprs),
            }
        )
    return rows
