"""Models compared at one length: AUPR over sampler seeds and the mean PR curves."""

from genmetrics.runlog import log_to
from genmetrics.studies.omniinput_compare.jobs import compare_job

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows = compare_job(sm.params.settings, list(sm.input.scores), sm.output.table, sm.output.figure)
    log.info("comparison: %s", rows)
