"""Precision and recall against the number of in-context examples (Le Bronnec et al. (2024),
Fig. 8), from the scores of a few-shot dataset's variants."""

import pandas as pd

from genmetrics.analysis.seed_means import few_shot_table
from genmetrics.figures.bars import few_shot_lines
from genmetrics.io import atomic_path
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    table = few_shot_table(pd.read_csv(sm.input[0]), dict(sm.params.variants))
    with atomic_path(sm.output.table) as tmp:
        table.to_csv(tmp, index=False)
    few_shot_lines(table, sm.output.figure)
    log.info("few-shot P/R: %d (dataset, n, entry, model, value) means", len(table))
