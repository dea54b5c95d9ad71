"""A single-page HTML report: headline score tables, figures and generation statistics."""

from genmetrics.report import write_html_report
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    write_html_report(
        sm.output[0],
        sm.input.scores,
        sm.input.figures,
        sm.input.stats,
        sm.input.summary,
        sm.input.headline,
    )
