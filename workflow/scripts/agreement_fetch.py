"""Make a judgment set's folder from its upstream sources (or the data mirror's copies)."""

from genmetrics.agreement.jobs import fetch_set
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    for path in fetch_set(sm.params.settings, sm.output[0], sm.wildcards.jset):
        log.info("agreement set %s: %s", sm.wildcards.jset, path)
