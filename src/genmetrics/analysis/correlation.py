"""Collect score JSONs into the tidy table and correlate metrics across sources."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from genmetrics.io import read_json

COLUMNS = ["dataset", "model", "seed", "reference", "metric", "variant", "name", "value"]


def collect_scores(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per (dataset, source, metric entry, value name).

    ``model`` is the generator name or ``references``; ``seed`` is empty for references;
    ``metric`` is the registered metric, ``variant`` the config entry, ``name`` the value.
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
                    "variant": rec.get("variant", rec["metric"]),
                    "name": name,
                    "value": value,
                }
            )
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["seed"] = df["seed"].astype("Int64")
    return df.sort_values(["dataset", "model", "seed", "variant", "name"]).reset_index(drop=True)


def wide_scores(df: pd.DataFrame) -> pd.DataFrame:
    """Sources as rows, ``variant.name`` (or ``name`` when unambiguous) as columns."""
    d = df.copy()
    d["score"] = d["variant"] + "." + d["name"]
    wide = d.pivot_table(
        index=["dataset", "model", "seed"], columns="score", values="value", dropna=False
    )
    wide.columns = _short_names(list(wide.columns))
    return wide


def _short_names(cols: list[str]) -> list[str]:
    names = [c.split(".", 1)[1] for c in cols]
    return [n if names.count(n) == 1 else c for c, n in zip(cols, names, strict=True)]


def metric_correlation(df: pd.DataFrame, method: str = "spearman") -> pd.DataFrame:
    """Correlation between scores across all scored sources (datasets × models × seeds).

    Columns that are constant or mostly missing are dropped (their correlation is undefined).
    """
    wide = wide_scores(df)
    wide = wide.loc[:, wide.notna().sum() >= 3]
    wide = wide.loc[:, wide.nunique() > 1]
    return wide.corr(method=method)
