"""Figure of P/R against N and k for every swept source."""

import pandas as pd

from genmetrics.analysis.distribution import sweep_means
from genmetrics.figures.precision_recall import sweep_figure
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    sweep_figure(sweep_means(pd.concat([pd.read_csv(p) for p in sm.input])), sm.output[0])
