"""The tidy score table ``results/scores.csv``: the one place it is built, written and read.

Conventions:

* one row per (dataset, source, metric entry, value name), columns :data:`COLUMNS`;
* ``model`` is the generator name or :data:`genmetrics.kinds.REFERENCES` (the human texts);
  ``seed`` is empty for the references (pandas ``Int64``); ``reference`` is the reference set
  the source was scored against (empty for reference-free metrics);
* ``metric`` is the registered metric, ``entry`` the config entry (``metrics.<entry>``; a
  record without one, e.g. from ``genmetrics score``, counts as the entry named after its
  metric), ``name`` the value;
* rows sorted by dataset, model, seed, entry, name.

:func:`write_aggregates` writes it with everything the aggregate rule derives from it: the
seed summary (:func:`seed_summary`) and the headline table
(:mod:`genmetrics.analysis.headline`), each file atomically.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from genmetrics.io import atomic_path, read_json, write_text

COLUMNS = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]
_SEEDED = re.compile(r"(.+)/seed(\d+)")


def collect_scores(paths: Iterable[str | Path]) -> pd.DataFrame:
    """The tidy table from score records (JSON files of :func:`genmetrics.scoring.record`)."""
    rows = []
    for p in paths:
        rec = read_json(p)
        src = rec["source"]
        m = _SEEDED.fullmatch(src)
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


def read_scores(path: str | Path) -> pd.DataFrame:
    """``scores.csv`` as :func:`collect_scores` built it (``seed`` as ``Int64``)."""
    df = pd.read_csv(path, dtype={"seed": "Int64"})
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not a tidy score table (no column(s) {missing})")
    return df[COLUMNS]


def seed_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (ddof=1) and number of seeds per (dataset, model, metric, entry, name)."""
    keys = ["dataset", "model", "reference", "metric", "entry", "name"]
    d = df.copy()
    d["reference"] = d["reference"].fillna("")
    g = d.groupby(keys, sort=True)["value"]
    return g.agg(mean="mean", std="std", n_seeds="count").reset_index()


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

    df = collect_scores(records)
    with atomic_path(scores) as tmp:
        df.to_csv(tmp, index=False)
    with atomic_path(summary) as tmp:
        seed_summary(df).to_csv(tmp, index=False)
    write_text(headline, headline_scores(df).to_csv(index=False))
    write_text(headline_markdown, markdown(headline_table(df), full_table=Path(scores).name))
    return df
