"""Merge a model's generation shards into the dataset's prompt order and sum their statistics."""

from genmetrics.generation.transformers_backend import merge_shards
from genmetrics.generation.vllm_backend import merge_backends
from genmetrics.io import read_json, read_jsonl, write_json, write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    stats = [read_json(p) for p in sm.input.stats]
    rows, merged = merge_shards(
        [r["id"] for r in read_jsonl(sm.input.prompts, required=("id",))],
        [read_jsonl(p, required=("id", "prompt_id", "text")) for p in sm.input.texts],
        stats,
        samples_per_prompt=int(sm.params.samples_per_prompt),
    )
    merged["backend"] = merge_backends(stats)  # the engine that made the texts
    merged["provenance"] = [s.get("provenance") for s in stats]  # one per shard
    write_jsonl(sm.output.texts, rows)
    write_json(sm.output.stats, merged)
    log.info("merged %d texts from %d shards", merged["texts"], merged["shards"])
