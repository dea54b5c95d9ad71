"""Fetch one dataset and write it as raw JSONL rows {id, text, labels...}."""

from genmetrics.datasets import load_dataset
from genmetrics.io import write_jsonl
from genmetrics.runlog import log_to

with log_to(snakemake.log[0]) as log:  # noqa: F821
    rows = load_dataset(snakemake.wildcards.dataset, snakemake.params.spec)  # noqa: F821
    n = write_jsonl(snakemake.output[0], rows)  # noqa: F821
    log.info("wrote %d raw texts", n)
