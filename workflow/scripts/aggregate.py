"""Collect every score JSON into the tidy results/scores.csv and the per-model seed summary."""

from genmetrics.analysis.correlation import collect_scores, seed_summary
from genmetrics.io import atomic_path
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    df = collect_scores(sm.input)
    with atomic_path(sm.output.scores) as tmp:
        df.to_csv(tmp, index=False)
    with atomic_path(sm.output.summary) as tmp:
        seed_summary(df).to_csv(tmp, index=False)
    log.info("%d score rows from %d files", len(df), len(sm.input))
