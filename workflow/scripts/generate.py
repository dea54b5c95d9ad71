"""Generate continuations for one shard of a dataset's prompts with one model and seed."""

import os

# one BLAS/OpenMP thread pool of the size Snakemake gave this job, set before numpy/torch load
os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(snakemake.threads)  # noqa: F821

import torch

from genmetrics.generation import generate, shard_rows
from genmetrics.io import read_jsonl, write_json, write_jsonl
from genmetrics.models import load_causal_lm
from genmetrics.prompts import (
    DEFAULT_INSTRUCTION,
    load_tokens_per_word,
    max_new_tokens,
    tokens_per_word,
)
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    s = sm.params.settings
    torch.set_num_threads(sm.threads)
    shard, seed = int(sm.wildcards.shard), int(sm.wildcards.seed)
    prompts = shard_rows(
        read_jsonl(sm.input.prompts, required=("id", "prompt")), shard, s["shards"]
    )
    tpw = tokens_per_word(load_tokens_per_word(sm.input.tokens_per_word), s["tokenizer_family"])
    budget = max_new_tokens(s["words"], tpw, s["token_margin"])
    lm, tok = load_causal_lm(
        sm.input.model,
        dtype=s["dtype"],
        trust_remote_code=s["trust_remote_code"],
        device_map=s["device_map"],
    )
    log.info("%d prompts, %d words → max_new_tokens=%d", len(prompts), s["words"], budget)
    rows, stats = generate(
        lm,
        tok,
        prompts,
        template=s["template"],
        sampling=s["sampling"],
        words=s["words"],
        max_new_tokens=budget,
        seed=seed * 1000003 + shard,
        batch_size=s["batch_size"],
        instruction=s["instruction"] or DEFAULT_INSTRUCTION,
        continuation_mode=s["mode"],
    )
    write_jsonl(sm.output.texts, rows)
    write_json(sm.output.stats, {**stats, "texts": len(rows), "max_new_tokens": budget})
    log.info("generation: %s", stats)
