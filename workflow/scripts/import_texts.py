"""Read existing texts as a model's "generations" (cleaned, filtered, resampled with the seed)."""

from genmetrics.clean import clean_rows
from genmetrics.datasets import load_dataset
from genmetrics.io import write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    spec = dict(sm.params.spec)
    key = f"models.{sm.wildcards.model}.texts"
    rows = load_dataset(sm.wildcards.model, spec, key=key)
    kept, stats = clean_rows(rows, spec.get("clean"), where=key)
    pid = spec.get("prompt_id_field")
    out = [
        {
            **r,
            "prompt_id": str(r[pid]) if pid else r["id"],
            "n_tokens": None,
            "finish_reason": "imported",
        }
        for r in kept
    ]
    write_jsonl(sm.output[0], out)
    log.info("imported %d texts (%s)", len(out), stats)
