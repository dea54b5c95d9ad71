"""OmniInput runs side by side: the score table and the PR curves per model."""

from genmetrics.omniinput.jobs import summarise_runs
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    summarise_runs(list(sm.input.scores), sm.output.table, sm.output.figure)
