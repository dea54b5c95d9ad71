"""The tidy score table ``results/scores.csv``: the one place it is built, written and read.

Conventions:

* one row per (dataset, source, metric entry, value name), columns :data:`COLUMNS`, then
  :data:`EXTRA_COLUMNS`: the value's ``scale`` as its metric registers it (this table keeps
  each metric's own numbers, e.g. rep-n in %) and the texts it was computed on
  (``n_candidate``, ``n_reference``: :mod:`genmetrics.analysis.units`);
* ``model`` is the generator name or :data:`genmetrics.metrics.kinds.REFERENCES` (the human texts);
  ``seed`` is empty for the references (pandas ``Int64``); ``reference`` is the reference set
  the source was scored against (empty for reference-free metrics);
* ``metric`` is the registered metric, ``entry`` the config entry (``metrics.<entry>``; a
  record without one, e.g. from ``genmetrics score``, counts as the entry named after its
  metric), ``name`` the value;
* rows sorted by dataset, model, seed, entry, name;
* then the value's interval over its prompts (:data:`INTERVAL_COLUMNS`: ``lower``, ``upper``,
  ``level``, ``resamples``, ``scheme``: how its prompts were drawn, ``half`` or
  ``replacement``, and ``interval``: ``prompts``, or the record's reason for none);
  the record's replicates are not in the table: :func:`collect_scores` hands them to the seed
  summary, whose interval is over prompts and seeds (:func:`summary_table`);
* last what the record warns of (:data:`WARNING_COLUMNS`): ``truncated``, the largest share
  of a role's texts that a model cut at its maximum length (:func:`truncated_share`; empty
  where the record does not say), and ``warnings``, the record's warnings joined by
  :data:`WARNING_SEPARATOR` (zero k-NN radii, identical histograms, a rank-deficient
  covariance, a value not finite, texts truncated; empty: none).

:func:`write_aggregates` writes it with everything the aggregate rule derives from it: the
seed summary (:func:`summary_table`) and the headline table
(:mod:`genmetrics.analysis.headline`), each file atomically. Both derived tables show values on
the tables' one scale convention (a proportion 0–1: :mod:`genmetrics.analysis.units`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genmetrics.analysis.units import (
    INTERVAL_COLUMNS,
    OVER_PROMPTS,
    SIZE_COLUMNS,
    WARNING_SEPARATOR,
    Replicates,
    on_table_scale,
    registered_scale,
    row_key,
    seed_intervals,
    sizes,
)
from genmetrics.io import read_json, write_csv, write_text

#: the columns every reader of the tidy table needs
COLUMNS = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]
#: what the record warns of: the largest share of a role's texts truncated, and its warnings
WARNING_COLUMNS = ["truncated", "warnings"]
#: then the value's registered scale, the texts it was computed on, its interval and warnings
EXTRA_COLUMNS = ["scale", *SIZE_COLUMNS, *INTERVAL_COLUMNS, *WARNING_COLUMNS]

#: the seed summary (``results/scores_summary.csv``)
SUMMARY_COLUMNS = ["dataset", "model", "reference", "metric", "entry", "name", "scale"]
SUMMARY_COLUMNS += ["mean", "std", "n_seeds", *SIZE_COLUMNS, *INTERVAL_COLUMNS]
_SEEDED = re.compile(r"(.+)/seed(\d+)")
_INT_COLUMNS = ["seed", *SIZE_COLUMNS, "resamples"]
_FLOAT_COLUMNS = ["lower", "upper", "level", "truncated"]


def _interval(rec: dict, name: str) -> tuple[dict, np.ndarray | None, int]:
    """The interval columns of value ``name`` of a record, its replicates and their seed."""
    iv = rec.get("interval")
    if not isinstance(iv, dict):
        return {}, None, 0
    if iv.get("method") is None:
        return {"interval": iv.get("reason") or "not computed"}, None, 0
    scheme = iv.get("scheme") or _scheme_of(iv["method"])
    if name in iv.get("reasons", {}):  # no bounds: they would not hold the value
        return {"scheme": scheme, "interval": iv["reasons"][name]}, None, 0
    reps = iv.get("replicates", {}).get(name)
    cols = {
        "lower": iv["lower"].get(name),
        "upper": iv["upper"].get(name),
        "level": iv.get("level"),
        "resamples": iv.get("resamples"),
        "scheme": scheme,
        "interval": OVER_PROMPTS,
    }
    arr = None if reps is None else np.array([np.nan if r is None else r for r in reps], float)
    return cols, arr, int(iv.get("seed", 0))


def _scheme_of(method: str) -> str:
    """The scheme of a record written before the interval stated it, from its ``method``."""
    return "half" if method.startswith("half-sample") else "replacement"


def collect_scores(
    paths: Iterable[str | Path | Mapping[str, Any]], replicates: Replicates | None = None
) -> pd.DataFrame:
    """The tidy table from score records (JSON files of :func:`genmetrics.scoring.from_files.record`);
    ``replicates``, when given, is filled with each row's replicates over prompts (keyed by
    the row's dataset, model, seed, reference, metric, entry, name)."""
    rows = []
    for p in paths:
        rec = p if isinstance(p, Mapping) else read_json(p)
        src = rec["source"]
        m = _SEEDED.fullmatch(src)
        model, seed = (m.group(1), int(m.group(2))) if m else (src, None)
        n_candidate, n_reference = sizes(rec.get("n"))
        for name, value in rec["values"].items():
            row = {
                "dataset": rec["dataset"],
                "model": model,
                "seed": seed,
                "reference": rec.get("reference"),
                "metric": rec["metric"],
                "entry": rec.get("entry", rec["metric"]),
                "name": name,
                "value": value,
                "scale": registered_scale(rec["metric"], name),
                "n_candidate": n_candidate,
                "n_reference": n_reference,
                "truncated": truncated_share(rec),
                "warnings": WARNING_SEPARATOR.join(rec.get("warnings") or []) or None,
            }
            cols, reps, draw_seed = _interval(rec, name)
            rows.append(row | cols)
            if replicates is not None and reps is not None:
                replicates[row_key(row)] = (reps, draw_seed)
    df = pd.DataFrame(rows, columns=COLUMNS + EXTRA_COLUMNS)
    for c in _INT_COLUMNS:
        df[c] = df[c].astype("Int64")
    for c in _FLOAT_COLUMNS:
        df[c] = df[c].astype(float)
    return df.sort_values(["dataset", "model", "seed", "entry", "name"]).reset_index(drop=True)


