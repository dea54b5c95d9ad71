"""Scores for the exported samples: a judge LM, a rule, or the raters' filled CSV."""

from genmetrics.omniinput.jobs import annotate_run
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    n = annotate_run(
        sm.input.result,
        sm.input.samples,
        sm.input.model,
        sm.params.annotator,
        sm.output[0],
        judge=sm.input.get("judge"),
        scores_csv=sm.input.get("scores"),
    )
    log.info("%d samples scored (%s)", n, sm.params.annotator["kind"])
