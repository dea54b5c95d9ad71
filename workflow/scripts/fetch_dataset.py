"""Fetch one dataset and write it as raw JSONL rows {id, text, labels...}."""

from genmetrics.data.datasets import load_dataset
from genmetrics.io import write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows = load_dataset(sm.wildcards.dataset, sm.params.spec)
    log.info("wrote %d raw texts", write_jsonl(sm.output[0], rows))
