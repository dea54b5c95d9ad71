"""Every judgment set's agreement with the humans in one table (CSV and markdown)."""

from genmetrics.agreement.jobs import summarise
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    summarise(dict(sm.input), sm.params.settings, sm.output.table, sm.output.markdown)
