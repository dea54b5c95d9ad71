"""Fig. 7 of Le Bronnec et al. (2024) pooled as the paper pools: the correlation of P, R, MAUVE,
Self-BLEU and Distinct-4 across the (model, n) runs, with a bootstrap interval over runs."""

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.run_correlation import run_correlation, run_points
from genmetrics.io import write_csv
from genmetrics.runlog import log_to
from genmetrics.studies.pr_llm.side_by_side import FIG7_SCORES

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    points = run_points(read_scores(sm.input.scores), FIG7_SCORES, sm.params.variants)
    table = run_correlation(points, n_boot=sm.params.n_boot, seed=sm.params.seed)
    write_csv(sm.output.table, table)
    log.info("%d runs, %d correlations", len(points), len(table))
