"""Merge a model's generation shards (in prompt order) and sum their statistics."""

from genmetrics.generation import merge_shards
from genmetrics.io import read_json, read_jsonl, write_json, write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows, stats = merge_shards(
        [read_jsonl(p, required=("id", "text")) for p in sm.input.texts],
        [read_json(p) for p in sm.input.stats],
    )
    write_jsonl(sm.output.texts, rows)
    write_json(sm.output.stats, stats)
    log.info("merged %d texts from %d shards", stats["texts"], stats["shards"])
