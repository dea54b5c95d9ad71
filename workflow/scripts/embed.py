"""Embed one source's texts with one featurizer (cached by content)."""

import os

# one BLAS/OpenMP thread pool of the size Snakemake gave this job, set before numpy/torch load
os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(snakemake.threads)  # noqa: F821

import torch

from genmetrics.features.embed import embed_texts
from genmetrics.io import read_texts, save_npz
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    torch.set_num_threads(sm.threads)
    s = sm.params.settings
    rows = read_texts(sm.input.texts)
    emb = embed_texts(
        [r["text"] for r in rows],
        sm.input.model,
        kind=s["kind"],
        batch_size=s["batch_size"],
        max_tokens=s["max_tokens"],
        layer=s.get("layer", -1),
        cache_dir=sm.params.cache,
        cache_key=f"{sm.wildcards.featurizer}:{s['checkpoint']}",
        progress=True,
    )
    save_npz(sm.output[0], ids=[r["id"] for r in rows], emb=emb)
    log.info("embedded %d texts → %s", len(rows), emb.shape)
