"""Collect score JSONs into the tidy table and correlate metrics across sources."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from genmetrics.io import read_json

COLUMNS = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]


def collect_scores(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per (dataset, source, metric entry, value name).

    ``model`` is the generator name or ``references``; ``seed`` is empty for references;
    ``metric`` is the registered metric, ``entry`` the config entry (``metrics.<entry>``; a
    record without one, e.g. from ``genmetrics score``, counts as the entry named after its
    metric), ``name`` the value.
    """
    rows = []
    for p in paths:
        rec = read_json(p)
        src = rec["source"]
        m = re.fullmatch(r"(.+)/seed(\d+)", src)
        model, seed = (m.group(1), int(m.group(2))) if m else (src, None)
        for name, value in rec["values"].items():
            rows.append(
                {
                    "dataset": rec["dataset"],
                    "model": model,
                    "seed": seed,
                    "reference": rec.get("reference"),
                    "metric": rec["metric"],
                    "entry": rec.get("entry", rec["metric"]),
                    "name": name,
                    "value": value,
                }
            )
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["seed"] = df["seed"].astype("Int64")
    return df.sort_values(["dataset", "model", "seed", "entry", "name"]).reset_index(drop=True)


def wide_scores(df: pd.DataFrame) -> pd.DataFrame:
    """One row per scored source (dataset, model, seed), one column per score.

    Columns are named by the value (``precision``) or, where two metric entries share a value
    name, by the entry (``pos_compression_ratio``) or ``entry.value``.
    """
    d = df.copy()
    d["seed"] = pd.to_numeric(d["seed"]).astype("Int64").astype("string").fillna("")
    d["score"] = d["entry"] + "\t" + d["name"]
    wide = d.pivot_table(index=["dataset", "model", "seed"], columns="score", values="value")
    wide = wide.reindex(columns=sorted(wide.columns, key=_column_order(d)))
    wide.columns = _short_names(list(wide.columns))
    return wide


def _column_order(d: pd.DataFrame):
    first = {v: i for i, v in enumerate(dict.fromkeys(d["entry"]))}
    return lambda c: (first.get(c.split("\t")[0], 0), c)


def _short_names(cols: list[str]) -> list[str]:
    pairs = [c.split("\t", 1) for c in cols]
    names = [n for _, n in pairs]
    clashing = [(v, n) for v, n in pairs if names.count(n) > 1]
    per_entry = pd.Series([v for v, _ in clashing], dtype=object).value_counts()
    out = []
    for v, n in pairs:
        if names.count(n) == 1:
            out.append(n)
        else:
            out.append(v if per_entry[v] == 1 else f"{v}.{n}")
    return out


# Values shown in the correlation heatmap for metrics with several; others show their first
# registered value. Sub-scores (ROUGE precision/recall, per-n n-gram diversity, *_std, lengths)
# stay in scores.csv but would make the heatmap unreadable.
HEADLINE = {
    "precision_recall": ("precision", "recall", "density", "coverage"),
    "prd": ("f8", "f1_8"),
    "mauve": ("mauve",),
    "perplexity": ("perplexity",),
    "distinct_n": ("distinct_2", "distinct_4"),
    "rep_n": ("rep_2", "diversity"),
    "rouge": ("rouge1", "rougeL"),
    "face": ("so", "corr", "emd"),
}


def headline(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of the headline values of each metric (see ``HEADLINE``)."""
    from genmetrics.metrics import all_metrics

    known = all_metrics()
    keep = []
    for metric, name in zip(df["metric"], df["name"], strict=True):
        names = HEADLINE.get(metric)
        if names is None:
            names = list(known[metric].values)[:1] if metric in known else (name,)
        keep.append(name in names)
    return df[keep]


def metric_correlation(
    df: pd.DataFrame, method: str = "spearman", headline_only: bool = True
) -> pd.DataFrame:
    """Correlation between scores across all scored sources (datasets × models × seeds).

    Columns that are constant or mostly missing are dropped (their correlation is undefined).
    """
    wide = wide_scores(headline(df) if headline_only else df)
    wide = wide.loc[:, wide.notna().sum() >= 3]
    wide = wide.loc[:, wide.nunique() > 1]
    return wide.corr(method=method)


def seed_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (ddof=1) and number of seeds per (dataset, model, metric, entry, name)."""
    keys = ["dataset", "model", "reference", "metric", "entry", "name"]
    d = df.copy()
    d["reference"] = d["reference"].fillna("")
    g = d.groupby(keys, sort=True)["value"]
    out = g.agg(mean="mean", std="std", n_seeds="count").reset_index()
    return out


def length_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per source: the headline scores plus ``mean_words``, the texts' mean length
    (the largest one reported, i.e. before any length control)."""
    wide = wide_scores(headline(df[df["name"] != "mean_words"]))
    lengths = df[df["name"] == "mean_words"].copy()
    if lengths.empty:
        return wide.iloc[:, :0]
    lengths["seed"] = pd.to_numeric(lengths["seed"]).astype("Int64").astype("string").fillna("")
    mean = lengths.groupby(["dataset", "model", "seed"])["value"].max()
    return wide.join(mean.rename("mean_words"), how="inner")
