"""Paired model-against-model differences of every headline value, per dataset, from the
score records' stored replicates over prompts (no metric is recomputed).

Pairing. Every score record's interval draws its prompts from ``default_rng(seed)`` on the
prompts sorted by id (:mod:`genmetrics.scoring.intervals`), and records the digest of what
it drew (``interval.draws``: the prompt ids and every draw's indices). Two models whose
records carry the same digest resampled the same prompts in replicate b, so replicate b of
their difference is the difference of their replicates b: the prompt-to-prompt variance
both share cancels. Records whose digests differ (other prompts, another seed, scheme or
number of resamples) or that carry none get no interval and no p-value (``note`` says why).

Seeds. A model's value is the mean over its seeds (the headline's); its replicate b is the
mean of replicate b over its S seeds drawn with replacement
(:func:`genmetrics.analysis.statistics.seed_bootstrap`, seeded by the records' seed), so two
models with as many seeds draw the same seed positions in replicate b, and the seed variance
is in the interval as in the headline's.

For models A, B with values a, b and paired replicates d_1..d_B (replicate of A minus
replicate of B):

* ``difference`` = a − b (on the metric's own scale, as ``scores.csv``);
* ``lower``, ``upper``: the t interval of the test below at the records' level,
  a − b ∓ t_ν,(1+level)/2 · s_d (:func:`t_interval`; Tukey's jackknife interval), so that it
  excludes 0 exactly where p < 1 − level. Not the percentile interval of the d_b (the
  scores' own): that one is about ±1.96·s_d wide at 95 %, the normal width, and covered the
  true difference of a mean over 30 prompts in only 93 % of the simulation's datasets (the
  t interval: 94–96 %);
* ``p``: two-sided p-value of "no difference", the paired t-test on the replicates:
  T = (a − b) / s_d, s_d the standard deviation (ddof 1) of the d_b, and p = 2·P(t_ν > |T|),
  t_ν Student's t with ν = 1 / (1/(U − 1) + 1/(B − 1)) degrees of freedom (U prompts, B
  resamples): :func:`t_p`. For a value that is a mean over prompts the half-sample replicates'
  variance is s²/U (:mod:`genmetrics.scoring.intervals`), so T is Student's (1908) paired t
  statistic, t-distributed with U − 1 degrees of freedom under normal prompt effects; for
  any other statistic the replicates are a delete-d jackknife over the U prompts, whose t
  statistic Tukey (1958, Ann. Math. Stat. 29: 614) refers to t with U − 1 degrees of freedom.
  s_d is itself estimated from B replicates, a second chi-square factor in s_d²; ν combines
  both as Satterthwaite (1946, Biometrics Bulletin 2: 110–114) combines variance estimates
  (relative variance 2/(U − 1) + 2/(B − 1)). At U = 30 and B = 200, ν = 25.3. The normal
  reference (the bootstrap z-test, p = 2·Φ(−|T|), :func:`z_p`) ignores both, and in the tail a
  Holm correction reads it is anti-conservative: at the smallest Holm threshold of 15 tests,
  0.05/15, P(|t_25.3| > 2.94) is 0.0070, twice the nominal 0.0033. In the simulation (the
  docs' paired page) the z-test's p fell below 0.05/15 in 0.64 % of the null tests of the
  values whose replicates have the right spread (ROUGE-1, MATTR, coherence), this p in 0.31 %.
  With several seeds the seed level's own degrees of freedom are not counted in ν. The
  percentile-inversion p of Koehn (2004), p = min(1, 2·(1 + #{d_b ≤ 0 or ≥ 0, the rarer})
  /(B + 1)), cannot go below 2/(B + 1) (0.01 at the default 200 resamples), too coarse to
  survive a Holm correction over the tens of values and pairs of a dataset; :func:`percentile_p`
  computes it for comparison;
* ``p_holm``, ``p_bh``: Holm's step-down (family-wise error) and Benjamini–Hochberg's step-up
  (false discovery rate) adjustments of ``p`` over every row of the dataset with a p-value
  (all pairs, entries and values): Holm p_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)); BH
  p_(i) = min_{j ≥ i} min(1, m·p_(j)/j), the p sorted ascending (as
  ``statsmodels.stats.multitest.multipletests`` ``holm`` and ``fdr_bh``);
* ``n_prompts``: the prompts both were resampled over;
* ``direction``: which way the value is better (its registration), ``better``: the model
  that is better where ``p_holm`` < :data:`ALPHA` (else empty).

Every unordered pair appears once, A before B in the models' sorted order; the human texts
(model ``references``) are left out: the question is which model is better.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from genmetrics import GenmetricsError
from genmetrics.analysis.aggregate import _SEEDED, collect_scores
from genmetrics.analysis.headline import headline_rows
from genmetrics.analysis.statistics import seed_bootstrap
from genmetrics.analysis.units import Replicates, row_key
from genmetrics.io import read_json
from genmetrics.paths import REFERENCES

COLUMNS = ["dataset", "entry", "value", "model_a", "model_b", "difference", "lower", "upper"]
COLUMNS += ["p", "p_holm", "p_bh", "n_prompts", "note", "direction", "better"]
#: rows where both models have an interval and the adjusted p is below this are significant
ALPHA = 0.05


def holm(p: Iterable[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN, left out of m)."""
    return _adjust(p, "holm")


