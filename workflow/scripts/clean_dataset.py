"""Clean a raw dataset (normalise, dedupe, length filters, truncation, seeded sample)."""

from genmetrics.data.clean import clean_rows
from genmetrics.io import read_jsonl, write_json, write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows = read_jsonl(sm.input[0], required=("id", "text"))
    kept, stats = clean_rows(rows, sm.params.options, where=f"datasets.{sm.wildcards.dataset}")
    write_jsonl(sm.output.texts, kept)
    write_json(sm.output.stats, stats)
    log.info("cleaning: %s", stats)
