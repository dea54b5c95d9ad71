"""Paired differences between models from the score records (genmetrics.analysis.paired)."""

from genmetrics.analysis.paired import paired_differences
from genmetrics.io import write_csv
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    write_csv(sm.output[0], paired_differences(sm.input))
