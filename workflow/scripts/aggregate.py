"""Collect every score JSON into the tidy results/scores.csv, the per-model seed summary and the
headline table (results/scores_headline.{csv,md}): genmetrics.analysis.aggregate."""

from genmetrics.analysis.aggregate import write_aggregates
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    df = write_aggregates(
        sm.input,
        scores=sm.output.scores,
        summary=sm.output.summary,
        headline=sm.output.headline,
        headline_markdown=sm.output.headline_markdown,
    )
    log.info("%d score rows from %d files", len(df), len(sm.input))
