"""Correlate each score with the mean length of the texts across sources (Shaib et al. (2024), §5)."""

import pandas as pd

from genmetrics.analysis.length import length_analysis
from genmetrics.figures.length import length_figure
from genmetrics.io import write_csv
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    corr, n_sources = length_analysis(pd.read_csv(sm.input[0]))
    write_csv(sm.output.table, corr, index=True)
    length_figure(corr, sm.output.figure, n_sources)
