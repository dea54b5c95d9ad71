"""The annotated density of states and its omniinput score record."""

from genmetrics.io import write_json
from genmetrics.omniinput.jobs import score_run
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rec = score_run(sm.input.result, sm.input.annotations, sm.params.direction, sm.output.density)
    write_json(sm.output.score, rec)
    log.info("omniinput: %s", rec["values"])
