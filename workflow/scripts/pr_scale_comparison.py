"""The pr-scale study's tables: P and R per model size, their trend, the paper beside ours."""

import pandas as pd

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.distribution import sweep_means
from genmetrics.io import write_csv, write_text
from genmetrics.runlog import log_to
from genmetrics.studies.pr_scale.tables import (
    comparison,
    ours_table,
    size_series,
    size_trend,
    study_markdown,
)

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    series = size_series(read_scores(sm.input.scores))
    trend = size_trend(series)
    sweep = sweep_means(pd.concat([pd.read_csv(p) for p in sm.input.sweeps]))
    side = comparison(ours_table(pd.read_csv(sm.input.correlation), sweep))
    write_csv(sm.output.sizes, series)
    write_csv(sm.output.table, side)
    write_text(sm.output.markdown, study_markdown(side, series, trend, sweep))
    log.info("%d sizes, %d paper cells", len(series), len(side))
