"""The representative inputs of each bin as a CSV for raters (fill the score column)."""

from genmetrics.omniinput.jobs import export_run
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    log.info("%d samples exported", export_run(sm.input.result, sm.input.model, sm.output[0]))
