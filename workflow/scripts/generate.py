"""Generate continuations for one shard of a dataset's prompts with one model and seed, on the
model's backend (transformers or vLLM), resuming from the shard's progress log (finished
batches of an earlier attempt)."""

from genmetrics.devices import claim_gpus, gpus_requested
from genmetrics.generation import progress
from genmetrics.generation.vllm_backend import generate_shard_by_backend
from genmetrics.io import read_jsonl, write_json, write_jsonl
from genmetrics.provenance import DEFAULT_PACKAGES, record
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
claim_gpus(gpus_requested(sm.resources))  # a workstation: this job's own GPU(s)
with log_to(sm.log[0]) as log:
    rows, stats = generate_shard_by_backend(
        read_jsonl(sm.input.prompts, required=("id", "prompt")),
        sm.input.model,
        sm.params.settings,
        seed=int(sm.wildcards.seed),
        shard=int(sm.wildcards.shard),
        progress_path=sm.params.progress,
    )
    stats["provenance"] = record(
        config={
            "generation": sm.params.settings,
            "seed": int(sm.wildcards.seed),
            # the preset the model names (its values are in the settings; no param: the name
            # alone reruns nothing)
            "preset": sm.config["models"][sm.wildcards.model].get("preset"),
        },
        inputs={k: sm.input[k] for k in ("prompts", "model")},
        packages=(*DEFAULT_PACKAGES, "vllm"),  # vllm: where installed
    )
    write_jsonl(sm.output.texts, rows)
    write_json(sm.output.stats, stats)
    progress.drop(sm.params.progress)
    log.info("generation: %s", {k: v for k, v in stats.items() if k != "provenance"})
