"""Train a classifier run's classifier (bag of token ids over a tokenizer's vocabulary)."""

from genmetrics.runlog import log_to
from genmetrics.studies.omniinput_compare.jobs import train_classifier_job

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    report = train_classifier_job(sm.params.settings, sm.input.tokenizer, sm.output.weights)
    log.info("classifier: %s", report)
