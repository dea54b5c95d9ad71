"""How many texts per side each headline value needs for a target interval width, from the
replicates over prompts a run already has (no metric is recomputed).

Measured: per (dataset, model, entry, headline value) the width of each seed's interval
over prompts (``upper − lower`` in ``scores.csv``), averaged over the model's seeds, at
``n`` = its texts per side (``n_candidate``; the references of a prompt go with it where
they are resampled, :mod:`genmetrics.scoring.intervals`).

Extrapolated: the width of a statistic estimated from n independent prompts shrinks as
n^(−1/2) (a mean's standard error s/√n; a smooth statistic's by the delta method; a
distance between sets such as kNN precision or MAUVE also has a bias that changes with n,
which a width does not see), so

    width(n') = width(n)·√(n / n'),   n_needed = ⌈n·(width(n) / target)²⌉.

This is the law, not a fit: a set statistic's interval at n uses the rate its variance
showed between n/4 and n/2 prompts (:mod:`genmetrics.scoring.set_variance`), which
``scores.csv`` does not carry; where that rate is steeper (a distance between two samples of
one distribution), the law overstates the texts needed. The check is
against the N sweep of the P/R study (:func:`genmetrics.analysis.distribution.sweep_n`: R
fresh subsamples of N texts per side): :func:`sweep_widths` turns its spread over repeats at
each N into a width, and :func:`sweep_check` sets the width a run at N predicts at N' beside
the one the sweep measured at N' (tests/test_sample_size.py; the docs' sample-size page gives
the numbers). ``target`` widths (:data:`TARGETS`) are fractions of the value's span
for a bounded scale (0–1: 0.01, 0.02, 0.05; 0–100 and %: ×100) and of |value| otherwise
(Fréchet, perplexity, counts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from genmetrics import GenmetricsError
from genmetrics.analysis.headline import headline_rows
from genmetrics.paths import REFERENCES
from genmetrics.scoring.intervals import RANGES

#: target widths, as fractions of a bounded value's span or of an unbounded value itself
TARGETS = (0.01, 0.02, 0.05)
COLUMNS = ["dataset", "model", "entry", "value", "scale", "point", "n_texts", "n_seeds"]
COLUMNS += ["width", "target", "target_width", "n_needed"]


def predicted_width(width: float, n: int, n_new: int) -> float:
    """The width at ``n_new`` texts of an interval ``width`` wide at ``n``: width·√(n/n_new)."""
    return width * math.sqrt(n / n_new)


def texts_needed(width: float, n: int, target_width: float) -> int | None:
    """⌈n·(width/target_width)²⌉ (module docstring); None without a positive width."""
    if not (math.isfinite(width) and width > 0 and target_width > 0):
        return None
    return math.ceil(n * (width / target_width) ** 2 - 1e-9)


def target_width(scale: str | None, point: float, fraction: float) -> float:
    """``fraction`` of the scale's span where bounded (:data:`~genmetrics.scoring.intervals.
    RANGES`), else of |point|."""
    lo, hi = RANGES.get(scale or "", (-math.inf, math.inf))
    if math.isfinite(lo) and math.isfinite(hi):
        return fraction * (hi - lo)
    return fraction * abs(point)


def sample_sizes(scores: pd.DataFrame, targets: tuple[float, ...] = TARGETS) -> pd.DataFrame:
    """The sample-size table (:data:`COLUMNS`) of the tidy score table (``scores.csv``): one
    row per headline value of a model (the human texts included: their widths say how many
    references a value needs) and target."""
    d = headline_rows(scores)
    d = d[d["lower"].notna() & d["upper"].notna() & d["n_candidate"].notna()]
    rows = []
    keys = ["dataset", "model", "entry", "name"]
    for (dataset, model, entry, name), g in d.groupby(keys, sort=True):
        width = float((g["upper"] - g["lower"]).mean())
        n = int(round(float(g["n_candidate"].astype(float).mean())))
        point = float(g["value"].astype(float).mean())
        scale = g["scale"].iloc[0] if isinstance(g["scale"].iloc[0], str) else None
        head = {"dataset": dataset, "model": model, "entry": entry, "value": name}
        head |= {"scale": scale, "point": point, "n_texts": n, "n_seeds": len(g), "width": width}
        for t in targets:
            tw = target_width(scale, point, t)
            rows.append(
                head | {"target": t, "target_width": tw, "n_needed": texts_needed(width, n, tw)}
            )
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["n_needed"] = out["n_needed"].astype("Int64")
    order = out["model"].eq(REFERENCES)
    return (
        out.assign(_r=order)
        .sort_values(["dataset", "_r", "model", "entry", "value", "target"])
        .drop(columns="_r")
        .reset_index(drop=True)
        if len(out)
        else out
    )


def sweep_widths(
    rows: pd.DataFrame, values: tuple[str, ...], level: float = 0.95, pool: int | None = None
) -> pd.DataFrame:
    """The width an N sweep measured (``rows``: :func:`~genmetrics.analysis.distribution.
    sweep_n`'s, columns ``n``, ``repeat`` and the ``values``): per N and value,
    2·z_((1+level)/2)·sd over the repeats (ddof 1), the width of a normal interval of the value
    over fresh samples of N per side (the percentile interval of near-normal replicates is as
    wide). With ``pool``, the size of the sets the repeats were subsampled from (without
    replacement), the sd is divided by √((pool − N)/(pool − 1)), the finite-population factor
    by which subsamples of one pool vary less than fresh samples. Columns ``n``, ``value``,
    ``repeats``, ``sd``, ``width``."""
    z = float(stats.norm.ppf((1 + level) / 2))
    out = []
    for n, g in rows.groupby("n", sort=True):
        if pool is not None and not n < pool:
            raise GenmetricsError(f"sweep_widths: N = {n} is not below the pool of {pool} texts")
        fpc = 1.0 if pool is None else math.sqrt((pool - n) / (pool - 1))
        for v in values:
            sd = float(np.std(g[v].astype(float), ddof=1)) / fpc
            out.append({"n": int(n), "value": v, "repeats": len(g), "sd": sd, "width": 2 * z * sd})
    return pd.DataFrame(out)


def sweep_check(
    run_widths: Mapping[str, float], n_run: int, measured: pd.DataFrame, n_new: int
) -> pd.DataFrame:
    """Per value: the width of a run at ``n_run`` texts (``run_widths``), the width it
    predicts at ``n_new`` (:func:`predicted_width`), the width the sweep measured there
    (``measured``: :func:`sweep_widths`) and their ratio predicted / measured."""
    rows = []
    at = measured[measured["n"] == n_new].set_index("value")["width"]
    for v, w in run_widths.items():
        pred = predicted_width(w, n_run, n_new)
        rows.append(
            {
                "value": v,
                "width_run": w,
                "n_run": n_run,
                "predicted": pred,
                "n_new": n_new,
                "measured": float(at[v]),
                "ratio": pred / float(at[v]),
            }
        )
    return pd.DataFrame(rows)
