"""Score every text of a judgment set with its metric entries (through the registry)."""

from genmetrics.agreement.jobs import score_set
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    s = sm.params.settings
    score_set(s, s["path"], sm.output.scores, sm.output.record)
