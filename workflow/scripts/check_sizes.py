"""Fail right after cleaning if a metric entry needs more texts than the dataset kept."""

from genmetrics.clean import check_sizes
from genmetrics.io import read_json, write_json
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    n = read_json(sm.input[0])["output"]
    check_sizes(n, sm.params.requirements, sm.wildcards.dataset)
    write_json(sm.output[0], {"texts": n, "requirements": sm.params.requirements})
    log.info("%d texts: enough for every entry", n)
