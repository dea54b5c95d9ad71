"""MAUVE per model with standard errors over seeds (Le Bronnec et al. (2024), Fig. B.2)."""

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.seed_means import seed_means
from genmetrics.figures.bars import value_bars
from genmetrics.io import atomic_path
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    table = seed_means(read_scores(sm.input[0]), ["mauve"], ["mauve", "mauve_star"])
    with atomic_path(sm.output.table) as tmp:
        table.to_csv(tmp, index=False)
    value_bars(table, sm.output.figure, "mauve")
    log.info("MAUVE bars: %d (dataset, entry, reference, model) means", len(table))
