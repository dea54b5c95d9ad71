"""Correlations between the scores across sources (per dataset and pooled), with bootstrap
intervals: the table of every pair and method, and the heatmap of the configured method."""

import pandas as pd

from genmetrics.analysis.correlation import correlation_table
from genmetrics.analysis.correlation_panels import heatmap_panels
from genmetrics.figures._style import entry_features
from genmetrics.figures.correlation import correlation_heatmap
from genmetrics.io import write_csv
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    df = pd.read_csv(sm.input[0])
    table = correlation_table(
        df, n_boot=sm.params.n_boot, seed=sm.params.seed, figure_values=sm.params.values
    )
    write_csv(sm.output.table, table)
    panels = heatmap_panels(table, sm.params.method, cluster=sm.params.cluster)
    correlation_heatmap(panels, sm.output.figure, features=entry_features(sm.config.get("metrics")))
    few = table[table["too_few"]]
    print(
        f"{len(table)} correlations ({table['scope'].nunique()} scopes); "
        f"{len(few)} with too few points"
    )
