"""Enumerate the toy's whole input space: exact ln ρ(z) and r(z) per bin."""

from genmetrics.omniinput.jobs import exact_toy
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    log.info("exact enumeration: %s", exact_toy(sm.input[0], sm.params.settings, sm.output[0]))
