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

The half-sample replicates cannot tell the exponent apart from −1/2 (they are rescaled to
n from draws of n/2 under that very law), so this is the law, not a fit; the check against
widths measured at twice the texts is tests/test_sample_size.py (the docs' sample-size page
gives its numbers). ``target`` widths (:data:`TARGETS`) are fractions of the value's span
for a bounded scale (0–1: 0.01, 0.02, 0.05; 0–100 and %: ×100) and of |value| otherwise
(Fréchet, perplexity, counts).
"""

from __future__ import annotations

import math

import pandas as pd

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
