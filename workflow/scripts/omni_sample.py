"""Wang–Landau over a model's input space (a GPU job; resumes from its checkpoint): an LM's
mean NLL, or a classifier run's logit."""

from genmetrics.devices import claim_gpus, gpus_requested
from genmetrics.omniinput.jobs import sample_run
from genmetrics.runlog import log_to
from genmetrics.studies.omniinput_compare.jobs import sample_classifier_run

sm = snakemake  # noqa: F821
claim_gpus(gpus_requested(sm.resources))  # a workstation: this job's own GPU(s)
with log_to(sm.log[0]) as log:
    classifier = dict(sm.input.items()).get("classifier")
    if classifier:
        res = sample_classifier_run(
            classifier, sm.params.settings, sm.output[0], sm.params.checkpoint
        )
    else:
        res = sample_run(sm.input.model, sm.params.settings, sm.output[0], sm.params.checkpoint)
    log.info(
        "%s: %d evaluations, %d bins reached, stopped: %s",
        res.proposal,
        res.model_evaluations,
        res.bins_reached,
        res.stopped,
    )
