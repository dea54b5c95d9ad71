"""Merge a model's generation shards (in prompt order) and sum their statistics."""

from genmetrics.io import read_json, read_jsonl, write_json, write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows = [r for path in sm.input.texts for r in read_jsonl(path, required=("id", "text"))]
    stats = [read_json(p) for p in sm.input.stats]
    seconds = sum(s["seconds"] for s in stats)
    tokens = sum(s["new_tokens"] for s in stats)
    write_jsonl(sm.output.texts, rows)
    write_json(
        sm.output.stats,
        {
            "texts": len(rows),
            "new_tokens": tokens,
            "seconds": seconds,
            "shards": len(stats),
            "tokens_per_second": tokens / max(seconds, 1e-9),
        },
    )
    log.info("merged %d texts from %d shards", len(rows), len(stats))
