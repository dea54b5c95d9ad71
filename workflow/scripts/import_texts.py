"""Read existing texts as a model's "generations" (cleaned, filtered, resampled with the seed)."""

from genmetrics.data.datasets import import_texts
from genmetrics.io import read_texts, write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    refs = sm.input.get("references")
    ids = {r["id"] for r in read_texts(refs, allow_empty=True)} if refs else None
    apart = bool(sm.params.spec.get("exclude_references"))
    rows, stats = import_texts(
        sm.wildcards.model,
        sm.params.spec,
        int(sm.wildcards.seed),
        prompt_ids=None if apart else ids,
        exclude_prompt_ids=ids if apart else None,
    )
    write_jsonl(sm.output[0], rows)
    log.info("imported %d texts (%s)", len(rows), stats)
