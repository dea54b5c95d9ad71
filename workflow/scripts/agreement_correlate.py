"""Correlations of a judged set's scores with its human criteria, and their heatmap."""

from genmetrics.agreement.jobs import correlate_set
from genmetrics.io import read_json
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rec = read_json(sm.input.record)
    title = f"{sm.wildcards.jset} ({rec['citation']})"
    out = sm.output
    corr = correlate_set(
        sm.params.settings, sm.input.scores, out.table, out.upstream, out.figure, title
    )
    log.info("%d correlations", len(corr))
