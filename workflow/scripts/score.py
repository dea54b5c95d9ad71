"""Compute one metric entry for one (dataset, source) and write the score JSON."""

from genmetrics.io import write_json
from genmetrics.plan import score_entry
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rec = score_entry(
        sm.params.settings,
        entry=sm.wildcards.entry,
        dataset=sm.wildcards.dataset,
        source=sm.wildcards.source,
        candidate=sm.input.candidate,
        reference=sm.input.get("reference"),
        group=sm.input.get("group", []),
    )
    write_json(sm.output[0], rec)
    log.info("%s", rec["values"])
