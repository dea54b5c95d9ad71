"""Collect every score JSON into the tidy results/scores.csv, the per-model seed summary and the
headline table (results/scores_headline.{csv,md}, genmetrics.analysis.headline)."""

from genmetrics.analysis.correlation import collect_scores, seed_summary
from genmetrics.analysis.headline import headline_markdown, headline_scores, headline_table
from genmetrics.io import atomic_path, write_text
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    df = collect_scores(sm.input)
    with atomic_path(sm.output.scores) as tmp:
        df.to_csv(tmp, index=False)
    with atomic_path(sm.output.summary) as tmp:
        seed_summary(df).to_csv(tmp, index=False)
    write_text(sm.output.headline, headline_scores(df).to_csv(index=False))
    write_text(sm.output.headline_markdown, headline_markdown(headline_table(df)))
    log.info("%d score rows from %d files", len(df), len(sm.input))
