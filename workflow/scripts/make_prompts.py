"""Prompts: the first k words of each reference, rows of a prompt file, instructions, or
few-shot prompts (examples from the pool's references: another dataset's, or these)."""

from genmetrics.data.prompts import build_prompts
from genmetrics.io import read_jsonl, write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    pool = [r for path in sm.input.pool for r in read_jsonl(path, required=("id", "text"))]
    rows = build_prompts(
        read_jsonl(sm.input.references, required=("id", "text")),
        sm.params.options,
        [r for path in sm.input.file for r in read_jsonl(path)] or None,
        file_name=",".join(sm.input.file),
        where=f"datasets.{sm.wildcards.dataset}.prompts",
        pool_rows=pool if sm.input.pool else None,
    )
    log.info("wrote %d prompts", write_jsonl(sm.output[0], rows))
