"""One proposal kind (uniform, gradient, monte_carlo) on the toy at the configured budget."""

from genmetrics.omniinput.jobs import sample_toy
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    res = sample_toy(
        sm.input.model,
        sm.input.exact,
        sm.wildcards.proposal,
        sm.params.settings,
        sm.output[0],
        sm.params.checkpoint,
    )
    log.info(
        "%s: %d evaluations, %d bins reached", res.proposal, res.model_evaluations, res.bins_reached
    )
