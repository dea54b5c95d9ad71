"""Item agreement and Bradley-Terry strengths of each metric on an A/B set, and the figure."""

from genmetrics.agreement.jobs import pairwise_set
from genmetrics.io import read_json
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    s = sm.params.settings
    title = f"{sm.wildcards.jset} ({read_json(sm.input.record)['citation']})"
    pairwise_set(s, s["path"], sm.input.scores, sm.output.table, sm.output.figure, title)
