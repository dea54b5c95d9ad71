"""Train a classifier run's classifier (bag of token ids over a tokenizer's vocabulary)."""

from genmetrics.omniinput.study_jobs import train_classifier_job
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    report = train_classifier_job(sm.params.settings, sm.input.tokenizer, sm.output.weights)
    log.info("classifier: %s", report)
