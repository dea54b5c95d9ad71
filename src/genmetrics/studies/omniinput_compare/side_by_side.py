"""The omniinput-compare study's numbers beside OmniInput's (``resources/papers/
omniinput-compare.csv``; :func:`genmetrics.studies.pr_llm.side_by_side.compare`).

* Table 1 (r(z) of two people labelling the same samples, per 0.1-nat NLL bin of [3.5, 4.1)):
  ours is each variance run's bin that holds the paper's bin (``z_low <= lo`` and
  ``hi <= z_high``): the mean of the two annotators' r(z), their min and max as the interval
  ("the two annotators"), n the samples of the bin; a paper bin no bin of ours holds has no
  counterpart.
* Fig. 3 (a, b: AUPR of the smaller and larger model at 25 and 100 tokens; only in the
  figure): ours is each comparison's larger model's AUPR (mean over sampler seeds, with the
  seeds' 95% t interval) against the smaller's. §3.3 states that at 100 tokens the larger
  model's curve is above (direction "positive"); at 25 tokens the curves cross (no direction).
  Fig. 3 (c) (Llama-1 and Llama-2) has no counterpart offline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from genmetrics.analysis.paper_comparison import Match, paper_tables
from genmetrics.studies.pr_llm.side_by_side import Row, compare

__all__ = ["omniinput_compare", "ours_table"]

FIG3 = {
    25: ("Fig. 3 (a)", "GPT-2 small vs medium, 25 tokens"),
    100: ("Fig. 3 (b)", "GPT-2 small vs medium, 100 tokens"),
}


def ours_table(
    compare_tables: Mapping[str, pd.DataFrame], variance_tables: Mapping[str, pd.DataFrame]
) -> pd.DataFrame:
    """One tidy table: ``what = "aupr"`` rows (comparison, model, length, value, lower,
    upper, n = sampler seeds) and ``what = "r"`` rows (variance run, bin, z_low, z_high,
    value = mean of the two annotators' r(z), lower/upper = their min/max, n = samples)."""
    rows = []
    for comp, t in compare_tables.items():
        low = next(c for c in t.columns if c.startswith("aupr_t") and c.endswith("_low"))
        high = low[: -len("_low")] + "_high"
        for r in t.itertuples(index=False):
            rows.append(
                {"what": "aupr", "comparison": comp, "model": r.model, "length": r.length}
                | {"value": r.aupr_mean, "lower": getattr(r, low), "upper": getattr(r, high)}
                | {"n": r.n_seeds, "interval": "95% t over sampler seeds"}
            )
    for var, t in variance_tables.items():
        rcols = [c for c in t.columns if c.startswith("r_")]
        for r in t.itertuples(index=False):
            vals = [getattr(r, c) for c in rcols]
            rows.append(
                {"what": "r", "variance": var, "bin": r.bin, "z_low": r.z_low}
                | {"z_high": r.z_high, "value": sum(vals) / len(vals), "lower": min(vals)}
                | {"upper": max(vals), "n": r.n, "interval": "the two annotators (min, max)"}
            )
    return pd.DataFrame(rows)


def _bin(label: str) -> tuple[float, float]:
    lo, hi = label.strip("[)").split(",")
    return float(lo), float(hi)


def omniinput_compare(
    ours: pd.DataFrame,
    sizes: Mapping[str, float],
    paper: str | pd.DataFrame = "omniinput-compare",
    *,
    nll: Sequence[str] | None = None,
    root=None,
) -> pd.DataFrame:
    """The side-by-side table of :func:`ours_table` (``sizes``: billions of parameters per
    checkpoint, to tell the smaller model from the larger; ``nll``: the variance runs whose z
    is a language model's mean NLL, the only ones Table 1's NLL bins can answer; None: all)."""
    ptab = paper_tables(paper, root)
    rows: list[Row] = []
    r_rows = ours[ours["what"] == "r"] if "what" in ours else ours.iloc[:0]
    if nll is not None:
        r_rows = r_rows[r_rows["variance"].isin(list(nll))]
    for c in ptab[ptab["table"] == "Table 1"].itertuples(index=False):
        cell = (c.table, c.row, c.column)
        lo, hi = _bin(c.row)
        hit = r_rows[(r_rows["z_low"] <= lo + 1e-9) & (r_rows["z_high"] >= hi - 1e-9)]
        if hit.empty:
            rows.append(Row(cell, None, note="no bin of ours holds this NLL range"))
        for h in hit.itertuples(index=False):
            sel = {"what": "r", "variance": h.variance, "bin": h.bin}
            note = f"ours: {h.variance}, bin [{h.z_low:g}, {h.z_high:g})"
            rows.append(Row(cell, Match(cell, sel, note=note)))
    a_rows = ours[ours["what"] == "aupr"] if "what" in ours else ours.iloc[:0]
    for comp, g in a_rows.groupby("comparison", sort=False):
        length = int(g["length"].iloc[0])
        if length not in FIG3 or g["model"].nunique() != 2:
            continue
        table, row = FIG3[length]
        small, large = sorted(g["model"].unique(), key=lambda m: sizes.get(m, 0.0))
        cell = (table, row, "AUPR")
        m = Match(
            cell,
            {"what": "aupr", "comparison": comp, "model": large},
            versus=(cell, {"what": "aupr", "comparison": comp, "model": small}),
            note=f"ours: {comp}, {large} against {small}",
        )
        stated = "positive" if length == 100 else None
        rows.append(Row(cell, m, stated, "§3.3" if stated else ""))
    cell = ("Fig. 3 (c)", "Llama-1 vs Llama-2 7B, 25 tokens", "AUPR")
    rows.append(Row(cell, None, note="no counterpart offline (Llama-1 and Llama-2 7B)"))
    return compare(ptab, ours, rows, root=root)
