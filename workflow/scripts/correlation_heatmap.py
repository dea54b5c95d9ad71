"""Heatmap of correlations between all configured scores across sources."""

import pandas as pd

from genmetrics.analysis.correlation import metric_correlation, wide_scores
from genmetrics.plots import correlation_heatmap
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    df = pd.read_csv(sm.input[0])
    corr = metric_correlation(df, sm.params.method)
    correlation_heatmap(corr, sm.output[0], sm.params.method, len(wide_scores(df)))
