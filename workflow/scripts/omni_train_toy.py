"""Train the OmniInput toy: a tiny GPT-2 on digit sequences whose digit sum is divisible by m."""

from genmetrics.omniinput.jobs import train_toy
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    out = train_toy(sm.params.settings, sm.output[0])
    log.info("digit toy trained: final loss %.4f", out["final_loss"])
