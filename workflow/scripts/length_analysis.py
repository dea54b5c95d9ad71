"""Correlate each score with the mean length of the texts across sources (seed 002 §5)."""

import pandas as pd

from genmetrics.analysis.correlation import length_table
from genmetrics.analysis.length import length_correlation
from genmetrics.io import atomic_path
from genmetrics.plots import length_figure
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    table = length_table(pd.read_csv(sm.input[0]))
    if "mean_words" in table.columns:
        corr = length_correlation(table.reset_index(drop=True))
    else:
        corr = pd.DataFrame(columns=["pearson", "pearson_p", "spearman", "spearman_p", "n"])
    with atomic_path(sm.output.table) as tmp:
        corr.to_csv(tmp)
    length_figure(corr.dropna(subset=["spearman"]), sm.output.figure, len(table))
