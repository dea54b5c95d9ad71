"""Generate continuations for one shard of a dataset's prompts with one model and seed."""

from genmetrics.generation import generate_shard
from genmetrics.io import read_jsonl, write_json, write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows, stats = generate_shard(
        read_jsonl(sm.input.prompts, required=("id", "prompt")),
        sm.input.model,
        sm.params.settings,
        seed=int(sm.wildcards.seed),
        shard=int(sm.wildcards.shard),
        tokens_per_word_table=sm.input.tokens_per_word,
    )
    write_jsonl(sm.output.texts, rows)
    write_json(sm.output.stats, stats)
    log.info("generation: %s", stats)