def truncated_share(rec: dict) -> float | None:
    """The largest share of a role's texts that a model cut (the record's ``truncation``:
    a featurizer's ``max_tokens``, or the metric's own model); None where nothing says."""
    shares = [
        t["truncated"] / t["texts"]
        for t in (rec.get("truncation") or {}).values()
        if isinstance(t, dict) and t.get("texts")
    ]
    return max(shares) if shares else None


def read_scores(path: str | Path) -> pd.DataFrame:
    """``scores.csv`` as :func:`collect_scores` built it (``seed``, the sizes and
    ``resamples`` as ``Int64``); a table written before the sizes, scale or intervals has
    them empty."""
    df = pd.read_csv(path, dtype=dict.fromkeys(_INT_COLUMNS, "Int64"))
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not a tidy score table (no column(s) {missing})")
    for c in EXTRA_COLUMNS:
        if c not in df.columns:
            dtype = "Int64" if c in _INT_COLUMNS else float if c in _FLOAT_COLUMNS else object
            df[c] = pd.Series(pd.NA if dtype == "Int64" else None, index=df.index, dtype=dtype)
    return df[COLUMNS + EXTRA_COLUMNS]


def seed_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (ddof=1) and number of seeds per (dataset, model, metric, entry, name)."""
    keys = ["dataset", "model", "reference", "metric", "entry", "name"]
    d = df.copy()
    d["reference"] = d["reference"].fillna("")
    g = d.groupby(keys, sort=True)["value"]
    return g.agg(mean="mean", std="std", n_seeds="count").reset_index()


def summary_table(df: pd.DataFrame, intervals: pd.DataFrame | None = None) -> pd.DataFrame:
    """``results/scores_summary.csv``: :func:`seed_summary` of every value on the tables'
    scale (a proportion 0–1, the ``scale`` column; :mod:`genmetrics.analysis.units`) with the
    fewest texts any seed was computed on (``n_candidate``, ``n_reference``) and the interval
    over prompts and seeds (``intervals``:
    :func:`~genmetrics.analysis.units.seed_intervals`, by default without the replicates:
    then only a single seed's). Columns :data:`SUMMARY_COLUMNS`."""
    keys = ["dataset", "model", "reference", "metric", "entry", "name"]
    out = seed_summary(df)
    if out.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    out = out.merge(seed_intervals(df) if intervals is None else intervals, on=keys, how="left")
    out, _ = on_table_scale(out, ["mean", "std", "lower", "upper"])
    d = df.assign(reference=df["reference"].fillna(""))
    for c in SIZE_COLUMNS:
        col = d[c] if c in d.columns else pd.Series(pd.NA, index=d.index)
        d[c] = pd.to_numeric(col, errors="coerce")
    n = d.groupby(keys, sort=True)[SIZE_COLUMNS].min().reset_index()
    out = out.merge(n, on=keys, how="left")
    for c in SIZE_COLUMNS:
        out[c] = out[c].round().astype("Int64")
    return out[SUMMARY_COLUMNS]


def write_aggregates(
    records: Iterable[str | Path],
    scores: str | Path,
    summary: str | Path,
    headline: str | Path,
    headline_markdown: str | Path,
) -> pd.DataFrame:
    """Write the tidy table (``scores``), its seed summary and the headline table (CSV, long
    form, and markdown) from score record files; returns the tidy table."""
    from genmetrics.analysis.headline import headline_markdown as markdown
    from genmetrics.analysis.headline import headline_scores, headline_table

    replicates: Replicates = {}
    df = collect_scores(records, replicates)
    write_csv(scores, df)
    intervals = seed_intervals(df, replicates)  # over prompts and seeds
    write_csv(summary, summary_table(df, intervals))
    write_csv(headline, headline_scores(df, intervals))
    table = headline_table(df, intervals)
    write_text(headline_markdown, markdown(table, full_table=Path(scores).name))
    return df
