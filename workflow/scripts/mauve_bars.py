"""MAUVE per model with standard errors over seeds (Le Bronnec et al. (2024), Fig. B.2); the
whiskers: the seed summary's interval over prompts and seeds where it has one."""

import pandas as pd

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.seed_means import seed_means
from genmetrics.figures._style import entry_features
from genmetrics.figures.bars import panel_sizes, value_bars
from genmetrics.io import write_csv
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    summary = pd.read_csv(sm.input.summary)
    scores = read_scores(sm.input.scores)
    table = seed_means(scores, ["mauve"], ["mauve", "mauve_star"], summary)
    write_csv(sm.output.table, table)
    features = entry_features(sm.config.get("metrics"))
    value_bars(table, sm.output.figure, "mauve", features, panel_sizes(scores))
    log.info("MAUVE bars: %d (dataset, entry, reference, model) means", len(table))
