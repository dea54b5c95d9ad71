"""The one-page summary: headline score tables, generation statistics and every figure under
its caption (the same workflow/report/*.rst files as the Snakemake report)."""

from genmetrics.report.html import write_html_report
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
        captions=sm.input.captions,
        paired_csv=sm.input.paired,
        sample_size_csv=sm.input.sample_size,
    )
