"""Compute one metric entry for one (dataset, source) and write the score JSON."""

from threadpoolctl import threadpool_limits

from genmetrics.io import write_json
from genmetrics.runlog import log_to
from genmetrics.scoring import score_files

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log, threadpool_limits(sm.threads):
    rec = score_files(
        sm.params.metric, sm.input.candidate, sm.input.get("reference"), sm.params.params
    )
    rec = {
        "metric": rec["metric"],
        "variant": sm.wildcards.metric,
        "dataset": sm.wildcards.dataset,
        "source": sm.wildcards.source,
        "reference": sm.params.reference,
        **rec,
    }
    write_json(sm.output[0], rec)
    log.info("%s", rec["values"])
