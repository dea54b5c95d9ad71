"""A second annotator on a run's samples: r(z) per bin of both, agreement, AUPR of each."""

from genmetrics.runlog import log_to
from genmetrics.studies.omniinput_compare.jobs import variance_job

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    summary = variance_job(dict(sm.input.items()), sm.params.settings, dict(sm.output.items()))
    log.info("annotation variance: %s", summary)
