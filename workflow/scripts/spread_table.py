"""Collect spread analyses into results/spread.csv (mean and std per vary mode and value)."""

import pandas as pd

from genmetrics.io import atomic_path, read_json
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    rows = []
    for p in sm.input:
        rec = read_json(p)
        for r in rec["rows"]:
            rows.append(
                {
                    "dataset": rec["dataset"],
                    "model": rec["model"],
                    "variant": rec["variant"],
                    "vary": r["vary"],
                    "name": r["value"],
                    "mean": r["mean"],
                    "std": r["std"],
                    "n_runs": r["n_runs"],
                }
            )
    with atomic_path(sm.output[0]) as tmp:
        pd.DataFrame(rows).to_csv(tmp, index=False)