def benjamini_hochberg(p: Iterable[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (NaN stays NaN, left out of m)."""
    return _adjust(p, "bh")


def _adjust(p: Iterable[float], how: str) -> np.ndarray:
    p = np.asarray(list(p), dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if not m:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    s = p[order]
    rank = np.arange(1, m + 1)
    if how == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * s))
    else:
        adj = np.minimum.accumulate(np.minimum(1.0, m * s / rank)[::-1])[::-1]
    out[order] = adj
    return out


def _studentized(difference: float, d: np.ndarray) -> tuple[float, int]:
    """(|difference| / sd(d), the number of finite d_b); NaN where sd(d) is 0 or unknown,
    0 where the difference and the spread are both 0."""
    d = d[np.isfinite(d)]
    if len(d) < 2 or not math.isfinite(difference):
        return math.nan, len(d)
    s = float(np.std(d, ddof=1))
    if s == 0.0:
        return (0.0 if difference == 0.0 else math.nan), len(d)
    return abs(difference) / s, len(d)


def degrees_of_freedom(n_units: int, resamples: int) -> float:
    """ν = 1 / (1/(U − 1) + 1/(B − 1)): the prompts' and the resamples' share of the
    uncertainty of s_d² combined (Satterthwaite; module docstring)."""
    return 1.0 / (1.0 / (n_units - 1) + 1.0 / (resamples - 1))


def t_p(difference: float, d: np.ndarray, n_units: int) -> float:
    """p = 2·P(t_ν > |difference| / sd(d)), ν = :func:`degrees_of_freedom` of ``n_units``
    prompts and the finite d_b (module docstring); NaN where sd(d) is 0 or unknown or fewer
    than 2 prompts, 1 where the difference and the spread are both 0."""
    t, b = _studentized(difference, d)
    if math.isnan(t) or n_units < 2 or b < 2:
        return math.nan
    return float(2.0 * stats.t.sf(t, degrees_of_freedom(n_units, b)))


def t_interval(difference: float, d: np.ndarray, n_units: int, level: float) -> tuple[float, float]:
    """difference ∓ t_ν,(1+level)/2 · sd(d), ν = :func:`degrees_of_freedom` of ``n_units``
    prompts and the finite d_b (module docstring); NaN where fewer than 2 d_b or 2 prompts."""
    f = d[np.isfinite(d)]
    if len(f) < 2 or n_units < 2 or not math.isfinite(difference):
        return math.nan, math.nan
    half = float(stats.t.ppf((1 + level) / 2, degrees_of_freedom(n_units, len(f))))
    half *= float(np.std(f, ddof=1))
    return difference - half, difference + half


def z_p(difference: float, d: np.ndarray) -> float:
    """The bootstrap z-test's p = 2·Φ(−|difference| / sd(d)), for comparison (module
    docstring: anti-conservative in the tail); NaN and 1 as :func:`t_p`."""
    t, _ = _studentized(difference, d)
    return math.nan if math.isnan(t) else math.erfc(t / math.sqrt(2.0))


def percentile_p(d: np.ndarray) -> float:
    """Koehn's paired-bootstrap p: min(1, 2·(1 + min(#{d_b ≤ 0}, #{d_b ≥ 0}))/(B + 1))."""
    d = d[np.isfinite(d)]
    if not len(d):
        return math.nan
    rarer = min(int((d <= 0).sum()), int((d >= 0).sum()))
    return min(1.0, 2.0 * (1 + rarer) / (len(d) + 1))


def _draws(records: Iterable[Mapping[str, Any]]) -> dict[tuple, tuple[str | None, int | None]]:
    """(dataset, model, seed, entry) → the record's draws digest and number of prompts."""
    out = {}
    for rec in records:
        m = _SEEDED.fullmatch(rec["source"])
        model, seed = (m.group(1), int(m.group(2))) if m else (rec["source"], None)
        iv = rec.get("interval") if isinstance(rec.get("interval"), Mapping) else {}
        key = (rec["dataset"], model, seed, rec.get("entry", rec["metric"]))
        out[key] = (iv.get("draws"), iv.get("n_units"))
    return out


def _side(g: pd.DataFrame, replicates: Replicates, draws: Mapping[tuple, tuple]) -> dict:
    """One model's value (mean over seeds), its replicates over prompts and seeds, the draw
    digests of its seeds and the prompts, or why it has no replicates."""
    rows = g.to_dict("records")
    point = float(np.mean([float(r["value"]) for r in rows]))
    reps = [replicates.get(row_key(r)) for r in rows]
    seeds = [None if pd.isna(r["seed"]) else int(r["seed"]) for r in rows]
    dig = [
        draws.get((r["dataset"], r["model"], s, r["entry"]), (None, None))
        for r, s in zip(rows, seeds, strict=True)
    ]
    side = {"point": point, "digests": {d[0] for d in dig}, "n": dig[0][1], "level": None}
    if any(r is None for r in reps):
        reasons = [r["interval"] for r in rows if isinstance(r.get("interval"), str)]
        side["reason"] = (reasons[0] if reasons else "no replicates") + f" ({rows[0]['model']})"
        return side
    if len({len(r[0]) for r in reps}) > 1:
        side["reason"] = f"its seeds drew different numbers of resamples ({rows[0]['model']})"
        return side
    level = float(rows[0]["level"])
    side["reps"] = seed_bootstrap(np.vstack([r[0] for r in reps]), level, min(r[1] for r in reps))[
        0
    ]
    side["level"] = level
    return side


def _pair(a: dict, b: dict) -> dict[str, Any]:
    out: dict[str, Any] = {"difference": a["point"] - b["point"], "n_prompts": a["n"]}
    why = a.get("reason") or b.get("reason")
    digests = a["digests"] | b["digests"]
    if not why and None in digests:
        why = "the records do not say which prompts their replicates drew (scored before draws were recorded)"
    elif not why and len(digests) > 1:
        why = "the two models' replicates were not drawn on the same prompts (draws differ)"
    elif not why and len(a["reps"]) != len(b["reps"]):
        why = "the two models' records drew different numbers of resamples"
    if why:
        return out | {"note": f"not computed: {why.removeprefix('not computed: ')}"}
    d = a["reps"] - b["reps"]
    n = a["n"] or 0
    low, high = t_interval(out["difference"], d, n, a["level"])
    return out | {
        "lower": low,
        "upper": high,
        "p": t_p(out["difference"], d, n),
        "note": "",
    }


def paired_differences(
    records: Iterable[str | Path | Mapping[str, Any]], models: Iterable[str] | None = None
) -> pd.DataFrame:
    """The paired table (:data:`COLUMNS`) of score records (paths or loaded records), every
    pair of models (only ``models`` if given) per (dataset, entry, headline value), with the
    p-values adjusted per dataset (module docstring)."""
    recs = [r if isinstance(r, Mapping) else read_json(r) for r in records]
    replicates: Replicates = {}
    df = collect_scores(recs, replicates)
    draws = _draws(recs)
    d = headline_rows(df)
    d = d[d["model"] != REFERENCES]
    if models is not None:
        d = d[d["model"].isin(list(models))]
    rows = []
    for (dataset, entry, name), g in d.groupby(["dataset", "entry", "name"], sort=True):
        direction = _direction(g["metric"].iloc[0], name)
        sides = {m: _side(gm, replicates, draws) for m, gm in g.groupby("model", sort=True)}
        names = sorted(sides)
        for i, ma in enumerate(names):
            for mb in names[i + 1 :]:
                head = {"dataset": dataset, "entry": entry, "value": name, "direction": direction}
                rows.append(head | {"model_a": ma, "model_b": mb} | _pair(sides[ma], sides[mb]))
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["p_holm"] = out["p_bh"] = np.nan
    for _, idx in out.groupby("dataset").groups.items():
        out.loc[idx, "p_holm"] = holm(out.loc[idx, "p"])
        out.loc[idx, "p_bh"] = benjamini_hochberg(out.loc[idx, "p"])
    out["better"] = [_better(r) for r in out.to_dict("records")]
    out["n_prompts"] = out["n_prompts"].astype("Int64")
    for c in ("difference", "lower", "upper", "p", "p_holm", "p_bh"):
        out[c] = out[c].astype(float)
    return out.reset_index(drop=True)


def _direction(metric: str, name: str) -> str:
    from genmetrics.metrics import all_metrics

    m = all_metrics().get(metric)
    return (m.values.get(name) if m is not None else None) or ""


def _better(row: Mapping[str, Any], adjusted: str = "p_holm") -> str:
    """The model better on ``row`` where its ``adjusted`` p is below :data:`ALPHA`."""
    if not (row[adjusted] < ALPHA) or row["direction"] not in ("higher", "lower"):
        return ""
    a_higher = row["difference"] > 0
    return row["model_a"] if a_higher == (row["direction"] == "higher") else row["model_b"]


def wins(
    table: pd.DataFrame, dataset: str, adjusted: str = "p_holm"
) -> tuple[list[str], np.ndarray, int]:
    """The models of ``dataset`` in the paired table, the matrix W (W[i, j]: the values on
    which model i is significantly better than model j, its ``adjusted`` p — ``p_holm`` or
    ``p_bh`` — below :data:`ALPHA`) and the number of values tested per pair (the most)."""
    t = table[table["dataset"] == dataset]
    models = sorted(set(t["model_a"]) | set(t["model_b"]))
    at = {m: i for i, m in enumerate(models)}
    w = np.zeros((len(models), len(models)), dtype=int)
    for r in t.to_dict("records"):
        better = _better(r, adjusted)
        if better:
            loser = r["model_b"] if better == r["model_a"] else r["model_a"]
            w[at[better], at[loser]] += 1
    tested = t.dropna(subset=["p"]).groupby(["model_a", "model_b"]).size()
    return models, w, int(tested.max()) if len(tested) else 0


_RECORD_KEYS = ("metric", "dataset", "source", "values")


def compare_records(paths: Iterable[str | Path]) -> pd.DataFrame:
    """:func:`paired_differences` of score record files given by hand (``genmetrics
    compare``): each must be a score record (an error names the file and the missing key);
    at least two models among them."""
    recs = []
    for p in paths:
        rec = read_json(p)
        missing = [k for k in _RECORD_KEYS if not isinstance(rec, Mapping) or k not in rec]
        if missing:
            raise GenmetricsError(f"{p}: not a score record (no {', '.join(missing)})")
        recs.append(rec)
    models = {_SEEDED.sub(r"\1", r["source"]) for r in recs} - {REFERENCES}
    if len(models) < 2:
        raise GenmetricsError(
            f"compare: the records hold {len(models)} model(s) ({', '.join(sorted(models))}); "
            "give the records of at least two models"
        )
    return paired_differences(recs)
