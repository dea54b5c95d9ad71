"""Per-token surprisal of one source's texts under one evaluator LM (ragged NPZ, nats)."""

import os

# one BLAS/OpenMP thread pool of the size Snakemake gave this job, set before numpy/torch load
os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(snakemake.threads)  # noqa: F821

import torch

from genmetrics.features.surprisal import surprisal_texts
from genmetrics.io import ragged_to_arrays, read_texts, save_npz
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    torch.set_num_threads(sm.threads)
    s = sm.params.settings
    rows = read_texts(sm.input.texts)
    seqs = surprisal_texts(
        [r["text"] for r in rows],
        sm.input.model,
        prepend=s["prepend"],
        max_tokens=s["max_tokens"],
        batch_size=s["batch_size"],
        cache_dir=sm.params.cache,
        cache_key=f"{sm.wildcards.evaluator}:{s['checkpoint']}",
        progress=True,
    )
    offsets, values = ragged_to_arrays(seqs)
    save_npz(sm.output[0], ids=[r["id"] for r in rows], offsets=offsets, values=values)
    log.info("surprisal of %d texts, %d tokens", len(rows), len(values))
