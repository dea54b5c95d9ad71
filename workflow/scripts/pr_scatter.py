"""Precision–recall scatter of every model (seeds as dots)."""

import pandas as pd

from genmetrics.plots import pr_scatter
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    pr_scatter(pd.read_csv(sm.input[0]), sm.output[0])
